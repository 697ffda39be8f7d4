//! Budgets shared by every call of one policy: the retry quota, the start
//! rate and the concurrency limit, plus the counters behind `stats()`.
//!
//! The quota and the rate sit behind [`SharedState`], one small trait: the
//! default keeps them in memory, and an adapter can keep them elsewhere (a
//! Cloudflare Durable Object for a fleet of workers, a `BroadcastChannel`
//! or `localStorage` lease for browser tabs) without touching the engine.
//! Concurrency and the counters describe this isolate's own requests, so
//! they stay local. Adaptive throttling's window (`policy::throttle`) is
//! [`InMemory`]'s own, or the fleet's with a leased client ([`lease`]:
//! its authority keeps it); a shared state that keeps none answers the
//! default methods (never throttled, nothing counted). [`lease`] is the pure core of such an adapter: an
//! authority that keeps the fleet's budget and a client that spends small,
//! expiring grants of it without waiting.

checked_arithmetic! {
    pub mod concurrency;
    pub mod lease;
    pub mod quota;
    pub mod rate;
}

use core::cell::{Cell, RefCell};
use serde::{Serialize, Serializer};

use super::backoff::BadRandom;
use super::reason::Reason;
use super::throttle::{Admit, Throttle, ThrottleConfig};

use quota::{Quota, QuotaConfig};
use rate::{Rate, RateConfig};

/// The state a policy's calls share, wherever it lives.
pub trait SharedState {
    /// Pays for one retry: `Some(cost)` taken, `None` when the quota is empty.
    fn spend_retry(&self, after_timeout: bool) -> Option<u32>;
    /// After a success: refund what the last retry cost, or a small refund.
    fn on_success(&self, last_retry_cost: Option<u32>);
    /// Tokens left, when a quota is kept.
    fn quota_level(&self) -> Option<u32>;
    /// Reserves the earliest start at or after `now_ms`, or says when to
    /// ask again (`Err(at)`): the engine queues until `at` if it is before
    /// `latest_ms`, and gives up otherwise. The in-memory rate answers
    /// `Err` only with a start at or after `latest_ms`; a leased client
    /// out of slots answers when its next grant may have come.
    fn reserve_start(&self, now_ms: u64, latest_ms: u64) -> Result<u64, u64>;
    /// Gives back a reservation whose start did not happen.
    fn release_start(&self, start_ms: u64);
    /// Whether a start reserved for `start_ms`, whose wait ended at
    /// `now_ms`, may still be made. `false` gives it up (its moment passed
    /// long ago: a process that stalled, a timer that fired late) and the
    /// engine reserves another. The in-memory rate keeps every start.
    fn keep_start(&self, _start_ms: u64, _now_ms: u64) -> bool {
        true
    }
    /// Adaptive throttling (`policy::throttle`): whether an operation's
    /// first attempt may start at `now_ms`, drawing `random` only when a
    /// rejection is possible. Without a throttle, always.
    fn admit(&self, _now_ms: u64, _random: &mut dyn FnMut() -> f64) -> Result<Admit, BadRandom> {
        Ok(Admit::Go)
    }
    /// An attempt is sent at `now_ms` (counted as a request).
    fn sent(&self, _now_ms: u64) {}
    /// An attempt ended at `now_ms`: whether the upstream accepted it
    /// (`policy::throttle::accepted`), and the server floor it set.
    fn answered(&self, _now_ms: u64, _accepted: bool, _floor: Option<u64>) {}
}

/// The default: everything in this isolate's memory.
pub struct InMemory {
    quota: Option<Quota>,
    rate: Option<Rate>,
    throttle: Option<RefCell<Throttle>>,
}

impl InMemory {
    pub fn new(quota: Option<QuotaConfig>, rate: Option<RateConfig>) -> InMemory {
        InMemory { quota: quota.map(Quota::new), rate: rate.map(Rate::new), throttle: None }
    }

    /// With adaptive throttling (`None`: without).
    pub fn throttled(self, config: Option<ThrottleConfig>) -> InMemory {
        InMemory { throttle: config.map(|c| RefCell::new(Throttle::new(c))), ..self }
    }

    /// The throttle, when there is one and it is not in use (it never is:
    /// its methods do not call out).
    fn throttle(&self) -> Option<core::cell::RefMut<'_, Throttle>> {
        self.throttle.as_ref().and_then(|t| t.try_borrow_mut().ok())
    }
}

impl SharedState for InMemory {
    fn spend_retry(&self, after_timeout: bool) -> Option<u32> {
        match &self.quota {
            Some(q) => {
                let cost = q.cost(after_timeout);
                q.try_spend(cost).then_some(cost)
            }
            None => Some(0),
        }
    }

    fn on_success(&self, last_retry_cost: Option<u32>) {
        if let Some(q) = &self.quota {
            q.on_success(last_retry_cost);
        }
    }

    fn quota_level(&self) -> Option<u32> {
        self.quota.as_ref().map(Quota::level)
    }

    fn reserve_start(&self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        match &self.rate {
            Some(r) => r.reserve(now_ms, latest_ms),
            None => Ok(now_ms),
        }
    }

    fn release_start(&self, start_ms: u64) {
        if let Some(r) = &self.rate {
            r.release(start_ms);
        }
    }

    fn admit(&self, now_ms: u64, random: &mut dyn FnMut() -> f64) -> Result<Admit, BadRandom> {
        match self.throttle() {
            Some(mut t) => t.admit(now_ms, random),
            None => Ok(Admit::Go),
        }
    }

    fn sent(&self, now_ms: u64) {
        if let Some(mut t) = self.throttle() {
            t.sent(now_ms);
        }
    }

    fn answered(&self, now_ms: u64, accepted: bool, floor: Option<u64>) {
        if let Some(mut t) = self.throttle() {
            t.record(now_ms, accepted, floor);
        }
    }
}

/// Counters for `policy.stats()` (the host adds `quotaLevel`).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    #[serde(serialize_with = "count")]
    pub operations: Cell<u64>,
    /// Operations that ended after 1, 2, 3, 4 and 5+ attempts.
    #[serde(rename = "attempts", serialize_with = "counts")]
    pub attempts_histogram: [Cell<u64>; 5],
    #[serde(serialize_with = "count")]
    pub retries: Cell<u64>,
    /// Operations that ended with `attempts-exhausted`.
    #[serde(serialize_with = "count")]
    pub exhausted: Cell<u64>,
    /// Operations that adaptive throttling ended `try-later` (reason
    /// `throttled`) without sending anything: the requests saved.
    #[serde(serialize_with = "count")]
    pub throttled: Cell<u64>,
    /// Operations waiting for a rate or concurrency slot right now.
    pub queued: Cell<u32>,
    pub in_flight: Cell<u32>,
}

/// A counter as a plain number (see [`crate::policy::number::ms`]).
fn count<S: Serializer>(c: &Cell<u64>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(c.get() as f64)
}

fn counts<S: Serializer>(h: &[Cell<u64>; 5], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(h.iter().map(|c| c.get() as f64))
}

impl Stats {
    /// One operation ended after `attempts` attempts, for `reason`.
    pub fn ended(&self, attempts: usize, reason: Reason) {
        // Counters saturate: a count past 2^64 is not worth a trap or a wrap.
        let bump = |c: &Cell<u64>, by: u64| c.set(c.get().saturating_add(by));
        if let Some(retries) = attempts.checked_sub(1) {
            if let Some(bucket) = self.attempts_histogram.get(retries.min(4)) {
                bump(bucket, 1);
            }
            bump(&self.retries, u64::try_from(retries).unwrap_or(u64::MAX));
        }
        match reason {
            Reason::AttemptsExhausted => bump(&self.exhausted, 1),
            Reason::Throttled => bump(&self.throttled, 1),
            _ => {}
        }
    }
}

/// Adds one while alive: in-flight and queued counts survive every exit.
pub struct Counting<'a>(pub &'a Cell<u32>);

impl<'a> Counting<'a> {
    pub fn new(cell: &'a Cell<u32>) -> Counting<'a> {
        cell.set(cell.get().saturating_add(1));
        Counting(cell)
    }
}

impl Drop for Counting<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// Where a client's budget comes from right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// No answer yet: the local budget only.
    Local,
    /// The last request was answered: spending leased grants.
    Leased,
    /// The authority is unreachable: held grants until they expire, then
    /// the local budget (first attempts only).
    Fallback,
}

// Native only: they use proptest or serde_json, which the wasm tests do not have.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// `stats()` without the host's `quotaLevel`: counters as numbers.
    #[test]
    fn stats_serialize_to_their_public_shape() {
        let stats = Stats::default();
        stats.operations.set(3);
        stats.ended(1, Reason::Succeeded);
        stats.ended(7, Reason::AttemptsExhausted);
        stats.ended(0, Reason::Throttled);
        let _in_flight = Counting::new(&stats.in_flight);
        assert_eq!(
            serde_json::to_value(&stats).unwrap(),
            serde_json::json!({ "operations": 3.0, "attempts": [1.0, 0.0, 0.0, 0.0, 1.0], "retries": 6.0,
                                "exhausted": 1.0, "throttled": 1.0, "queued": 0, "inFlight": 1 })
        );
    }

    #[test]
    fn the_in_memory_state_spends_refunds_and_spaces() {
        let s = InMemory::new(
            Some(QuotaConfig { capacity: 10, ..QuotaConfig::default() }),
            Some(RateConfig { requests: 2, per_ms: 1000, burst: 1 }),
        );
        assert_eq!(s.spend_retry(false), Some(5));
        assert_eq!(s.spend_retry(true), None);
        s.on_success(Some(5));
        assert_eq!(s.quota_level(), Some(10));
        assert_eq!((s.reserve_start(0, 10_000), s.reserve_start(0, 10_000)), (Ok(0), Ok(500)));
        let none = InMemory::new(None, None);
        assert_eq!(
            (none.spend_retry(true), none.quota_level(), none.reserve_start(7, 8)),
            (Some(0), None, Ok(7))
        );
    }

    #[test]
    fn stats_bucket_attempts_and_count_retries() {
        let s = Stats::default();
        for n in [1, 2, 3, 5, 9] {
            s.ended(n, if n == 3 { Reason::AttemptsExhausted } else { Reason::HttpStop });
        }
        let h: Vec<u64> = s.attempts_histogram.iter().map(Cell::get).collect();
        assert_eq!(h, [1, 1, 1, 0, 2]);
        assert_eq!((s.retries.get(), s.exhausted.get(), s.throttled.get()), (15, 1, 0));
        let c = Counting::new(&s.in_flight);
        assert_eq!(s.in_flight.get(), 1);
        drop(c);
        assert_eq!(s.in_flight.get(), 0);
    }
}
