//! Submit-then-poll: the schedule of polls and what each poll's outcome
//! means.
//!
//! The submit is an ordinary non-idempotent request (retried only when
//! surely not sent) and is never repeated: a submitted task exists. Polls
//! are queries, safe to repeat, so gateway failures and network errors of
//! either stage just mean "ask again at the next tick". The interval is
//! phased: frequent while a quick answer is likely, sparser after.

use alloc::vec::Vec;

use super::schema::{at, Def, Kind, Value, TIMER_MS};
use super::schema::schema;

/// One phase of the schedule: poll every `every_ms` until `until_ms` after
/// polling began (`None`: until the budget ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollPhase {
    pub every_ms: u64,
    pub until_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollSchedule {
    pub phases: Vec<PollPhase>,
    /// Polling's own budget, from its start.
    pub budget_ms: u64,
}

impl Default for PollSchedule {
    /// Every second for 30 s, then every 2 s, for at most 5 minutes.
    fn default() -> Self {
        PollSchedule {
            phases: alloc::vec![
                PollPhase { every_ms: 1000, until_ms: Some(30_000) },
                PollPhase { every_ms: 2000, until_ms: None },
            ],
            budget_ms: 300_000,
        }
    }
}

schema! {
    /// `policy.poll`'s spec. `status` and `verdict` are the executor's
    /// hooks: js/src/core.js reads them, once, and the host checks what it
    /// read (`schema::given`).
    pub POLL as Poll, open: false;
    Phases "phases": Kind::List(1, 100, &Kind::Object(&PHASE)), Def::None;
    BudgetMs "budgetMs": TIMER_MS, Def::None;
    Status "status": Kind::Glue(&Kind::Defined), Def::Required;
    Verdict "verdict": Kind::Glue(&Kind::Function), Def::None;
}

schema! {
    pub PHASE as Phase, open: false;
    EveryMs "everyMs": TIMER_MS, Def::Required;
    ForMs "forMs": TIMER_MS, Def::None;
}

impl PollSchedule {
    /// The schedule a spec sets, from what `schema::read` read of [`POLL`]
    /// (the default's phases and budget where it sets none). Each phase
    /// lasts `forMs` after the one before it.
    pub fn of<V>(values: &[Value<V>]) -> PollSchedule {
        let mut schedule = PollSchedule::default();
        if let Some(n) = at(values, Poll::BudgetMs).and_then(Value::int) {
            schedule.budget_ms = n;
        }
        if let Some(phases) = at(values, Poll::Phases).and_then(Value::items) {
            let mut until = 0u64;
            schedule.phases = Vec::with_capacity(phases.len());
            for p in phases.iter().filter_map(Value::fields) {
                let int = |f: Phase| at(p, f).and_then(Value::int);
                let until_ms = int(Phase::ForMs).map(|f| {
                    until = until.saturating_add(f);
                    until
                });
                // `everyMs` is required (`PHASE`).
                schedule.phases.push(PollPhase { every_ms: int(Phase::EveryMs).unwrap_or(1000), until_ms });
            }
        }
        schedule
    }

    /// The interval to wait when `elapsed_ms` have passed since polling
    /// began: the first phase that has not ended, else the last phase.
    pub fn interval(&self, elapsed_ms: u64) -> u64 {
        let current = self.phases.iter().find(|p| p.until_ms.is_none_or(|until| elapsed_ms < until));
        current.or(self.phases.last()).map_or(1000, |p| p.every_ms)
    }

    /// When the next poll starts (ms since polling began), or `None` when
    /// it would fall outside the budget.
    pub fn next(&self, last_ms: u64) -> Option<u64> {
        let at = last_ms.saturating_add(self.interval(last_ms));
        (at < self.budget_ms).then_some(at)
    }
}

/// What one poll found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollVerdict {
    Done,
    Pending,
    /// Ask again: a gateway hiccup, not the task's state.
    Transient,
    /// The task failed or was rejected: stop.
    Fatal,
}

impl PollVerdict {
    pub fn parse(name: &str) -> Option<PollVerdict> {
        match name {
            "done" => Some(PollVerdict::Done),
            "pending" => Some(PollVerdict::Pending),
            "transient" => Some(PollVerdict::Transient),
            "fatal" => Some(PollVerdict::Fatal),
            _ => None,
        }
    }
}

/// Polls answered by a gateway failure are transient whatever the caller's
/// hook would say: the answer did not come from the task.
pub fn gateway_failure(status: u16) -> bool {
    matches!(status, 502..=504)
}

/// The verdict when the caller gives no hook: 202 means "still working",
/// any other 2xx "done", anything else "fatal".
pub fn default_verdict(status: u16) -> PollVerdict {
    match status {
        202 => PollVerdict::Pending,
        200..=299 => PollVerdict::Done,
        _ => PollVerdict::Fatal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_schedule_polls_every_second_for_30_s_then_every_2_s() {
        let s = PollSchedule::default();
        let mut at = 0;
        let mut ticks = Vec::new();
        while let Some(next) = s.next(at) {
            ticks.push(next);
            at = next;
        }
        assert_eq!(&ticks[..31], &(1..=30).map(|k| k * 1000).chain([32_000]).collect::<Vec<_>>()[..]);
        assert_eq!(*ticks.last().unwrap(), 298_000);
        assert_eq!(ticks.len(), 30 + 134);
    }

    #[test]
    fn verdicts_parse_and_default() {
        assert_eq!(PollVerdict::parse("done"), Some(PollVerdict::Done));
        assert_eq!(PollVerdict::parse("later"), None);
        assert_eq!(default_verdict(202), PollVerdict::Pending);
        assert_eq!(default_verdict(200), PollVerdict::Done);
        assert_eq!(default_verdict(404), PollVerdict::Fatal);
        assert!(gateway_failure(502) && gateway_failure(504) && !gateway_failure(500));
    }
}
