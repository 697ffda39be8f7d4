//! Start-rate limiting with GCRA (the generic cell rate algorithm).
//!
//! Starts are spaced evenly, one per `perMs / requests`, with a burst
//! allowance. A fixed window ("100 per minute") lets a client send ten
//! seconds' worth at once and then sit silent for fifty; GCRA never does.
//! Time is scaled by `requests` so the spacing is exact in integers (u64 is
//! enough: epoch ms × at most 10^6 requests stays below 2^64).

use core::cell::Cell;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateConfig {
    pub requests: u32,
    pub per_ms: u64,
    /// Starts allowed back to back before spacing applies (at least 1).
    pub burst: u32,
}

#[derive(Debug)]
pub struct Rate {
    config: RateConfig,
    /// Theoretical arrival time of the next start, in ms × `requests`.
    tat: Cell<u64>,
}

impl Rate {
    pub fn new(config: RateConfig) -> Rate {
        Rate { config, tat: Cell::new(0) }
    }

    fn scale(&self) -> u64 {
        u64::from(self.config.requests.max(1))
    }

    fn tolerance(&self) -> u64 {
        self.config.per_ms.saturating_mul(u64::from(self.config.burst.max(1) - 1))
    }

    /// Reserves the earliest start at or after `now_ms`. A start that would
    /// fall at or after `latest_ms` is not reserved: `Err(that start)`.
    pub fn reserve(&self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        let scale = self.scale();
        let now = now_ms.saturating_mul(scale);
        let tat = self.tat.get().max(now);
        let allowed = tat.saturating_sub(self.tolerance()).max(now);
        let start_ms = allowed.div_ceil(scale);
        if start_ms > now_ms && start_ms >= latest_ms {
            return Err(start_ms);
        }
        self.tat.set(tat.saturating_add(self.config.per_ms));
        Ok(start_ms)
    }

    /// Gives back the most recent reservation (a cancelled wait), so the
    /// next caller is not spaced behind a start that never happened.
    pub fn release(&self, start_ms: u64) {
        let tat = self.tat.get();
        let last_allowed = tat.saturating_sub(self.config.per_ms).saturating_sub(self.tolerance());
        if last_allowed.div_ceil(self.scale()) == start_ms {
            self.tat.set(tat - self.config.per_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
