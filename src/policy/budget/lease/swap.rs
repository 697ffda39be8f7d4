//! An authority kept in a store that only stores and compares: Redis (or
//! Valkey). Each exchange reads the saved state and the store's clock in
//! one round trip, runs the [`Authority`](super::Authority) on them (the
//! same code a Durable Object runs), and writes the new state back only if
//! the key still holds what was read (a compare-and-set); on a conflict it
//! waits a little and starts over. The rules below are that loop's only
//! decisions; the host (`host::redis`) performs the commands.
//!
//! # One clock
//!
//! Every grant is decided at the store's time, not the asking instance's:
//! two instances whose clocks differ share one schedule. The slots of a
//! grant are moments of that schedule; they are handed to the instance in
//! its own clock ([`StoreClock`]): shifted by how far its clock is from
//! the store's, estimated at the midpoint of a read's round trip (off by
//! at most half of it), the fastest read of the last [`KEEP_MS`]. So a
//! skewed instance starts its slots when the schedule says, not a skew
//! early or late, and skew does not widen the shared rate. Why the fastest
//! read, not the latest: a read that a stall held up (the answer waited
//! for the event loop) puts its midpoint up to half the stall late, and
//! shifts that grant's slots as much, on top of the next instance's
//! (measured on a loaded machine at 100 a second: 110 slots in one second
//! of the instances' clocks, for the schedule's 100).

use super::{FleetWindow, Grant};
use crate::policy::backoff::draw;

/// How long the fastest read stays the estimate (clocks drift apart by a
/// few ms in that time at most).
pub const KEEP_MS: u64 = 10_000;

/// Reads and writes an exchange tries before it gives up (the client then
/// reports the authority unreachable and falls back until it asks again).
pub const TRIES: u32 = 8;

/// How long to wait before try `tries + 1` after `tries` conflicts
/// (`random` in [0, 1)): full jitter over 2^tries ms, so instances that
/// collided spread out; `None` once [`TRIES`] have been made.
pub fn conflict_wait_ms(tries: u32, random: f64) -> Option<u64> {
    if tries >= TRIES {
        return None;
    }
    let span = 1u64.checked_shl(tries.min(10)).unwrap_or(1024);
    // A random that is not in [0, 1) waits nothing.
    Some(draw(span, random).unwrap_or(0))
}

/// The store's `TIME` reply (seconds, microseconds, as decimal text) in
/// epoch ms; `None` for anything else.
pub fn store_time_ms(seconds: &str, micros: &str) -> Option<u64> {
    let s: u64 = seconds.parse().ok()?;
    let us: u64 = micros.parse().ok()?;
    if us >= 1_000_000 {
        return None;
    }
    s.checked_mul(1000)?.checked_add(us / 1000).filter(|ms| *ms <= 9_007_199_254_740_991)
}

/// The store's clock as one instance sees it.
#[derive(Debug, Clone, Copy, Default)]
pub struct StoreClock {
    best: Option<Read>,
}

/// One read of the store's time: its round trip, when it came back, and
/// the moment of it in both clocks (the instance's at the midpoint).
#[derive(Debug, Clone, Copy)]
struct Read {
    rtt_ms: u64,
    back_ms: u64,
    local_ms: u64,
    store_ms: u64,
}

impl StoreClock {
    /// A read of the store's `TIME` (`store_ms`) sent at `sent_ms` and
    /// answered at `back_ms`, in this instance's clock. It becomes the
    /// estimate unless the one kept is faster and younger than `KEEP_MS`.
    pub fn observe(&mut self, store_ms: u64, sent_ms: u64, back_ms: u64) {
        let rtt_ms = back_ms.saturating_sub(sent_ms);
        let read = Read { rtt_ms, back_ms, local_ms: sent_ms.saturating_add(rtt_ms / 2), store_ms };
        let kept = self.best.filter(|b| b.rtt_ms < rtt_ms && back_ms.saturating_sub(b.back_ms) < KEEP_MS);
        self.best = Some(kept.unwrap_or(read));
    }

    /// `grant`'s slots, decided in the store's clock, in this instance's:
    /// shifted by the offset of the estimate (none before any read).
    /// So is the fleet's window's time to try again.
    pub fn local(&self, grant: Grant) -> Grant {
        let Some(read) = self.best else { return grant };
        let shift = |at: u64| match read.local_ms.checked_sub(read.store_ms) {
            Some(ahead) => at.saturating_add(ahead),
            None => at.saturating_sub(read.store_ms.saturating_sub(read.local_ms)),
        };
        let window = grant.window.map(|w| FleetWindow { retry_ms: shift(w.retry_ms), ..w });
        if grant.slots == 0 {
            return Grant { window, ..grant };
        }
        Grant { first_slot_ms: shift(grant.first_slot_ms), last_slot_ms: shift(grant.last_slot_ms), window, ..grant }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_wait_a_jittered_doubling_span_and_give_up_after_the_last_try() {
        assert_eq!(conflict_wait_ms(1, 0.99), Some(1));
        assert_eq!(conflict_wait_ms(3, 0.5), Some(4));
        assert_eq!(conflict_wait_ms(7, 0.999), Some(127));
        assert_eq!(conflict_wait_ms(TRIES, 0.0), None);
        assert_eq!(conflict_wait_ms(2, f64::NAN), Some(0), "a random that is not a number waits nothing");
    }

    #[test]
    fn the_store_time_is_read_in_ms_and_anything_else_is_refused() {
        assert_eq!(store_time_ms("1764700000", "123456"), Some(1_764_700_000_123));
        assert_eq!(store_time_ms("1764700000", "1000000"), None);
        assert_eq!(store_time_ms("-1", "0"), None);
        assert_eq!(store_time_ms("x", "0"), None);
        assert_eq!(store_time_ms("18446744073709551", "0"), None);
    }

    #[test]
    fn a_grants_slots_move_into_the_instances_clock_and_its_tokens_do_not() {
        let g = Grant { slots: 3, tokens: 5, first_slot_ms: 10_000, last_slot_ms: 10_200, ..Grant::default() };
        let read = |store, sent, back| {
            let mut c = StoreClock::default();
            c.observe(store, sent, back);
            c.local(g)
        };
        let ahead = read(9_000, 9_700, 9_710);
        assert_eq!((ahead.first_slot_ms, ahead.last_slot_ms, ahead.tokens), (10_705, 10_905, 5));
        let behind = read(9_000, 8_000, 8_020);
        assert_eq!((behind.first_slot_ms, behind.last_slot_ms), (9_010, 9_210));
        let none = Grant { slots: 0, ..g };
        let mut c = StoreClock::default();
        assert_eq!(c.local(g), g, "before any read: as decided");
        c.observe(9_000, 0, 0);
        assert_eq!(c.local(none), none, "no slots: as decided");
    }

    #[test]
    fn the_offset_is_the_fastest_recent_reads_not_that_of_one_a_stall_held_up() {
        let g = Grant { slots: 2, first_slot_ms: 20_000, last_slot_ms: 20_100, ..Grant::default() };
        let mut c = StoreClock::default();
        c.observe(10_000, 10_000, 10_002); // the same clock, a 2 ms read: 1 ms off
        assert_eq!(c.local(g).first_slot_ms, 20_001);
        // A read whose answer waited 300 ms for the event loop: its
        // midpoint is 150 ms late. The fast one stays the estimate.
        c.observe(11_000, 11_000, 11_300);
        assert_eq!(c.local(g).first_slot_ms, 20_001);
        c.observe(12_000, 12_000, 12_000);
        assert_eq!(c.local(g).first_slot_ms, 20_000, "a faster one replaces it");
        // Older than KEEP_MS: the latest read again (a clock that moved).
        c.observe(22_000, 22_500, 22_520);
        assert_eq!(c.local(g).first_slot_ms, 20_510);
    }
}
