//! The start slots a client holds: runs of the authority's GCRA schedule.
//!
//! A grant describes a run of `count` reservations by its first and last
//! start. The authority's starts in one run are `max(now, tat + i × step)`,
//! a convex sequence, so the straight line between the first and the last
//! (rounded up) is never before the real start of slot `i`: spending slot
//! `i` at `time_of(i)` never runs ahead of the authority's schedule.

use alloc::collections::VecDeque;

use super::Grant;

#[derive(Debug, Clone, Copy)]
struct Run {
    first_ms: u64,
    last_ms: u64,
    count: u32,
    /// Slots of the run this client may use (a prefix of `count`).
    usable: u32,
    used: u32,
    expires_ms: u64,
}

impl Run {
    /// `first + ⌈span × i / gaps⌉`, saturating, in u64: `span = q × gaps + r`
    /// with `r × i < 2⁶⁴` (u128 division would add 1 KB of wasm).
    fn time_of(&self, i: u32) -> u64 {
        let Some(gaps) = self.count.checked_sub(1).filter(|&g| g > 0) else { return self.first_ms };
        let (span, gaps, i) = (self.last_ms.saturating_sub(self.first_ms), u64::from(gaps), u64::from(i));
        let (q, r) = (span.checked_div(gaps).unwrap_or(0), span.checked_rem(gaps).unwrap_or(0));
        let offset = q.saturating_mul(i).saturating_add(r.saturating_mul(i).div_ceil(gaps));
        self.first_ms.saturating_add(offset)
    }

    fn left(&self) -> u32 {
        self.usable.saturating_sub(self.used)
    }

    /// How many of the usable slots fall before `at_ms` (slot times never
    /// decrease: a binary search).
    fn before(&self, at_ms: u64) -> u32 {
        let (mut lo, mut hi) = (0, self.usable);
        while lo < hi {
            // lo < hi, so mid is in lo+1..=hi: neither step can overflow.
            let mid = lo.saturating_add(hi.saturating_sub(lo).div_ceil(2));
            if self.time_of(mid.saturating_sub(1)) < at_ms {
                lo = mid;
            } else {
                hi = mid.saturating_sub(1);
            }
        }
        lo
    }
}

/// Held slots, oldest run first.
#[derive(Debug, Default)]
pub struct Slots {
    runs: VecDeque<Run>,
}

impl Slots {
    /// Keeps the usable slots of a grant (at most `asked`, each before
    /// `expires_ms`); the first `debt` of them repay starts made ahead.
    /// Returns the debt left.
    pub fn add(&mut self, grant: &Grant, asked: u32, expires_ms: u64, debt: u32) -> u32 {
        let mut run = Run {
            first_ms: grant.first_slot_ms,
            last_ms: grant.last_slot_ms.max(grant.first_slot_ms),
            count: grant.slots,
            usable: grant.slots.min(asked),
            used: 0,
            expires_ms,
        };
        // The longest prefix before expiry.
        run.usable = run.before(expires_ms);
        run.used = debt.min(run.usable);
        if run.left() > 0 {
            self.runs.push_back(run);
        }
        debt.saturating_sub(run.used)
    }

    /// Drops the runs that expired by `now_ms`; returns the slots lost.
    pub fn expire(&mut self, now_ms: u64) -> u32 {
        let mut lost = 0u32;
        self.runs.retain(|r| {
            let keep = r.expires_ms > now_ms && r.left() > 0;
            if !keep {
                lost = lost.saturating_add(r.left());
            }
            keep
        });
        lost
    }

    /// Drops the held slots more than `late_ms` behind `now_ms` when the
    /// next one is, and a slot was last taken (at `last_take_ms`) less
    /// than that slot's run spacing ago: slots let pass and now wanted
    /// faster than the schedule hands them out (see the client). Returns
    /// how many.
    pub fn drop_burst(&mut self, now_ms: u64, late_ms: u64, last_take_ms: Option<u64>) -> u32 {
        let behind = now_ms.saturating_sub(late_ms);
        let next = self.runs.iter().find(|r| r.left() > 0);
        let Some(run) = next.filter(|r| r.time_of(r.used) < behind) else { return 0 };
        let gaps = u64::from(run.count.saturating_sub(1).max(1));
        let spacing = run.last_ms.saturating_sub(run.first_ms).checked_div(gaps).unwrap_or(0);
        if last_take_ms.is_some_and(|t| now_ms.saturating_sub(t) < spacing) {
            self.drop_before(behind)
        } else {
            0
        }
    }

    /// Drops the held slots timed before `at_ms`; returns how many.
    pub fn drop_before(&mut self, at_ms: u64) -> u32 {
        let mut dropped = 0u32;
        for run in &mut self.runs {
            let behind = run.before(at_ms);
            dropped = dropped.saturating_add(behind.saturating_sub(run.used));
            run.used = run.used.max(behind);
        }
        self.runs.retain(|r| r.left() > 0);
        dropped
    }

    /// Slots held and not yet expired (call `expire` first).
    pub fn held(&self) -> u32 {
        self.runs.iter().fold(0u32, |n, r| n.saturating_add(r.left()))
    }

    /// Takes the earliest held slot for a start at or after `now_ms`:
    /// `None` when none is held, `Err(start)` (nothing taken) when its start
    /// would fall at or after `latest_ms`, as [`Rate::reserve`] does.
    ///
    /// [`Rate::reserve`]: crate::policy::budget::rate::Rate::reserve
    pub fn take(&mut self, now_ms: u64, latest_ms: u64) -> Option<Result<u64, u64>> {
        self.expire(now_ms);
        let run = self.runs.front_mut()?;
        let start = run.time_of(run.used).max(now_ms);
        if start > now_ms && start >= latest_ms {
            return Some(Err(start));
        }
        run.used = run.used.saturating_add(1);
        Some(Ok(start))
    }

    /// Gives back the slot taken last for `start_ms` (a start in the future
    /// that did not happen); false when no held slot was for that start.
    pub fn untake(&mut self, start_ms: u64) -> bool {
        let last = self.runs.iter_mut().find(|r| r.used > 0 && r.time_of(r.used.saturating_sub(1)) == start_ms);
        match last {
            Some(run) => {
                run.used = run.used.saturating_sub(1);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(slots: u32, first_slot_ms: u64, last_slot_ms: u64) -> Grant {
        Grant { slots, first_slot_ms, last_slot_ms, ..Grant::default() }
    }

    #[test]
    fn slots_are_spread_from_the_first_to_the_last_start_and_never_early() {
        let mut s = Slots::default();
        assert_eq!(s.add(&grant(4, 1000, 1100), 4, 5000, 0), 0);
        let starts: Vec<_> = (0..4).map(|_| s.take(1000, u64::MAX)).collect();
        assert_eq!(starts, [Some(Ok(1000)), Some(Ok(1034)), Some(Ok(1067)), Some(Ok(1100))]);
        assert_eq!(s.take(1000, u64::MAX), None);
    }

    #[test]
    fn debt_is_repaid_from_the_first_slots_and_slots_past_expiry_are_not_kept() {
        let mut s = Slots::default();
        assert_eq!(s.add(&grant(10, 0, 900), 10, 500, 2), 0);
        assert_eq!(s.held(), 3, "slots at 0..=400 usable, 2 of them repay the debt");
        assert_eq!(s.add(&grant(1, 0, 0), 1, 500, 7), 6);
        assert_eq!(s.expire(499), 0);
        assert_eq!(s.expire(500), 3);
        assert_eq!(s.held(), 0);
    }

    #[test]
    fn dropping_the_slots_before_a_time_skips_them_in_every_run_and_counts_them() {
        let mut s = Slots::default();
        s.add(&grant(4, 0, 300), 4, 10_000, 1);
        s.add(&grant(2, 400, 500), 2, 10_000, 0);
        assert_eq!(s.drop_before(250), 2, "100 and 200 (0 repaid a start made ahead)");
        assert_eq!((s.held(), s.take(0, u64::MAX)), (3, Some(Ok(300))));
        assert_eq!(s.drop_before(450), 1, "400");
        assert_eq!((s.drop_before(450), s.held()), (0, 1), "once");
        assert_eq!(s.drop_before(u64::MAX), 1);
        assert_eq!(s.take(0, u64::MAX), None);
    }

    #[test]
    fn slots_let_pass_are_dropped_when_wanted_faster_than_their_spacing_and_kept_for_a_slower_taker() {
        let mut s = Slots::default();
        s.add(&grant(5, 0, 400), 5, 10_000, 0);
        assert_eq!(s.drop_burst(350, 20, None), 0, "none taken yet");
        assert_eq!(s.drop_burst(350, 20, Some(100)), 0, "the last taken 250 ms ago: slower than the spacing, 100");
        assert_eq!(s.take(350, u64::MAX), Some(Ok(350)), "slot 0, late");
        assert_eq!(s.drop_burst(360, 20, Some(350)), 3, "10 ms later: 100, 200 and 300, more than 20 ms behind");
        assert_eq!(s.take(360, u64::MAX), Some(Ok(400)));
        s.add(&grant(3, 500, 520), 3, 10_000, 0);
        assert_eq!(s.drop_burst(515, 20, Some(514)), 0, "none more than 20 ms behind (the first run is spent)");
        assert_eq!(s.drop_burst(531, 20, Some(530)), 2, "500 and 510 (a run of 10 ms spacing)");
    }

    #[test]
    fn a_slot_past_the_deadline_is_refused_and_an_untaken_slot_is_held_again() {
        let mut s = Slots::default();
        s.add(&grant(2, 0, 1000), 2, 10_000, 0);
        assert_eq!(s.take(0, 500), Some(Ok(0)));
        assert_eq!(s.take(0, 500), Some(Err(1000)));
        assert_eq!(s.take(0, 5000), Some(Ok(1000)));
        assert!(s.untake(1000) && !s.untake(1000));
        assert_eq!(s.held(), 1);
    }

    #[test]
    fn a_slot_time_is_the_rounded_up_share_of_the_span_exactly_as_in_wide_arithmetic() {
        let wide = |r: &Run, i: u32| {
            let gaps = u128::from(r.count.saturating_sub(1).max(1));
            let span = u128::from(r.last_ms.saturating_sub(r.first_ms));
            let offset = if r.count < 2 { 0 } else { (span * u128::from(i)).div_ceil(gaps) };
            r.first_ms.saturating_add(u64::try_from(offset).unwrap_or(u64::MAX))
        };
        let spans = [0, 1, 2, 99, 100, 1001, u64::from(u32::MAX), u64::MAX / 3, u64::MAX - 1, u64::MAX];
        let counts = [0, 1, 2, 3, 4, 7, 1000, u32::MAX - 1, u32::MAX];
        for first_ms in [0, 5, u64::MAX - 10] {
            for span in spans {
                for count in counts {
                    let r = Run { first_ms, last_ms: first_ms.saturating_add(span), count, usable: 0, used: 0, expires_ms: 0 };
                    for i in [0, 1, 2, count / 2, count.saturating_sub(1), count, u32::MAX] {
                        assert_eq!(r.time_of(i), wide(&r, i), "first {first_ms}, span {span}, count {count}, slot {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn absurd_grants_neither_overflow_nor_panic() {
        let mut s = Slots::default();
        s.add(&grant(u32::MAX, u64::MAX - 1, 3), u32::MAX, u64::MAX, u32::MAX);
        s.add(&grant(u32::MAX, 0, u64::MAX), 3, u64::MAX, 0);
        s.add(&grant(u32::MAX, 10, 20), u32::MAX, 5, 0);
        assert_eq!(s.held(), 3);
        assert_eq!(s.take(u64::MAX - 1, u64::MAX), Some(Ok(u64::MAX - 1)));
    }
}
