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
//! its own clock ([`in_local_clock`]): shifted by how far its clock is from
//! the store's, estimated at the midpoint of the read's round trip (off by
//! at most half of it). So a skewed instance starts its slots when the
//! schedule says, not a skew early or late, and skew does not widen the
//! shared rate.

use super::Grant;
use crate::policy::backoff::draw;

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

/// `grant`, decided at the store's `store_ms`, in the clock of an instance
/// that sent the read at `sent_ms` and had its answer at `back_ms` (its
/// own clock): its slots shifted by that clock's offset from the store's.
pub fn in_local_clock(grant: Grant, store_ms: u64, sent_ms: u64, back_ms: u64) -> Grant {
    if grant.slots == 0 {
        return grant;
    }
    let local = sent_ms.saturating_add(back_ms.saturating_sub(sent_ms) / 2);
    let shift = |at: u64| match local.checked_sub(store_ms) {
        Some(ahead) => at.saturating_add(ahead),
        None => at.saturating_sub(store_ms.saturating_sub(local)),
    };
    Grant { first_slot_ms: shift(grant.first_slot_ms), last_slot_ms: shift(grant.last_slot_ms), ..grant }
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
        let ahead = in_local_clock(g, 9_000, 9_700, 9_710);
        assert_eq!((ahead.first_slot_ms, ahead.last_slot_ms, ahead.tokens), (10_705, 10_905, 5));
        let behind = in_local_clock(g, 9_000, 8_000, 8_020);
        assert_eq!((behind.first_slot_ms, behind.last_slot_ms), (9_010, 9_210));
        assert_eq!(in_local_clock(Grant { slots: 0, ..g }, 9_000, 0, 0), Grant { slots: 0, ..g }, "no slots: as decided");
    }
}
