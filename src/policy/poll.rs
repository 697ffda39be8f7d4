//! Submit-then-poll: the schedule of polls, what each poll's outcome
//! means, and the loop that asks, waits and stops ([`Poll`]).
//!
//! The submit is an ordinary non-idempotent request (retried only when
//! surely not sent) and is never repeated: a submitted task exists. Polls
//! are queries, safe to repeat, so gateway failures and network errors of
//! either stage just mean "ask again at the next tick". The interval is
//! phased: frequent while a quick answer is likely, sparser after.
//!
//! The submit and each status query are ordinary operations of the policy
//! (`engine::run`, under its budgets: `engine::poll::Role`); [`Poll`] is
//! what happens around them, as a machine: its performer (js/src/poll.js,
//! or a native test on virtual time) reports each event with the time and
//! does what the answer says — call a hook, set a timer, run a query — so
//! the loop lives in a module of its own, loaded at a first poll.

use alloc::vec::Vec;

use super::classify::Safety;
use super::number::floor_in;
use super::reason::Reason;
use super::schema::schema;
use super::schema::{Def, Kind, TIMER_MS};
use super::state::{Phase, WaitWhy};

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
    /// `policy.poll`'s spec, checked by the policy's module
    /// (`checkOptions("poll")`) when the poll is made. `status` and
    /// `verdict` are the hooks js/src/poll.js calls, as this read them.
    pub POLL, open: false;
    "phases": Kind::List(1, 100, &Kind::Object(&PHASE)), Def::None;
    "budgetMs": TIMER_MS, Def::None;
    "status": Kind::Defined, Def::Required;
    "verdict": Kind::Function, Def::None;
}

schema! {
    pub PHASE, open: false;
    "everyMs": TIMER_MS, Def::Required;
    "forMs": TIMER_MS, Def::None;
}

impl PollSchedule {
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

    /// A poll spec's schedule from the numbers the poll's module is given:
    /// `[budgetMs, (everyMs, forMs)…]`, NaN where absent, as the policy's
    /// module checked them ([`POLL`], `checkOptions("poll")`) and js/src/core.js
    /// lined them up. A NaN budget and no phase: the default's. Each phase
    /// lasts `forMs` after the one before it. `None` for numbers that are not
    /// such a spec.
    pub fn of(numbers: &[f64]) -> Option<PollSchedule> {
        let [budget, phases @ ..] = numbers else {
            return None;
        };
        let ms = |v: f64| floor_in(v, 0, MAX_MS);
        let mut schedule = PollSchedule::default();
        if !budget.is_nan() {
            schedule.budget_ms = ms(*budget)?;
        }
        if !phases.is_empty() {
            schedule.phases.clear();
        }
        let mut until = 0u64;
        for pair in phases.chunks(2) {
            let [every, lasts] = pair else {
                return None;
            };
            let until_ms = match lasts.is_nan() {
                true => None,
                false => {
                    until = until.saturating_add(ms(*lasts)?);
                    Some(until)
                }
            };
            schedule.phases.push(PollPhase { every_ms: ms(*every)?, until_ms });
        }
        Some(schedule)
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

/// A status query's method (with the submit's headers and signal: README
/// "Use").
pub const STATUS_METHOD: &str = "GET";

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

/// The largest epoch millisecond (or duration) a JS number holds exactly.
const MAX_MS: u64 = (1 << 53) - 1;


/// What a poll asks its performer to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing: the work in progress (the submit, a query) will report.
    Wait,
    /// Call the `status` hook with (a clone of) the submit's response;
    /// report what it answered (awaited, when a `Promise`) as
    /// [`Poll::found`], and a timer of `ms` as [`Poll::timer`].
    Find { ms: u64 },
    /// Set a timer of `ms` ([`Poll::timer`]).
    Sleep { ms: u64 },
    /// Run status query `poll`, one attempt within `left_ms`
    /// (`engine::poll::Role::Query`): its end is [`Poll::queried`], a
    /// query that cannot be made [`Poll::refused`]. Its attempts go into
    /// the report `offset_ms` after the operation's start.
    Query { poll: u32, left_ms: u64, offset_ms: u64 },
    /// Call the `verdict` hook with (a clone of) the last query's
    /// response; report its word as [`Poll::judged`], and a timer of `ms`
    /// as [`Poll::timer`].
    Judge { ms: u64 },
    /// The submit did not succeed: its own outcome is the operation's
    /// (its states were the subscriber's already).
    SubmitEnds,
    /// The poll ended.
    End(Ending),
}

/// How a poll ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    pub phase: Phase,
    pub reason: Reason,
    pub retry_at: Option<u64>,
    /// From the submit's start (time spent finding the status request
    /// aside).
    pub elapsed_ms: u64,
    /// The latest Retry-After seen (the outcome's `notBefore`).
    pub not_before: Option<u64>,
    /// The last query's response is the outcome's.
    pub response: bool,
    pub cause: Cause,
}

/// The cause an ending carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    None,
    /// What the `status` hook threw or rejected with, or what made the
    /// status request impossible (the query's throw).
    Error,
    /// The caller's abort reason.
    Abort,
}

/// What a status query ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Queried {
    /// The status of the response, when one arrived.
    pub status: Option<u16>,
    /// The query ended cancelled.
    pub cancelled: bool,
    /// The Retry-After it was answered with (epoch ms).
    pub not_before: Option<u64>,
    /// Its last attempt's status, when it made an attempt (`Some(None)`:
    /// one without a status).
    pub record: Option<Option<u16>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Submitting,
    Finding,
    Sleeping,
    Querying,
    Judging,
    Ended,
}

/// The loop of one submitted task, after its submit: find the status
/// request, then wait for each tick of the schedule (never sooner than a
/// Retry-After), query, judge, until the verdict is done or fatal, the
/// polling budget ends, or the caller cancels. The hooks' answers and the
/// budget's timer race: whichever is reported first counts.
#[derive(Debug, Clone)]
pub struct Poll {
    schedule: PollSchedule,
    find: bool,
    judge: bool,
    at: At,
    cancelled: bool,
    /// The submit's report: how long it took, its last status.
    submit_ms: u64,
    last_status: Option<u16>,
    not_before: Option<u64>,
    /// Polling began (epoch ms), and its budget ends.
    begin: u64,
    end: u64,
    /// When the last poll was due, from `begin`.
    last: u64,
    polls: u32,
    shown: Vec<Phase>,
}

impl Poll {
    /// `find`: `status` is a hook, called with the submit's response;
    /// `judge`: a `verdict` hook judges each response.
    pub fn new(schedule: PollSchedule, find: bool, judge: bool) -> Poll {
        Poll {
            schedule,
            find,
            judge,
            at: At::Submitting,
            cancelled: false,
            submit_ms: 0,
            last_status: None,
            not_before: None,
            begin: 0,
            end: 0,
            last: 0,
            polls: 0,
            shown: Vec::new(),
        }
    }

    /// The states a subscriber is told, in order, since last asked.
    pub fn shown(&mut self) -> Vec<Phase> {
        core::mem::take(&mut self.shown)
    }

    /// The submit ended (`succeeded` or not) after `elapsed_ms`, its last
    /// attempt with `last_status`, its Retry-After `not_before`.
    pub fn submitted(
        &mut self,
        succeeded: bool,
        elapsed_ms: u64,
        not_before: Option<u64>,
        last_status: Option<u16>,
        now: u64,
    ) -> Next {
        if self.at != At::Submitting {
            return Next::Wait;
        }
        (self.submit_ms, self.not_before, self.last_status) = (elapsed_ms, not_before, last_status);
        if !succeeded {
            self.at = At::Ended;
            return Next::SubmitEnds;
        }
        if !self.find {
            return self.begin(now);
        }
        if self.cancelled {
            return self.stop(Reason::Cancelled, Cause::Abort);
        }
        self.at = At::Finding;
        Next::Find { ms: self.schedule.budget_ms }
    }

    /// The `status` hook answered a status request (`ok`), or threw or
    /// rejected.
    pub fn found(&mut self, ok: bool, now: u64) -> Next {
        match (self.at, ok) {
            (At::Finding, true) => self.begin(now),
            (At::Finding, false) => self.stop(Reason::TaskFailed, Cause::Error),
            _ => Next::Wait,
        }
    }

    /// The timer of the last [`Next::Find`], [`Next::Sleep`] or
    /// [`Next::Judge`] fired.
    pub fn timer(&mut self, now: u64) -> Next {
        match self.at {
            At::Finding => self.stop(Reason::Deadline, Cause::None),
            At::Sleeping => self.query(now),
            At::Judging => self.finish(now, Reason::Deadline, None, false, Cause::None),
            _ => Next::Wait,
        }
    }

    /// The caller cancelled. The submit and a query follow the caller's
    /// signal themselves and report how they ended.
    pub fn cancel(&mut self, now: u64) -> Next {
        if self.at == At::Ended {
            return Next::Wait;
        }
        self.cancelled = true;
        match self.at {
            At::Finding => self.stop(Reason::Cancelled, Cause::Abort),
            At::Sleeping | At::Judging => self.finish(now, Reason::Cancelled, None, false, Cause::Abort),
            _ => Next::Wait,
        }
    }

    /// The status query ended.
    pub fn queried(&mut self, q: Queried, now: u64) -> Next {
        if self.at != At::Querying {
            return Next::Wait;
        }
        self.not_before = self.not_before.max(q.not_before);
        if let Some(status) = q.record {
            self.last_status = status;
        }
        let verdict = match q.status {
            Some(status) if gateway_failure(status) => PollVerdict::Transient,
            // The caller's hook is raced against the budget and the cancel:
            // a verdict that never comes must not hold the operation.
            Some(_) if self.judge => {
                let left = self.end.saturating_sub(now);
                if self.cancelled {
                    return self.finish(now, Reason::Cancelled, None, false, Cause::Abort);
                }
                if left == 0 {
                    return self.finish(now, Reason::Deadline, None, false, Cause::None);
                }
                self.at = At::Judging;
                return Next::Judge { ms: left };
            }
            Some(status) => default_verdict(status),
            None if q.cancelled => return self.finish(now, Reason::Cancelled, None, false, Cause::Abort),
            None => PollVerdict::Transient,
        };
        self.apply(verdict, now)
    }

    /// The status query could not be made (it threw).
    pub fn refused(&mut self, now: u64) -> Next {
        match self.at {
            At::Querying => self.finish(now, Reason::TaskFailed, None, false, Cause::Error),
            _ => Next::Wait,
        }
    }

    /// The `verdict` hook answered `verdict` (`None`: it threw, rejected,
    /// or answered anything but one of the four words: `fatal`, for a
    /// poll loop must never spin on a verdict nobody can read).
    pub fn judged(&mut self, verdict: Option<PollVerdict>, now: u64) -> Next {
        match self.at {
            At::Judging => self.apply(verdict.unwrap_or(PollVerdict::Fatal), now),
            _ => Next::Wait,
        }
    }

    fn apply(&mut self, verdict: PollVerdict, now: u64) -> Next {
        match verdict {
            PollVerdict::Done => self.finish(now, Reason::Succeeded, None, true, Cause::None),
            PollVerdict::Fatal => self.finish(now, Reason::TaskFailed, None, true, Cause::None),
            PollVerdict::Pending | PollVerdict::Transient => self.next(now),
        }
    }

    /// Polling begins: its budget counts from here.
    fn begin(&mut self, now: u64) -> Next {
        self.begin = now;
        self.end = now.saturating_add(self.schedule.budget_ms);
        self.next(now)
    }

    /// The wait for the next tick, or the end when none fits the budget.
    fn next(&mut self, now: u64) -> Next {
        let Some(next) = self.schedule.next(self.last) else {
            return self.finish(now, Reason::Deadline, None, false, Cause::None);
        };
        // Never sooner than a Retry-After a poll was answered with; the
        // schedule then continues from there.
        let until = self.begin.saturating_add(next).max(self.not_before.unwrap_or(0));
        self.last = until.saturating_sub(self.begin);
        if until >= self.end {
            let retry_at = self.not_before.filter(|&at| at >= self.end);
            let reason = if retry_at.is_some() { Reason::WaitExceedsBudget } else { Reason::Deadline };
            return self.finish(now, reason, retry_at, false, Cause::None);
        }
        self.polls = self.polls.saturating_add(1);
        let wait_ms = until.saturating_sub(now);
        self.shown.push(Phase::Waiting { attempt: self.polls, until_ms: until, wait_ms, why: WaitWhy::Poll });
        if self.cancelled {
            return self.finish(now, Reason::Cancelled, None, false, Cause::Abort);
        }
        if wait_ms == 0 {
            return self.query(now);
        }
        self.at = At::Sleeping;
        Next::Sleep { ms: wait_ms }
    }

    fn query(&mut self, now: u64) -> Next {
        self.at = At::Querying;
        let start = self.begin.saturating_sub(self.submit_ms);
        Next::Query { poll: self.polls, left_ms: self.end.saturating_sub(now), offset_ms: now.saturating_sub(start) }
    }

    /// Ends the poll; its report continues the submit's.
    fn finish(&mut self, now: u64, reason: Reason, retry_at: Option<u64>, response: bool, cause: Cause) -> Next {
        let start = self.begin.saturating_sub(self.submit_ms);
        let phase = Phase::terminal(reason, retry_at, Safety::Idempotent, self.last_status);
        self.end_with(Ending { response, cause, ..self.ending(phase, reason, retry_at, now.saturating_sub(start)) })
    }

    /// Ends the poll before polling began: the submit's report, with
    /// `reason`.
    fn stop(&mut self, reason: Reason, cause: Cause) -> Next {
        let phase = Phase::terminal(reason, None, Safety::Idempotent, None);
        self.end_with(Ending { cause, ..self.ending(phase, reason, None, self.submit_ms) })
    }

    fn end_with(&mut self, ending: Ending) -> Next {
        self.at = At::Ended;
        self.shown.push(ending.phase);
        Next::End(ending)
    }

    fn ending(&self, phase: Phase, reason: Reason, retry_at: Option<u64>, elapsed_ms: u64) -> Ending {
        let not_before = self.not_before;
        Ending { phase, reason, retry_at, elapsed_ms, not_before, response: false, cause: Cause::None }
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

    const T0: u64 = 1_000_000;

    /// Every 100 ms, within 1 s.
    fn schedule() -> PollSchedule {
        PollSchedule { phases: alloc::vec![PollPhase { every_ms: 100, until_ms: None }], budget_ms: 1000 }
    }

    /// A poll whose submit succeeded at `T0` after 40 ms.
    fn submitted(find: bool, judge: bool) -> (Poll, Next) {
        let mut p = Poll::new(schedule(), find, judge);
        let next = p.submitted(true, 40, None, Some(202), T0);
        (p, next)
    }

    fn ended(next: Next) -> Ending {
        match next {
            Next::End(e) => e,
            other => panic!("expected the end, got {other:?}"),
        }
    }

    fn names(p: &mut Poll) -> Vec<&'static str> {
        p.shown().iter().map(Phase::name).collect()
    }

    fn answered(status: u16) -> Queried {
        Queried { status: Some(status), record: Some(Some(status)), ..Queried::default() }
    }

    #[test]
    fn a_schedule_is_read_with_the_defaults_where_the_spec_gave_none_each_phase_after_the_last_and_anything_else_reads_as_none() {
        let every = |every_ms, until_ms| PollPhase { every_ms, until_ms };
        let nan = f64::NAN;
        let given = PollSchedule { phases: alloc::vec![every(100, Some(500)), every(300, None)], budget_ms: 1000 };
        assert_eq!(PollSchedule::of(&[1000.0, 100.0, 500.0, 300.0, nan]), Some(given));
        let phased = alloc::vec![every(100, Some(500)), every(200, Some(800)), every(400, None)];
        let phased = PollSchedule { phases: phased, budget_ms: 1000 };
        assert_eq!(PollSchedule::of(&[1000.0, 100.0, 500.0, 200.0, 300.0, 400.0, nan]), Some(phased), "each phase lasts its forMs after the one before");
        assert_eq!(PollSchedule::of(&[nan]), Some(PollSchedule::default()));
        let budget = PollSchedule { budget_ms: 7000, ..PollSchedule::default() };
        assert_eq!(PollSchedule::of(&[7000.0]), Some(budget));
        assert_eq!(PollSchedule::of(&[]), None, "no budget");
        assert_eq!(PollSchedule::of(&[1000.0, 100.0]), None, "half a phase");
        assert_eq!(PollSchedule::of(&[-1.0, 100.0, nan]), None, "a budget out of range");
        assert_eq!(PollSchedule::of(&[1000.0, 1e300, nan]), None, "an interval out of range");
        assert_eq!(PollSchedule::of(&[1000.0, nan, nan]), None, "a phase without its interval");
    }

    #[test]
    fn a_submit_that_did_not_succeed_is_the_outcome_and_nothing_is_polled() {
        let mut p = Poll::new(schedule(), true, true);
        assert_eq!(p.submitted(false, 40, None, Some(503), T0), Next::SubmitEnds);
        assert!(p.shown().is_empty(), "the submit's own states were shown already");
        assert_eq!(p.timer(T0 + 100), Next::Wait, "nothing after");
    }

    #[test]
    fn without_a_status_hook_the_first_poll_waits_one_interval_then_queries_with_what_is_left() {
        let (mut p, next) = submitted(false, true);
        assert_eq!(next, Next::Sleep { ms: 100 });
        let shown = p.shown();
        let waiting = Phase::Waiting { attempt: 1, until_ms: T0 + 100, wait_ms: 100, why: WaitWhy::Poll };
        assert_eq!(shown, [waiting]);
        assert_eq!(p.timer(T0 + 100), Next::Query { poll: 1, left_ms: 900, offset_ms: 140 });
    }

    #[test]
    fn a_status_hook_is_raced_against_the_budget_and_the_cancel_and_a_throw_fails_the_task() {
        let (mut p, next) = submitted(true, true);
        assert_eq!(next, Next::Find { ms: 1000 });
        let e = ended(p.found(false, T0 + 5));
        assert_eq!((e.reason, e.cause, e.elapsed_ms, e.response), (Reason::TaskFailed, Cause::Error, 40, false));
        assert_eq!(names(&mut p), ["failed"]);
        let (mut p, _) = submitted(true, true);
        let e = ended(p.timer(T0 + 1000));
        assert_eq!((e.reason, e.phase.name(), e.elapsed_ms), (Reason::Deadline, "try-later", 40));
        let (mut p, _) = submitted(true, true);
        let e = ended(p.cancel(T0 + 10));
        assert_eq!((e.reason, e.cause), (Reason::Cancelled, Cause::Abort));
        assert_eq!(p.found(true, T0 + 20), Next::Wait, "an answer after the end is ignored");
    }

    #[test]
    fn polling_begins_when_the_status_hook_answers() {
        let (mut p, _) = submitted(true, true);
        assert_eq!(p.found(true, T0 + 300), Next::Sleep { ms: 100 });
        assert_eq!(p.timer(T0 + 400), Next::Query { poll: 1, left_ms: 900, offset_ms: 140 });
    }

    #[test]
    fn a_cancel_while_waiting_shows_the_wait_then_cancelled_and_carries_the_abort_reason() {
        let (mut p, _) = submitted(false, true);
        p.shown();
        let e = ended(p.cancel(T0 + 50));
        assert_eq!((e.reason, e.cause, e.elapsed_ms), (Reason::Cancelled, Cause::Abort, 90));
        assert_eq!(names(&mut p), ["cancelled"]);
        assert_eq!(p.timer(T0 + 100), Next::Wait, "the timer after the end is ignored");
    }

    #[test]
    fn a_cancel_during_a_query_waits_for_it_and_the_next_wait_ends_cancelled() {
        let (mut p, _) = submitted(false, false);
        p.timer(T0 + 100);
        assert_eq!(p.cancel(T0 + 120), Next::Wait, "the query follows the signal itself");
        let e = ended(p.queried(answered(202), T0 + 130));
        assert_eq!(e.reason, Reason::Cancelled);
        assert_eq!(names(&mut p), ["waiting", "waiting", "cancelled"], "the wait is shown, then the end");
        let (mut p, _) = submitted(false, false);
        p.timer(T0 + 100);
        let q = Queried { cancelled: true, record: Some(None), ..Queried::default() };
        assert_eq!(ended(p.queried(q, T0 + 110)).reason, Reason::Cancelled, "a query that ended cancelled");
    }

    #[test]
    fn a_gateway_failure_or_a_query_without_a_response_is_transient_and_polling_goes_on() {
        let (mut p, _) = submitted(false, true);
        p.timer(T0 + 100);
        assert_eq!(p.queried(answered(502), T0 + 110), Next::Sleep { ms: 90 }, "never judged: the next tick");
        p.timer(T0 + 200);
        let failed = Queried { record: Some(None), ..Queried::default() };
        assert_eq!(p.queried(failed, T0 + 210), Next::Sleep { ms: 90 });
        p.timer(T0 + 300);
        assert_eq!(p.queried(answered(202), T0 + 310), Next::Judge { ms: 690 }, "any other response is judged");
    }

    #[test]
    fn without_a_verdict_hook_202_is_pending_another_2xx_done_and_anything_else_fatal() {
        for (status, reason) in [(200, Reason::Succeeded), (409, Reason::TaskFailed)] {
            let (mut p, _) = submitted(false, false);
            p.timer(T0 + 100);
            let e = ended(p.queried(answered(status), T0 + 110));
            assert_eq!((e.reason, e.response, e.elapsed_ms), (reason, true, 150), "{status}");
        }
        let (mut p, _) = submitted(false, false);
        p.timer(T0 + 100);
        assert_eq!(p.queried(answered(202), T0 + 110), Next::Sleep { ms: 90 });
    }

    #[test]
    fn a_verdict_that_is_not_one_of_the_four_words_is_fatal_and_one_that_never_comes_ends_at_the_budget() {
        let (mut p, _) = submitted(false, true);
        p.timer(T0 + 100);
        p.queried(answered(200), T0 + 110);
        let e = ended(p.judged(None, T0 + 120));
        assert_eq!((e.reason, e.phase.name(), e.response), (Reason::TaskFailed, "failed", true));
        let (mut p, _) = submitted(false, true);
        p.timer(T0 + 100);
        p.queried(answered(200), T0 + 110);
        let e = ended(p.timer(T0 + 1000));
        assert_eq!((e.reason, e.phase.name(), e.response), (Reason::Deadline, "try-later", false));
        assert_eq!(p.judged(Some(PollVerdict::Done), T0 + 1001), Next::Wait, "a verdict after the end");
    }

    #[test]
    fn a_retry_after_beyond_the_budget_ends_wait_exceeds_budget_with_retry_at() {
        let (mut p, _) = submitted(false, true);
        p.timer(T0 + 100);
        let busy = Queried { not_before: Some(T0 + 5000), ..answered(503) };
        let e = ended(p.queried(busy, T0 + 110));
        assert_eq!((e.reason, e.retry_at, e.not_before), (Reason::WaitExceedsBudget, Some(T0 + 5000), Some(T0 + 5000)));
        assert_eq!(e.phase, Phase::TryLater { retry_at: Some(T0 + 5000), reason: Reason::WaitExceedsBudget });
    }

    #[test]
    fn a_status_request_that_cannot_be_made_fails_the_task_with_its_error() {
        let (mut p, _) = submitted(false, true);
        p.timer(T0 + 100);
        let e = ended(p.refused(T0 + 100));
        assert_eq!((e.reason, e.cause, e.response), (Reason::TaskFailed, Cause::Error, false));
    }

    #[test]
    fn a_task_failed_after_a_redirect_says_the_redirect_was_not_followed() {
        let (mut p, _) = submitted(false, false);
        p.timer(T0 + 100);
        let e = ended(p.queried(answered(302), T0 + 110));
        assert_eq!(e.phase, Phase::Failed { reason: Reason::TaskFailed, redirect: true });
    }
}
