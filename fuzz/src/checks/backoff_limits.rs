//! Backoff and the limits over raw `f64` bits and any integers: full jitter
//! stays inside its window, a bad `random()` is an error (never a wait), a
//! Retry-After floor is never shortened, and a fitted wait ends before the
//! deadline.

use saferetry::policy::backoff::{check_random, full_jitter, window};
use saferetry::policy::classify::WaitKind;
use saferetry::policy::limits::{fit, timer_ms, Backoff, Limits, Timer, Wait, MAX_TIMER_MS};

#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub retry: u32,
    pub backoff: Backoff,
    pub limits: Limits,
    /// `f64::from_bits` of this is the draw of `random()`.
    pub random_bits: u64,
    /// The Retry-After floor, for the `RetryAfter` wait kind.
    pub floor_ms: u64,
    pub now_ms: u64,
    pub deadline_ms: u64,
}

/// `min(cap, base * 2^(retry - 1))` in wide integers.
fn model_window(retry: u32, base: u64, cap: u64) -> u64 {
    let doublings = retry.saturating_sub(1);
    let grown = if base == 0 {
        0
    } else if doublings >= 64 {
        u128::MAX
    } else {
        u128::from(base) << doublings
    };
    u64::try_from(grown.min(u128::from(cap))).unwrap_or(u64::MAX)
}

pub fn check(c: Case) {
    let random = f64::from_bits(c.random_bits);
    let valid = (0.0..1.0).contains(&random);
    assert_eq!(check_random(random).is_ok(), valid, "{random}");
    let b = c.backoff;

    let w = window(c.retry, b.base_ms, b.cap_ms);
    assert_eq!(w, model_window(c.retry, b.base_ms, b.cap_ms));
    match full_jitter(c.retry, b.base_ms, b.cap_ms, random) {
        Ok(wait) => assert!(valid && (wait < w || wait == 0 && w == 0), "{wait} outside [0, {w})"),
        Err(_) => assert!(!valid, "{random} refused"),
    }

    let throttle_window = window(c.retry, b.throttle_base_ms, b.cap_ms.max(b.throttle_base_ms));
    for kind in [WaitKind::Backoff, WaitKind::Throttle, WaitKind::RetryAfter(c.floor_ms)] {
        let Ok(wait) = b.plan(kind, c.retry, random) else {
            assert!(!valid, "{kind:?}: {random} refused");
            continue;
        };
        assert!(valid, "{kind:?} planned with random {random}");
        match kind {
            WaitKind::Backoff => assert!(wait.floor_ms == 0 && (wait.ms < w || wait.ms == 0)),
            WaitKind::Throttle => {
                assert!(wait.floor_ms == 0 && (wait.ms < throttle_window || wait.ms == 0))
            }
            WaitKind::RetryAfter(floor) => {
                assert_eq!(wait.floor_ms, floor);
                assert!(wait.ms >= floor, "{wait:?} below the server's floor");
                let spread = if b.retry_after_spread { w.saturating_sub(1) } else { 0 };
                assert!(wait.ms <= floor.saturating_add(spread), "{wait:?} beyond floor + window");
            }
        }
        check_fit(wait, c.now_ms, c.deadline_ms);
    }

    let l = c.limits;
    assert_eq!(l.deadline(c.now_ms), c.now_ms.saturating_add(l.total_ms));
    match l.attempt_timer(c.now_ms, c.deadline_ms) {
        None => assert!(c.now_ms >= c.deadline_ms),
        Some((ms, timer)) => {
            let remaining = c.deadline_ms - c.now_ms;
            assert!(ms <= remaining && ms == l.attempt_ms.min(remaining), "{ms} of {remaining}");
            assert_eq!(timer == Timer::Attempt, l.attempt_ms < remaining);
        }
    }
    assert_eq!(l.may_attempt_again(c.retry), c.retry < l.max_attempts);
    assert!(timer_ms(c.floor_ms) <= MAX_TIMER_MS && timer_ms(c.floor_ms) <= c.floor_ms);
}

/// A fitted wait keeps the floor and ends strictly before the deadline; a
/// refused one really did not fit, and says when to come back.
fn check_fit(wait: Wait, now_ms: u64, deadline_ms: u64) {
    let remaining = deadline_ms.saturating_sub(now_ms);
    let must = if wait.floor_ms > 0 { wait.floor_ms } else { wait.ms };
    match fit(wait, now_ms, deadline_ms) {
        Ok(ms) => {
            assert!(ms >= wait.floor_ms, "{ms} shortens {wait:?}");
            assert!(ms <= wait.ms.max(wait.floor_ms));
            assert!(u128::from(now_ms) + u128::from(ms) < u128::from(deadline_ms));
        }
        Err(retry_at) => {
            assert!(must >= remaining, "{wait:?} fits in {remaining}");
            let expected = now_ms.checked_add(must).filter(|_| must != u64::MAX);
            assert_eq!(retry_at, expected);
        }
    }
}
