//! The three limits that bound every logical operation, and the wait plan.
//!
//! `maxAttempts` counts the first request; `totalMs` covers everything
//! (requests, body reads, waits, queueing); `attemptMs` covers one request
//! *and its body read*, because a response whose body never ends is not a
//! success.

use super::backoff::{self, BadRandom};
use super::classify::WaitKind;

/// The largest delay a host timer accepts (`setTimeout` uses a signed 32-bit
/// millisecond count and fires at once beyond it).
pub const MAX_TIMER_MS: u64 = 2_147_483_647;

/// The largest request body kept for a re-send: by `host::replay` for a
/// `Request`'s body within an operation, and by the outbox for a write kept
/// to be sent later (`policy::outbox`).
pub const REPLAY_BYTES: u64 = 8 << 20;

/// Clamps a delay to what a host timer can represent.
pub fn timer_ms(ms: u64) -> u64 {
    ms.min(MAX_TIMER_MS)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_attempts: u32,
    pub total_ms: u64,
    pub attempt_ms: u64,
}

/// Which of our own timers bounds the attempt about to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    Attempt,
    Deadline,
}

impl Limits {
    /// The operation's deadline, from its start.
    pub fn deadline(&self, start_ms: u64) -> u64 {
        start_ms.saturating_add(self.total_ms)
    }

    /// How long the next attempt may run, and which limit that is.
    /// `None` when the deadline has already passed.
    pub fn attempt_timer(&self, now_ms: u64, deadline_ms: u64) -> Option<(u64, Timer)> {
        let remaining = deadline_ms.checked_sub(now_ms).filter(|&r| r > 0)?;
        Some(if self.attempt_ms < remaining {
            (self.attempt_ms, Timer::Attempt)
        } else {
            (remaining, Timer::Deadline)
        })
    }

    pub fn may_attempt_again(&self, attempts_made: u32) -> bool {
        attempts_made < self.max_attempts
    }
}

/// The backoff parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base_ms: u64,
    pub cap_ms: u64,
    pub throttle_base_ms: u64,
    /// Add a full-jitter spread on top of a Retry-After floor.
    pub retry_after_spread: bool,
}

/// A planned wait: `floor_ms` is the part a server demanded (never
/// shortened), `ms` the whole wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    pub ms: u64,
    pub floor_ms: u64,
}

impl Backoff {
    /// The wait before retry number `retry` (1 for the first retry).
    pub fn plan(&self, kind: WaitKind, retry: u32, random: f64) -> Result<Wait, BadRandom> {
        let jitter = |base, cap| backoff::full_jitter(retry, base, cap, random);
        Ok(match kind {
            WaitKind::Backoff => Wait { ms: jitter(self.base_ms, self.cap_ms)?, floor_ms: 0 },
            WaitKind::Throttle => {
                // The cap never shrinks the throttling window below its base.
                let cap = self.cap_ms.max(self.throttle_base_ms);
                Wait { ms: jitter(self.throttle_base_ms, cap)?, floor_ms: 0 }
            }
            WaitKind::RetryAfter(floor_ms) => {
                let spread = if self.retry_after_spread {
                    jitter(self.base_ms, self.cap_ms)?
                } else {
                    backoff::check_random(random)?;
                    0
                };
                Wait { ms: floor_ms.saturating_add(spread), floor_ms }
            }
        })
    }
}

/// Fits a wait into what is left before the deadline. The server's floor
/// must fit entirely (strictly before the deadline, so an attempt can still
/// run); our own jitter may be trimmed, never below the floor. A wait that
/// does not fit returns `Err(retry_at)`: when the server (or our backoff)
/// would next allow a request, `None` when unknown.
pub fn fit(wait: Wait, now_ms: u64, deadline_ms: u64) -> Result<u64, Option<u64>> {
    let remaining = deadline_ms.saturating_sub(now_ms);
    let must_wait = if wait.floor_ms > 0 { wait.floor_ms } else { wait.ms };
    if must_wait >= remaining {
        return Err(now_ms.checked_add(must_wait).filter(|_| must_wait != u64::MAX));
    }
    // `remaining > must_wait >= 0` here: the subtraction never saturates.
    Ok(wait.ms.min(remaining.saturating_sub(1)).max(wait.floor_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Backoff =
        Backoff { base_ms: 50, cap_ms: 200, throttle_base_ms: 1000, retry_after_spread: false };

    #[test]
    fn the_attempt_timer_is_the_smaller_of_attempt_ms_and_what_is_left() {
        let l = Limits { max_attempts: 3, total_ms: 4000, attempt_ms: 1000 };
        assert_eq!(l.attempt_timer(0, 4000), Some((1000, Timer::Attempt)));
        assert_eq!(l.attempt_timer(3500, 4000), Some((500, Timer::Deadline)));
        assert_eq!(l.attempt_timer(3000, 4000), Some((1000, Timer::Deadline)));
        assert_eq!(l.attempt_timer(4000, 4000), None);
        assert_eq!(l.attempt_timer(5000, 4000), None);
        assert_eq!(l.deadline(u64::MAX - 1), u64::MAX);
    }

    #[test]
    fn attempts_count_the_first_request() {
        let l = Limits { max_attempts: 3, total_ms: 1, attempt_ms: 1 };
        assert!(l.may_attempt_again(1) && l.may_attempt_again(2) && !l.may_attempt_again(3));
    }

    #[test]
    fn waits_follow_their_kind() {
        assert_eq!(B.plan(WaitKind::Backoff, 1, 0.5), Ok(Wait { ms: 25, floor_ms: 0 }));
        assert_eq!(B.plan(WaitKind::Throttle, 1, 0.5), Ok(Wait { ms: 500, floor_ms: 0 }));
        assert_eq!(B.plan(WaitKind::Throttle, 3, 0.5), Ok(Wait { ms: 500, floor_ms: 0 }));
        assert_eq!(B.plan(WaitKind::RetryAfter(1000), 1, 0.5), Ok(Wait { ms: 1000, floor_ms: 1000 }));
        let spread = Backoff { retry_after_spread: true, ..B };
        assert_eq!(spread.plan(WaitKind::RetryAfter(1000), 1, 0.5), Ok(Wait { ms: 1025, floor_ms: 1000 }));
        assert_eq!(
            spread.plan(WaitKind::RetryAfter(u64::MAX), 1, 0.5),
            Ok(Wait { ms: u64::MAX, floor_ms: u64::MAX })
        );
        assert_eq!(B.plan(WaitKind::RetryAfter(5), 1, 1.0), Err(BadRandom));
    }

    #[test]
    fn a_wait_that_does_not_fit_reports_when_to_try_again() {
        assert_eq!(fit(Wait { ms: 60_000, floor_ms: 60_000 }, 10, 1000), Err(Some(60_010)));
        assert_eq!(fit(Wait { ms: u64::MAX, floor_ms: u64::MAX }, 10, 1000), Err(None));
        assert_eq!(fit(Wait { ms: 990, floor_ms: 0 }, 10, 1000), Err(Some(1000)));
        assert_eq!(fit(Wait { ms: 989, floor_ms: 0 }, 10, 1000), Ok(989));
    }

    #[test]
    fn our_jitter_is_trimmed_to_fit_but_the_server_floor_never_is() {
        assert_eq!(fit(Wait { ms: 1025, floor_ms: 1000 }, 0, 1010), Ok(1009));
        assert_eq!(fit(Wait { ms: 1025, floor_ms: 1000 }, 0, 1000), Err(Some(1000)));
        assert_eq!(fit(Wait { ms: 0, floor_ms: 0 }, 0, 1), Ok(0));
    }

    #[test]
    fn timers_are_clamped_to_the_largest_host_delay() {
        assert_eq!(timer_ms(u64::MAX), 2_147_483_647);
        assert_eq!(timer_ms(5), 5);
    }
}
