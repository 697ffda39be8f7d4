//! A policy's link to its leased client when the two live in different
//! wasm modules: the policy and the engine in the page's module, the client
//! (this module's `client.rs`, the rules that spend grants, refill them
//! ahead of need and fall back) in the fleet's module, with the authority
//! (src/host/mod.rs, docs/fleet-budgets.md). A page that never shares a
//! budget loads none of the client.
//!
//! The engine calls its [`SharedState`](super::super::SharedState)
//! synchronously; across the two modules each call is one number in and
//! one number out, relayed by JavaScript (js/src/lease-relay.js), which decides
//! nothing: what crosses is written and read here, on both sides. And
//! until the client is there — its module loading, or failed to load — the
//! policy spends the budget [`unlinked`] says.

use super::super::quota::QuotaConfig;
use super::super::rate::RateConfig;
use super::super::Mode;
use crate::policy::backoff::BadRandom;
use crate::policy::number::integer_in;
use crate::policy::throttle::{Admit, ThrottleConfig};

// What the page's module asks its client (`leaseCall`'s `op`), and the
// numbers that go with it.
/// `spend_retry(a != 0)` → [`count`].
pub const SPEND: u32 = 0;
/// `on_success(count_back(a))`.
pub const SUCCESS: u32 = 1;
/// `quota_level()` → [`count`].
pub const LEVEL: u32 = 2;
/// `reserve_start(a, b)` → [`start`].
pub const RESERVE: u32 = 3;
/// `release_start(a)`.
pub const RELEASE_START: u32 = 4;
/// `keep_start(a, b)` → 1 or 0.
pub const KEEP: u32 = 5;
/// The client's mode → [`mode`].
pub const MODE: u32 = 6;
/// `admit(a, random)` → [`admitted`]: `b` is the random drawn, or
/// [`NO_RANDOM`] — the client then answers [`NO_RANDOM`] if it needs one,
/// and the page draws it and asks again (a healthy upstream's calls draw
/// nothing, as in memory).
pub const ADMIT: u32 = 7;
/// `sent(a)`.
pub const SENT: u32 = 8;
/// `answered(a, accepted, floor)`: `b` is [`start`] of `Ok(floor)` when
/// accepted, `Err(floor)` when not (no floor: 0).
pub const ANSWERED: u32 = 9;
/// No random drawn yet; one is needed.
pub const NO_RANDOM: f64 = -2.0;
// What it asks for as a JS value (`leaseValue`'s `op`): without a client,
// the answer is why its module could not load, or `undefined` while it
// loads.
/// `stats().shared`, without its scope.
pub const STATS: u32 = 0;
/// Gives every held token back: a promise of the answer.
pub const RELEASE: u32 = 1;
/// The policy is gone: so is its client (js/src/lease-relay.js knows this one).
pub const CLOSE: u32 = 2;

/// The longest time that crosses: 2^53 − 1 ms, what a JS number holds
/// exactly (an epoch time, or the engine's far deadline).
const SAFE: u64 = 9_007_199_254_740_991;

/// A count (a retry's cost, a level), or −1 for none.
pub fn count(value: Option<u32>) -> f64 {
    value.map_or(-1.0, f64::from)
}

/// [`count`] read back.
pub fn count_back(value: f64) -> Option<u32> {
    integer_in(value, 0, u64::from(u32::MAX)).and_then(|v| u32::try_from(v).ok())
}

/// A time in milliseconds (a start, the moment now) as it crosses.
pub fn ms(value: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // exact: at most 2^53 − 1
    let ms = value.min(SAFE) as f64;
    ms
}

/// [`ms`] read back (0 for what is not one).
pub fn ms_back(value: f64) -> u64 {
    integer_in(value, 0, SAFE).unwrap_or(0)
}

/// `reserve_start`'s answer: a start at `t` is `t`, a time to come back
/// at `t` is `−1 − t`.
pub fn start(answer: Result<u64, u64>) -> f64 {
    match answer {
        Ok(at) => ms(at),
        Err(at) => -1.0 - ms(at),
    }
}

/// [`start`] read back.
pub fn start_back(value: f64) -> Result<u64, u64> {
    if value < 0.0 {
        Err(ms_back(-1.0 - value))
    } else {
        Ok(ms_back(value))
    }
}

/// The client's mode, or −1 when it cannot say (a call made while it is busy).
pub fn mode(mode: Option<Mode>) -> f64 {
    match mode {
        None => -1.0,
        Some(Mode::Local) => 0.0,
        Some(Mode::Leased) => 1.0,
        Some(Mode::Fallback) => 2.0,
    }
}

/// [`mode`] read back.
pub fn mode_back(value: f64) -> Option<Mode> {
    [Mode::Local, Mode::Leased, Mode::Fallback].into_iter().zip([0.0, 1.0, 2.0]).find(|&(_, v)| v == value).map(|(m, _)| m)
}

/// `admit`'s answer: −1 to go, a rejection's `retry_at`, [`NO_RANDOM`]
/// (see [`ADMIT`]), −3 for a random out of range.
pub fn admitted(answer: Result<Admit, BadRandom>) -> f64 {
    match answer {
        Ok(Admit::Go) => -1.0,
        Ok(Admit::Reject { retry_at }) => ms(retry_at),
        Err(BadRandom) => -3.0,
    }
}

/// [`admitted`] read back.
pub fn admitted_back(value: f64) -> Result<Admit, BadRandom> {
    if value == -1.0 {
        Ok(Admit::Go)
    } else if value >= 0.0 {
        Ok(Admit::Reject { retry_at: ms_back(value) })
    } else {
        Err(BadRandom)
    }
}

/// What the client is made from: the policy's quota, start rate and
/// throttling, and the fleet's expected size. A quota of no capacity
/// cannot be kept, so a capacity of −1 says there is none; the same for a
/// rate of −1 requests and a throttle of `K` −1.
pub fn pack(
    quota: Option<QuotaConfig>,
    rate: Option<RateConfig>,
    throttle: Option<ThrottleConfig>,
    fleet_size: u32,
) -> [f64; 10] {
    let q = quota.map_or([-1.0, 0.0, 0.0, 0.0], |q| {
        [q.capacity, q.retry_cost, q.timeout_cost, q.success_refund].map(f64::from)
    });
    let r = rate.map_or([-1.0, 0.0, 0.0], |r| [f64::from(r.requests), ms(r.per_ms), f64::from(r.burst)]);
    let t = throttle.map_or([-1.0, 0.0], |t| [t.k, ms(t.window_ms)]);
    [f64::from(fleet_size), q[0], q[1], q[2], q[3], r[0], r[1], r[2], t[0], t[1]]
}

/// [`pack`]'s throttle read back.
pub fn unpack_throttle(packed: &[f64]) -> Option<ThrottleConfig> {
    let at = |i: usize| packed.get(i).copied().unwrap_or(-1.0);
    let k = Some(at(8)).filter(|k| *k >= 1.0)?;
    integer_in(at(9), 1, SAFE).map(|window_ms| ThrottleConfig { k, window_ms })
}

/// [`pack`] read back: `(quota, rate, fleet_size)` (the throttle: [`unpack_throttle`]).
pub fn unpack(packed: &[f64]) -> (Option<QuotaConfig>, Option<RateConfig>, u32) {
    let at = |i: usize| packed.get(i).copied().unwrap_or(-1.0);
    let small = |i: usize| count_back(at(i));
    let quota = match (small(1), small(2), small(3), small(4)) {
        (Some(capacity), Some(retry_cost), Some(timeout_cost), Some(success_refund)) => {
            Some(QuotaConfig { capacity, retry_cost, timeout_cost, success_refund })
        }
        _ => None,
    };
    let rate = match (small(5), integer_in(at(6), 0, SAFE), small(7)) {
        (Some(requests), Some(per_ms), Some(burst)) => Some(RateConfig { requests, per_ms, burst }),
        _ => None,
    };
    (quota, rate, small(0).unwrap_or(1))
}

/// Why a policy's client is not there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlinked {
    /// Its module is loading (in a browser: a second file to fetch).
    Loading,
    /// Its module could not be loaded (a bundle without it).
    Failed,
}

/// The start rate a client keeps without slots: its policy's rate divided
/// among `fleet_size` clients (the same count over `fleet_size` windows,
/// no burst).
pub fn local_rate(rate: Option<RateConfig>, fleet_size: u32) -> Option<RateConfig> {
    let fleet = u64::from(fleet_size.max(1));
    rate.map(|r| RateConfig { per_ms: r.per_ms.saturating_mul(fleet), burst: 1, ..r })
}

/// The retry budget a client keeps while no authority can run at all: its
/// policy's quota, the capacity divided among `fleet_size` clients (the
/// costs and refund unchanged).
pub fn alone_quota(quota: Option<QuotaConfig>, fleet_size: u32) -> Option<QuotaConfig> {
    let fleet = fleet_size.max(1);
    quota.map(|q| QuotaConfig { capacity: q.capacity.checked_div(fleet).unwrap_or(0), ..q })
}

/// The quota and start rate a policy keeps in memory while it has no
/// client. Loading: as a client cut off before its first answer falls
/// back — no retry tokens held, starts on [`local_rate`]: the documented
/// fallback, never waiting on the module. Failed: as when no authority can
/// run for it — a budget of its own, [`alone_quota`], and the same starts.
pub fn unlinked(
    quota: Option<QuotaConfig>,
    rate: Option<RateConfig>,
    fleet_size: u32,
    why: Unlinked,
) -> (Option<QuotaConfig>, Option<RateConfig>) {
    let quota = match why {
        Unlinked::Loading => quota.map(|q| QuotaConfig { capacity: 0, ..q }),
        Unlinked::Failed => alone_quota(quota, fleet_size),
    };
    (quota, local_rate(rate, fleet_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_reads_back_as_it_was_written() {
        for c in [None, Some(0), Some(5), Some(u32::MAX)] {
            assert_eq!(count_back(count(c)), c);
        }
        for a in [Ok(0), Ok(1_700_000_000_123), Err(0), Err(25), Err(SAFE), Ok(SAFE)] {
            assert_eq!(start_back(start(a)), a);
        }
        for m in [None, Some(Mode::Local), Some(Mode::Leased), Some(Mode::Fallback)] {
            assert_eq!(mode_back(mode(m)), m);
        }
        for a in [Ok(Admit::Go), Ok(Admit::Reject { retry_at: 0 }), Ok(Admit::Reject { retry_at: SAFE }), Err(BadRandom)] {
            assert_eq!(admitted_back(admitted(a)), a);
        }
        assert_ne!(admitted(Ok(Admit::Go)), NO_RANDOM);
        assert_ne!(admitted(Err(BadRandom)), NO_RANDOM);
        assert_eq!(count_back(f64::NAN), None, "no client answers NaN");
        assert_eq!(count_back(2.5), None);
    }

    #[test]
    fn a_policys_config_reads_back_as_it_was_written() {
        let quota = QuotaConfig { capacity: 50, retry_cost: 5, timeout_cost: 10, success_refund: 1 };
        let rate = RateConfig { requests: 100, per_ms: 1_000, burst: 3 };
        let throttle = ThrottleConfig { k: 1.5, window_ms: 2_000 };
        for (q, r, k) in [(Some(quota), Some(rate), 8), (None, Some(rate), 1), (Some(quota), None, 10_000), (None, None, 4)] {
            assert_eq!(unpack(&pack(q, r, Some(throttle), k)), (q, r, k));
        }
        assert_eq!(unpack_throttle(&pack(None, None, Some(throttle), 1)), Some(throttle));
        assert_eq!(unpack_throttle(&pack(None, None, None, 1)), None);
        assert_eq!(unpack(&[]), (None, None, 1), "nothing packed: no quota, no rate, a fleet of one");
        assert_eq!(unpack_throttle(&[]), None, "nor a throttle");
    }

    #[test]
    fn without_its_client_a_policy_holds_no_tokens_while_loading_and_its_share_once_failed() {
        let quota = QuotaConfig { capacity: 100, ..QuotaConfig::default() };
        let rate = RateConfig { requests: 20, per_ms: 1_000, burst: 5 };
        let share = RateConfig { requests: 20, per_ms: 2_000, burst: 1 };
        assert_eq!(
            unlinked(Some(quota), Some(rate), 2, Unlinked::Loading),
            (Some(QuotaConfig { capacity: 0, ..quota }), Some(share))
        );
        assert_eq!(
            unlinked(Some(quota), Some(rate), 2, Unlinked::Failed),
            (Some(QuotaConfig { capacity: 50, ..quota }), Some(share))
        );
        assert_eq!(unlinked(None, None, 4, Unlinked::Failed), (None, None));
    }
}
