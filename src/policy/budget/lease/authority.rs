//! The authority: the one budget a fleet shares, handed out in grants.
//!
//! It is today's in-memory budget — a [`Quota`] token bucket and a [`Rate`]
//! GCRA schedule, used as they are — behind one function,
//! [`Authority::grant`], from a plain request to a plain answer. A Durable
//! Object or a browser leader runs it and persists it; nothing here knows
//! which.

use alloc::collections::BTreeMap;

use super::super::quota::{Quota, QuotaConfig};
use super::super::rate::{Rate, RateConfig};
use super::{Grant, LeaseRequest};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthorityConfig {
    pub quota: Option<QuotaConfig>,
    pub rate: Option<RateConfig>,
    /// How long a grant stays valid (the staleness bound).
    pub ttl_ms: u64,
    /// Slots are reserved at most this far ahead of `now` (and never past
    /// `ttl_ms`): a grant never holds the schedule far into the future.
    pub horizon_ms: u64,
    /// At most this many tokens, and this many slots, per grant.
    pub max_tokens: u32,
    pub max_slots: u32,
    /// A client silent this long (and at least two `ttl_ms`) is forgotten:
    /// its later returns credit nothing.
    pub forget_ms: u64,
}

impl Default for AuthorityConfig {
    fn default() -> Self {
        AuthorityConfig {
            quota: Some(QuotaConfig::default()),
            rate: None,
            ttl_ms: 10_000,
            horizon_ms: 1_000,
            max_tokens: 64,
            max_slots: 64,
            forget_ms: 600_000,
        }
    }
}

/// What the authority knows of one client.
#[derive(Debug, Clone, Copy)]
struct Holder {
    /// The newest request answered; older or equal ones are duplicates.
    last_seq: u64,
    /// Tokens the client may still hold: the most a return can credit.
    holding: u32,
    /// The client's running totals already credited.
    returned: u64,
    refunded: u64,
    seen_ms: u64,
}

/// Counters for the authority's own report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuthorityStats {
    pub requests: u64,
    pub duplicates: u64,
    pub tokens_granted: u64,
    pub tokens_credited: u64,
    pub tokens_refunded: u64,
    pub slots_granted: u64,
}

#[derive(Debug)]
pub struct Authority {
    config: AuthorityConfig,
    quota: Option<Quota>,
    rate: Option<Rate>,
    holders: BTreeMap<u64, Holder>,
    stats: AuthorityStats,
}

impl Authority {
    pub fn new(config: AuthorityConfig) -> Authority {
        Authority {
            config,
            quota: config.quota.map(Quota::new),
            rate: config.rate.map(Rate::new),
            holders: BTreeMap::new(),
            stats: AuthorityStats::default(),
        }
    }

    /// Answers one request: credits what it returns and refunds, then
    /// grants what the bucket and the schedule allow. A request seen before
    /// (same or older `seq`) changes nothing.
    pub fn grant(&mut self, req: &LeaseRequest, now_ms: u64) -> Grant {
        self.forget(now_ms);
        self.stats.requests = self.stats.requests.saturating_add(1);
        let mut grant =
            Grant { client: req.client, seq: req.seq, ttl_ms: self.config.ttl_ms, ..Grant::default() };
        // A client not known (new, or forgotten) is credited from here on.
        let holder = self.holders.entry(req.client).or_insert(Holder {
            last_seq: 0,
            holding: 0,
            returned: req.returned_total,
            refunded: req.refunded_total,
            seen_ms: now_ms,
        });
        if req.seq <= holder.last_seq {
            self.stats.duplicates = self.stats.duplicates.saturating_add(1);
            grant.duplicate = true;
            return grant;
        }
        holder.last_seq = req.seq;
        holder.seen_ms = now_ms;
        let returned = req.returned_total.saturating_sub(holder.returned);
        let credit = u32::try_from(returned).unwrap_or(u32::MAX).min(holder.holding);
        let refund = u32::try_from(req.refunded_total.saturating_sub(holder.refunded)).unwrap_or(u32::MAX);
        holder.returned = holder.returned.max(req.returned_total);
        holder.refunded = holder.refunded.max(req.refunded_total);
        holder.holding = holder.holding.saturating_sub(credit).min(req.holding_tokens);
        if let Some(q) = &self.quota {
            q.on_success(Some(credit));
            q.on_success(Some(refund));
            let n = req.want_tokens.min(self.config.max_tokens).min(q.level());
            if q.try_spend(n) {
                grant.tokens = n;
            }
            holder.holding = holder.holding.saturating_add(grant.tokens);
            let s = &mut self.stats;
            s.tokens_credited = s.tokens_credited.saturating_add(u64::from(credit));
            s.tokens_refunded = s.tokens_refunded.saturating_add(u64::from(refund));
            s.tokens_granted = s.tokens_granted.saturating_add(u64::from(grant.tokens));
        }
        if let Some(r) = &self.rate {
            let latest = now_ms.saturating_add(self.config.horizon_ms.min(self.config.ttl_ms));
            for _ in 0..req.want_slots.min(self.config.max_slots) {
                let Ok(start) = r.reserve(now_ms, latest) else { break };
                if grant.slots == 0 {
                    grant.first_slot_ms = start;
                }
                grant.last_slot_ms = start;
                grant.slots = grant.slots.saturating_add(1);
            }
            self.stats.slots_granted = self.stats.slots_granted.saturating_add(u64::from(grant.slots));
        }
        grant
    }

    /// Tokens in the bucket, when a quota is kept.
    pub fn quota_level(&self) -> Option<u32> {
        self.quota.as_ref().map(Quota::level)
    }

    pub fn stats(&self) -> AuthorityStats {
        self.stats
    }

    /// Forgets clients silent for `forget_ms`: whatever they held has
    /// expired long ago. A late message from one is then treated as new and
    /// credits nothing (it holds nothing here), so memory stays bounded by
    /// the clients heard from in the last `forget_ms`.
    fn forget(&mut self, now_ms: u64) {
        let keep_ms = self.config.forget_ms.max(self.config.ttl_ms.saturating_mul(2));
        self.holders.retain(|_, h| now_ms.saturating_sub(h.seen_ms) < keep_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(client: u64, seq: u64) -> LeaseRequest {
        LeaseRequest { client, seq, ..LeaseRequest::default() }
    }

    #[test]
    fn tokens_come_out_of_the_bucket_and_returns_go_back_at_most_once() {
        let mut a = Authority::new(AuthorityConfig {
            quota: Some(QuotaConfig { capacity: 30, ..QuotaConfig::default() }),
            ..AuthorityConfig::default()
        });
        let g = a.grant(&LeaseRequest { want_tokens: 20, ..ask(1, 1) }, 0);
        assert_eq!((g.tokens, a.quota_level()), (20, Some(10)));
        let g = a.grant(&LeaseRequest { want_tokens: 20, ..ask(2, 1) }, 0);
        assert_eq!((g.tokens, a.quota_level()), (10, Some(0)), "a short bucket grants what it has");
        let back = LeaseRequest { returned_total: 50, ..ask(1, 2) };
        assert_eq!(a.grant(&back, 1).tokens, 0);
        assert_eq!(a.quota_level(), Some(20), "credited what client 1 held, not what it claimed");
        assert!(a.grant(&back, 2).duplicate);
        let again = LeaseRequest { returned_total: 50, want_tokens: 5, ..ask(1, 3) };
        assert_eq!(a.grant(&again, 3).tokens, 5);
        assert_eq!(a.grant(&LeaseRequest { returned_total: 55, ..ask(1, 4) }, 4).tokens, 0);
        assert_eq!(a.quota_level(), Some(20), "a running total credits only its increase");
        assert_eq!(a.stats().tokens_credited, 25);
    }

    #[test]
    fn slots_are_a_run_of_the_schedule_within_the_horizon() {
        let mut a = Authority::new(AuthorityConfig {
            quota: None,
            rate: Some(RateConfig { requests: 10, per_ms: 1000, burst: 1 }),
            horizon_ms: 500,
            ..AuthorityConfig::default()
        });
        let g = a.grant(&LeaseRequest { want_slots: 8, ..ask(1, 1) }, 1000);
        assert_eq!((g.slots, g.first_slot_ms, g.last_slot_ms), (5, 1000, 1400));
        let g = a.grant(&LeaseRequest { want_slots: 8, ..ask(2, 1) }, 1000);
        assert_eq!(g.slots, 0, "the schedule is taken up to the horizon");
        let g = a.grant(&LeaseRequest { want_slots: 2, ..ask(2, 2) }, 1450);
        assert_eq!((g.slots, g.first_slot_ms, g.last_slot_ms), (2, 1500, 1600));
    }

    #[test]
    fn a_silent_client_is_forgotten_and_its_late_return_credits_nothing() {
        let mut a = Authority::new(AuthorityConfig {
            quota: Some(QuotaConfig { capacity: 10, ..QuotaConfig::default() }),
            ttl_ms: 100,
            forget_ms: 0,
            ..AuthorityConfig::default()
        });
        a.grant(&LeaseRequest { want_tokens: 10, ..ask(1, 1) }, 0);
        a.grant(&ask(2, 1), 200);
        a.grant(&LeaseRequest { returned_total: 10, ..ask(1, 2) }, 200);
        assert_eq!(a.quota_level(), Some(0));
        assert_eq!(a.stats().tokens_credited, 0);
    }
}
