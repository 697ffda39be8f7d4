//! Whether a retry the classifier allowed actually happens, and after what
//! wait: the request must be replayable, attempts must be left, the wait
//! must fit the deadline, and the shared quota must pay for it.

use super::backoff::BadRandom;
use super::budget::SharedState;
use super::classify::WaitKind;
use super::limits::{fit, Wait};
use super::options::Options;
use super::reason::Reason;

/// Everything known when a retry is being considered.
#[derive(Debug, Clone, Copy)]
pub struct RetryCase<'a> {
    pub options: &'a Options,
    pub kind: WaitKind,
    /// Attempts made so far (the retry about to be planned is number
    /// `attempts_made`).
    pub attempts_made: u32,
    pub now_ms: u64,
    pub deadline_ms: u64,
    pub body_replayable: bool,
    pub after_timeout: bool,
    pub random: f64,
}

/// A retry that will happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    pub wait_ms: u64,
    /// What the quota charged, refunded if the retry succeeds.
    pub cost: Option<u32>,
}

/// A retry that will not happen, and when trying again makes sense.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub reason: Reason,
    pub retry_at: Option<u64>,
}

impl Refused {
    fn new(reason: Reason, retry_at: Option<u64>) -> Refused {
        Refused { reason, retry_at }
    }
}

/// `quota` is `None` when the call opted out of the shared quota.
pub fn plan_retry(case: RetryCase, quota: Option<&dyn SharedState>) -> Result<Planned, Refused> {
    let floor_at = match case.kind {
        WaitKind::RetryAfter(ms) if ms != u64::MAX => case.now_ms.checked_add(ms),
        _ => None,
    };
    if !case.body_replayable {
        return Err(Refused::new(Reason::BodyNotReplayable, None));
    }
    if !case.options.limits.may_attempt_again(case.attempts_made) {
        return Err(Refused::new(Reason::AttemptsExhausted, floor_at));
    }
    let wait: Wait = case
        .options
        .backoff
        .plan(case.kind, case.attempts_made, case.random)
        .map_err(|BadRandom| Refused::new(Reason::InvalidRandom, None))?;
    let wait_ms = fit(wait, case.now_ms, case.deadline_ms)
        .map_err(|retry_at| Refused::new(Reason::WaitExceedsBudget, retry_at))?;
    let cost = match quota {
        Some(q) => match q.spend_retry(case.after_timeout) {
            Some(cost) => Some(cost),
            None => return Err(Refused::new(Reason::RetryQuotaExhausted, None)),
        },
        None => None,
    };
    Ok(Planned { wait_ms, cost })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::budget::quota::QuotaConfig;
    use crate::policy::budget::InMemory;

    fn case(options: &Options, kind: WaitKind, attempts_made: u32) -> RetryCase<'_> {
        RetryCase {
            options,
            kind,
            attempts_made,
            now_ms: 1_000,
            deadline_ms: 5_000,
            body_replayable: true,
            after_timeout: false,
            random: 0.5,
        }
    }

    #[test]
    fn checks_run_in_order_replayable_attempts_wait_quota() {
        let o = Options { quota: None, ..Options::default() };
        let state = InMemory::new(Some(QuotaConfig { capacity: 7, ..QuotaConfig::default() }), None);
        let q: Option<&dyn SharedState> = Some(&state);
        let stream = RetryCase { body_replayable: false, ..case(&o, WaitKind::Backoff, 3) };
        assert_eq!(plan_retry(stream, q).unwrap_err().reason, Reason::BodyNotReplayable);
        let exhausted = plan_retry(case(&o, WaitKind::RetryAfter(2_000), 3), q).unwrap_err();
        assert_eq!(exhausted, Refused::new(Reason::AttemptsExhausted, Some(3_000)));
        let far = plan_retry(case(&o, WaitKind::RetryAfter(60_000), 1), q).unwrap_err();
        assert_eq!(far, Refused::new(Reason::WaitExceedsBudget, Some(61_000)));
        assert_eq!(state.quota_level(), Some(7), "refused retries cost nothing");
        let bad = RetryCase { random: f64::NAN, ..case(&o, WaitKind::Backoff, 1) };
        assert_eq!(plan_retry(bad, q).unwrap_err().reason, Reason::InvalidRandom);
        let planned = plan_retry(case(&o, WaitKind::Backoff, 1), q);
        assert_eq!(planned, Ok(Planned { wait_ms: 50, cost: Some(5) }));
        let empty = plan_retry(case(&o, WaitKind::Backoff, 1), q).unwrap_err();
        assert_eq!(empty.reason, Reason::RetryQuotaExhausted);
        let opted_out = plan_retry(case(&o, WaitKind::Backoff, 1), None);
        assert_eq!(opted_out, Ok(Planned { wait_ms: 50, cost: None }));
    }

    #[test]
    fn a_retry_after_a_timeout_costs_more() {
        let o = Options::default();
        let state = InMemory::new(Some(QuotaConfig::default()), None);
        let timeout = RetryCase { after_timeout: true, ..case(&o, WaitKind::Backoff, 1) };
        assert_eq!(plan_retry(timeout, Some(&state)).unwrap().cost, Some(10));
        assert_eq!(state.quota_level(), Some(490));
    }
}
