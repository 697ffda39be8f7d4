//! Start-rate limiting with GCRA (the generic cell rate algorithm).
//!
//! Starts are spaced evenly, one per `perMs / requests`, with a burst
//! allowance. A fixed window ("100 per minute") lets a client send ten
//! seconds' worth at once and then sit silent for fifty; GCRA never does.
//!
//! Time is scaled by `requests` so the spacing is exact in integers. The
//! scaled values are `u128`: a `u64` clock times a `u32` count is below
//! 2^96, so no clock value, not even one past JavaScript's `Date` range,
//! can saturate the spacing away (in `u64`, epoch ms × 10^6 requests
//! overflowed from the year 2554).
//!
//! A release undoes exactly the most recent reservation, and only when its
//! start is the one given: the state is then what it was before that
//! reservation. Releasing anything else (a start never reserved, an older
//! one, the same one twice) changes nothing, so a misused release can never
//! wind the clock back past a start that is still going to happen.

use core::cell::Cell;
use serde::Serialize;

use crate::policy::number::ms;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RateConfig {
    pub requests: u32,
    #[serde(serialize_with = "ms")]
    pub per_ms: u64,
    /// Starts allowed back to back before spacing applies (at least 1).
    pub burst: u32,
}

/// The most recent reservation: its start and the arrival time before it.
#[derive(Debug, Clone, Copy)]
struct Last {
    start_ms: u64,
    tat_before: u128,
}

#[derive(Debug)]
pub struct Rate {
    config: RateConfig,
    /// Theoretical arrival time of the next start, in ms × `requests`.
    tat: Cell<u128>,
    last: Cell<Option<Last>>,
}

impl Rate {
    pub fn new(config: RateConfig) -> Rate {
        Rate { config, tat: Cell::new(0), last: Cell::new(None) }
    }

    fn scale(&self) -> u128 {
        u128::from(self.config.requests.max(1))
    }

    fn per(&self) -> u128 {
        u128::from(self.config.per_ms)
    }

    /// `per_ms × (burst - 1)`: below 2^96, exact.
    fn tolerance(&self) -> u128 {
        self.per().saturating_mul(u128::from(self.config.burst.saturating_sub(1)))
    }

    /// Reserves the earliest start at or after `now_ms`. A start that would
    /// fall at or after `latest_ms` is not reserved: `Err(that start)`
    /// (`u64::MAX` for a start beyond any clock).
    pub fn reserve(&self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        let scale = self.scale();
        let now = u128::from(now_ms).saturating_mul(scale);
        let tat = self.tat.get().max(now);
        let allowed = tat.saturating_sub(self.tolerance()).max(now);
        let start_ms = u64::try_from(div_ceil(allowed, self.config.requests)).map_err(|_| u64::MAX)?;
        if start_ms > now_ms && start_ms >= latest_ms {
            return Err(start_ms);
        }
        self.last.set(Some(Last { start_ms, tat_before: self.tat.get() }));
        self.tat.set(tat.saturating_add(self.per()));
        Ok(start_ms)
    }

    /// The schedule as epoch ms: the theoretical arrival time of the next
    /// start, rounded up (a restored schedule is never earlier).
    pub fn schedule_ms(&self) -> u64 {
        u64::try_from(div_ceil(self.tat.get(), self.config.requests)).unwrap_or(u64::MAX)
    }

    /// Back to a saved schedule (a restarted authority, or one whose rate
    /// changed: the schedule is kept in ms, whatever the new spacing).
    pub fn restore_schedule(&self, schedule_ms: u64) {
        self.tat.set(u128::from(schedule_ms).saturating_mul(self.scale()));
        self.last.set(None);
    }

    /// Gives back the most recent reservation (a cancelled wait), so the
    /// next caller is not spaced behind a start that never happened.
    pub fn release(&self, start_ms: u64) {
        if let Some(last) = self.last.get().filter(|last| last.start_ms == start_ms) {
            self.tat.set(last.tat_before);
            self.last.set(None);
        }
    }
}

/// `n ÷ max(d, 1)`, rounded up: `u128::div_ceil(n, scale)`, by long
/// division in 32-bit limbs on u64 (a u128 divisor pulls in a 1 KB
/// software division).
fn div_ceil(n: u128, d: u32) -> u128 {
    let d = u64::from(d.max(1));
    let (mut q, mut r) = (0u128, 0u64);
    for shift in [96, 64, 32, 0] {
        let limb = u64::try_from((n >> shift) & 0xffff_ffff).unwrap_or(0);
        // r < d ≤ 2³², so this fits.
        let part = (r << 32) | limb;
        q = (q << 32) | u128::from(part.checked_div(d).unwrap_or(0));
        r = part.checked_rem(d).unwrap_or(0);
    }
    q.saturating_add(u128::from(r > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limb_division_rounds_up_as_wide_division_does() {
        let ns = [0, 1, 2, 999, 1000, 1001, u128::from(u32::MAX), u128::from(u64::MAX), 1 << 96, (1 << 96) - 1, u128::MAX - 1, u128::MAX];
        let ds = [0, 1, 2, 3, 7, 1000, 1 << 31, u32::MAX - 1, u32::MAX];
        for n in ns.into_iter().chain(ns.iter().map(|n| n.wrapping_mul(0x9e37_79b9_7f4a_7c15))) {
            for d in ds {
                assert_eq!(div_ceil(n, d), n.div_ceil(u128::from(d.max(1))), "{n} / {d}");
            }
        }
    }

    #[test]
    fn ninety_per_minute_spaces_starts_two_thirds_of_a_second_apart() {
        let r = Rate::new(RateConfig { requests: 90, per_ms: 60_000, burst: 1 });
        let starts: Vec<u64> = (0..4).map(|_| r.reserve(0, u64::MAX).unwrap()).collect();
        assert_eq!(starts, [0, 667, 1334, 2000]);
    }

    #[test]
    fn a_burst_allowance_lets_that_many_start_at_once() {
        let r = Rate::new(RateConfig { requests: 1, per_ms: 1000, burst: 3 });
        let starts: Vec<u64> = (0..5).map(|_| r.reserve(10_000, u64::MAX).unwrap()).collect();
        assert_eq!(starts, [10_000, 10_000, 10_000, 11_000, 12_000]);
    }

    #[test]
    fn idle_time_does_not_accumulate_into_a_bigger_burst() {
        let r = Rate::new(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
        assert_eq!(r.reserve(0, u64::MAX), Ok(0));
        let later: Vec<u64> = (0..3).map(|_| r.reserve(60_000, u64::MAX).unwrap()).collect();
        assert_eq!(later, [60_000, 61_000, 62_000]);
    }

    #[test]
    fn a_start_past_the_deadline_is_refused_and_not_reserved() {
        let r = Rate::new(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
        assert_eq!(r.reserve(0, 500), Ok(0));
        assert_eq!(r.reserve(0, 500), Err(1000));
        assert_eq!(r.reserve(0, 5000), Ok(1000), "the refused start took no slot");
    }

    #[test]
    fn releasing_the_last_reservation_frees_its_slot() {
        let r = Rate::new(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
        assert_eq!(r.reserve(0, u64::MAX), Ok(0));
        assert_eq!(r.reserve(0, u64::MAX), Ok(1000));
        r.release(1000);
        assert_eq!(r.reserve(0, u64::MAX), Ok(1000));
        r.release(7); // not the last reservation: nothing changes
        assert_eq!(r.reserve(0, u64::MAX), Ok(2000));
    }

    #[test]
    fn releasing_a_start_that_is_not_the_last_reservation_changes_nothing() {
        // Found by fuzzing: the first two panicked (overflow checks) or, in
        // the shipped build, wrapped and pushed every later start ~584
        // million years ahead.
        type Steps = fn(&Rate);
        let table: &[(&str, Steps, u64)] = &[
            ("a start never reserved", |r| r.release(0), 0),
            (
                "an older start, after the last was released",
                |r| {
                    assert_eq!(r.reserve(500, u64::MAX), Ok(500));
                    r.release(500);
                    r.release(0);
                },
                0,
            ),
            (
                "the same start twice",
                |r| {
                    assert_eq!(r.reserve(0, u64::MAX), Ok(0));
                    assert_eq!(r.reserve(0, u64::MAX), Ok(1000));
                    r.release(1000);
                    r.release(1000);
                },
                1000,
            ),
            (
                "a start that did not wait, equal to the last one's unwaited slot",
                |r| {
                    assert_eq!(r.reserve(4000, u64::MAX), Ok(4000));
                    assert_eq!(r.reserve(5000, u64::MAX), Ok(5000));
                    r.release(4000);
                },
                6000,
            ),
        ];
        for &(what, steps, next) in table {
            let r = Rate::new(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
            steps(&r);
            assert_eq!(r.reserve(0, u64::MAX), Ok(next), "{what}");
        }
    }

    #[test]
    fn starts_stay_spaced_and_never_before_now_for_any_clock() {
        // Found by fuzzing: with 10^6 requests, epoch ms × requests
        // saturated u64 from the year 2554, and starts stopped being spaced
        // (or fell before `now`).
        let r = Rate::new(RateConfig { requests: 1_000_000, per_ms: 1_000_000, burst: 1 });
        let year_2554 = 18_446_744_073_710;
        let starts: Vec<u64> = (0..4).map(|_| r.reserve(year_2554, u64::MAX).unwrap()).collect();
        assert_eq!(starts, [0, 1, 2, 3].map(|k| year_2554 + k));
        let r = Rate::new(RateConfig { requests: 2, per_ms: 2_000, burst: 1 });
        let far = u64::MAX - 1;
        assert_eq!(r.reserve(far, u64::MAX), Ok(far));
        assert_eq!(r.reserve(far, u64::MAX), Err(u64::MAX), "a start beyond any clock is refused");
        let slow = Rate::new(RateConfig { requests: 1_000_000, per_ms: u64::MAX, burst: u32::MAX });
        assert_eq!(slow.reserve(u64::MAX, u64::MAX), Ok(u64::MAX));
        assert_eq!(slow.reserve(u64::MAX, u64::MAX), Ok(u64::MAX), "inside the burst");
    }
}
