//! The authority: the one budget a fleet shares, handed out in grants.
//!
//! It is today's in-memory budget — a [`Quota`] token bucket and a [`Rate`]
//! GCRA schedule, used as they are — behind one function,
//! [`Authority::grant`], from a plain request to a plain answer. A Durable
//! Object or a browser leader runs it and persists it; nothing here knows
//! which.

use alloc::vec::Vec;

use super::super::quota::{Quota, QuotaConfig};
use super::super::rate::{Rate, RateConfig};
use super::{AuthorityState, AuthorityStats, FleetConfig, FleetWindow, Grant, HolderState, LeaseRequest};
use crate::policy::throttle::{Counts, Throttle, DEFAULT_K};

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
    /// A client silent this long (and at least two `ttl_ms`, when what it
    /// held goes back to the bucket) is forgotten: its later returns credit
    /// nothing. Silence is counted as `forget` says.
    pub forget_ms: u64,
}

impl AuthorityConfig {
    /// The defaults below, sharing what `fleet` says.
    pub fn of(fleet: FleetConfig) -> AuthorityConfig {
        AuthorityConfig { quota: fleet.quota, rate: fleet.rate, ..AuthorityConfig::default() }
    }

    pub fn fleet(&self) -> FleetConfig {
        FleetConfig { quota: self.quota, rate: self.rate }
    }
}

impl Default for AuthorityConfig {
    fn default() -> Self {
        AuthorityConfig {
            quota: Some(QuotaConfig::default()),
            rate: None,
            ttl_ms: 10_000,
            horizon_ms: super::HORIZON_MS,
            max_tokens: 64,
            max_slots: 64,
            forget_ms: 600_000,
        }
    }
}

#[derive(Debug)]
pub struct Authority {
    config: AuthorityConfig,
    quota: Option<Quota>,
    rate: Option<Rate>,
    /// Sorted by client id (a fleet is small; a sorted `Vec` is a fraction
    /// of a `BTreeMap`'s code in wasm).
    holders: Vec<HolderState>,
    /// The first request after a ttl without any (see `forget`).
    resumed_ms: u64,
    stats: AuthorityStats,
    /// The fleet's adaptive-throttling window (`policy::throttle`): the
    /// requests and accepts its clients report, each increase of their
    /// running totals once. `None` until a request reports counts.
    window: Option<Throttle>,
}

impl Authority {
    pub fn new(config: AuthorityConfig) -> Authority {
        Authority {
            config,
            quota: config.quota.map(Quota::new),
            rate: config.rate.map(Rate::new),
            holders: Vec::new(),
            resumed_ms: 0,
            stats: AuthorityStats::default(),
            window: None,
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
        let mut lost_state = false;
        let at = match self.holders.binary_search_by_key(&req.client, |h| h.client) {
            Ok(at) => at,
            Err(at) => {
                // Holding a grant from an authority that was not this one:
                // this one lost its state (see `reschedule_after_loss`).
                lost_state = req.leased;
                let new = HolderState {
                    client: req.client,
                    last_seq: 0,
                    holding: 0,
                    returned: req.returned_total,
                    refunded: req.refunded_total,
                    spent: req.spent_total,
                    // Tokens it claims to hold are covered by nothing here
                    // (a client forgotten since: they may have been given
                    // back): taken from the bucket again, as far as it can.
                    reclaimed: req.holding_tokens,
                    seen_ms: now_ms,
                    config: FleetConfig::default(),
                    // A client's first request ever: all it counted is
                    // new. Any later one (a client forgotten, or known to
                    // an authority that lost its state): from here on.
                    counted: if req.seq == 1 { Some(Counts::default()) } else { req.throttle.map(|t| t.totals()) },
                };
                self.holders.insert(at, new);
                at
            }
        };
        let Some(holder) = self.holders.get_mut(at) else { return grant };
        if req.seq <= holder.last_seq {
            self.stats.duplicates = self.stats.duplicates.saturating_add(1);
            grant.duplicate = true;
            return grant;
        }
        holder.last_seq = req.seq;
        holder.seen_ms = now_ms;
        holder.config = req.config;
        self.configure(&req.config, now_ms);
        if lost_state {
            self.reschedule_after_loss();
        }
        let Some(holder) = self.holders.get_mut(at) else { return grant };
        let returned = req.returned_total.saturating_sub(holder.returned);
        let credit = u32::try_from(returned).unwrap_or(u32::MAX).min(holder.holding);
        let refund = u32::try_from(req.refunded_total.saturating_sub(holder.refunded)).unwrap_or(u32::MAX);
        let spent = u32::try_from(req.spent_total.saturating_sub(holder.spent)).unwrap_or(u32::MAX);
        holder.returned = holder.returned.max(req.returned_total);
        holder.refunded = holder.refunded.max(req.refunded_total);
        holder.spent = holder.spent.max(req.spent_total);
        holder.holding = holder.holding.saturating_sub(credit).saturating_sub(spent).min(req.holding_tokens);
        let totals = req.throttle.map(|t| t.totals());
        let counted = holder.counted.zip(totals).map(|(before, now)| now.since(before)).unwrap_or_default();
        if let Some(now) = totals {
            holder.counted = Some(holder.counted.unwrap_or(now).plus(counted));
        }
        // Tokens given back when this client went silent that it still
        // claims (a request that was long on its way): the grant renews
        // them, so they are taken from the bucket again, as far as it has
        // them, and never handed out twice.
        let retake = req.holding_tokens.saturating_sub(holder.holding).min(core::mem::take(&mut holder.reclaimed));
        if let Some(q) = &self.quota {
            q.on_success(Some(credit));
            q.on_success(Some(refund));
            let retaken = retake.min(q.level());
            if q.try_spend(retaken) {
                holder.holding = holder.holding.saturating_add(retaken);
                self.stats.tokens_granted = self.stats.tokens_granted.saturating_add(u64::from(retaken));
            }
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
            let share = self.fair_slots(now_ms);
            for _ in 0..req.want_slots.min(self.config.max_slots).min(share) {
                let Ok(start) = r.reserve(now_ms, latest) else { break };
                if grant.slots == 0 {
                    grant.first_slot_ms = start;
                }
                grant.last_slot_ms = start;
                grant.slots = grant.slots.saturating_add(1);
            }
            self.stats.slots_granted = self.stats.slots_granted.saturating_add(u64::from(grant.slots));
        }
        if let Some(report) = req.throttle {
            let window = self.window.get_or_insert_with(|| Throttle::new(report.config()));
            window.configure(now_ms, report.config());
            window.add(now_ms, counted);
            let counts = window.counts(now_ms);
            let retry_ms = window.retry_at(now_ms);
            grant.window = Some(FleetWindow { requests: counts.requests, accepts: counts.accepts, retry_ms });
        }
        grant
    }

    /// Puts in force the strictest configuration offered by the clients
    /// heard from within a `ttl_ms` (this request's included). A field no
    /// such client offers keeps what was in force: a policy without a quota
    /// spends nothing from the bucket and never removes it. A change keeps
    /// the bucket's level (clamped to a smaller capacity, never raised) and
    /// the schedule, so no request, whatever it offers, refills the bucket:
    /// only returns and refunds do.
    fn configure(&mut self, offer: &FleetConfig, now_ms: u64) {
        let current = self.config.fleet();
        // An offer of a field already in force, and not the same.
        let differs = offer.quota.zip(current.quota).is_some_and(|(o, c)| o != c)
            || offer.rate.zip(current.rate).is_some_and(|(o, c)| o != c);
        if differs {
            self.stats.differing_configs = self.stats.differing_configs.saturating_add(1);
        }
        let ttl = self.config.ttl_ms;
        let offered = self
            .holders
            .iter()
            .filter(|h| now_ms.saturating_sub(h.seen_ms) < ttl)
            .fold(FleetConfig::default(), |acc, h| acc.strictest(h.config));
        let next = FleetConfig { quota: offered.quota.or(current.quota), rate: offered.rate.or(current.rate) };
        if next == current {
            return;
        }
        self.stats.config_changes = self.stats.config_changes.saturating_add(1);
        let quota = next.quota.map(Quota::new);
        if let (Some(q), Some(old)) = (&quota, &self.quota) {
            q.restore_level(old.level());
        }
        let rate = next.rate.map(Rate::new);
        if let (Some(r), Some(old)) = (&rate, &self.rate) {
            r.restore_schedule(old.schedule_ms());
        }
        self.config.quota = next.quota;
        self.config.rate = next.rate;
        self.quota = quota;
        self.rate = rate;
    }

    /// After a lost state (a request from a client that holds a grant this
    /// authority did not make: Redis restarted without persistence, a
    /// leader tab gone without handing over), the schedule starts a
    /// horizon after the first request this authority heard (`resumed_ms`):
    /// every slot handed out before was reserved at most a horizon ahead of
    /// a grant made before that request. Starting at `now` instead, the new
    /// schedule would run on top of the slots the clients still hold
    /// (measured with Redis at 50 a second: 83 slots in one second). Until
    /// then the clients start on the slots they hold. The same request
    /// again, or one from another such client, moves nothing further.
    fn reschedule_after_loss(&self) {
        let horizon = self.config.horizon_ms.min(self.config.ttl_ms);
        let floor = self.resumed_ms.saturating_add(horizon);
        if let Some(r) = self.rate.as_ref().filter(|r| r.schedule_ms() < floor) {
            r.restore_schedule(floor);
        }
    }

    /// The most slots one grant may take: the schedule's starts within the
    /// horizon, shared among the clients heard from within a `ttl_ms` (at
    /// least one each). Without it a busy client asking for G slots of a
    /// slow rate reserves the whole next horizon, and the others wait for
    /// slots it may never use (they are lost to the schedule until they
    /// expire). A fast rate is unaffected: its share exceeds G.
    fn fair_slots(&self, now_ms: u64) -> u32 {
        let Some(rate) = self.config.rate else { return 0 };
        let horizon = u128::from(self.config.horizon_ms.min(self.config.ttl_ms));
        let per_horizon = u128::from(rate.requests)
            .saturating_mul(horizon)
            .checked_div(u128::from(rate.per_ms))
            .unwrap_or(u128::MAX)
            .saturating_add(u128::from(rate.burst));
        let recent = |h: &&HolderState| now_ms.saturating_sub(h.seen_ms) < self.config.ttl_ms;
        let clients = u128::try_from(self.holders.iter().filter(recent).count()).unwrap_or(u128::MAX).max(1);
        u32::try_from(per_horizon.div_ceil(clients)).unwrap_or(u32::MAX).max(1)
    }

    /// Tokens in the bucket, when a quota is kept.
    pub fn quota_level(&self) -> Option<u32> {
        self.quota.as_ref().map(Quota::level)
    }

    pub fn stats(&self) -> AuthorityStats {
        self.stats
    }

    pub fn config(&self) -> AuthorityConfig {
        self.config
    }

    /// Everything needed to go on elsewhere or later (see [`AuthorityState`]).
    pub fn state(&self) -> AuthorityState {
        AuthorityState {
            config: self.config.fleet(),
            level: self.quota_level(),
            schedule_ms: self.rate.as_ref().map(Rate::schedule_ms),
            holders: self.holders.clone(),
            resumed_ms: self.resumed_ms,
            stats: self.stats,
            window: self.window.as_ref().map(Throttle::state),
        }
    }

    /// An authority under `config` that goes on from `state`: the level
    /// (clamped to the capacity; a bucket that was not kept starts full),
    /// the schedule, the clients and the counters.
    pub fn restore(config: AuthorityConfig, state: &AuthorityState) -> Authority {
        let mut a = Authority::new(config);
        if let (Some(q), Some(level)) = (&a.quota, state.level) {
            q.restore_level(level);
        }
        if let (Some(r), Some(at)) = (&a.rate, state.schedule_ms) {
            r.restore_schedule(at);
        }
        // Sorted and one per client (the newest), whatever the state held.
        for h in &state.holders {
            match a.holders.binary_search_by_key(&h.client, |k| k.client) {
                Ok(at) => {
                    if let Some(kept) = a.holders.get_mut(at).filter(|k| k.last_seq < h.last_seq) {
                        *kept = *h;
                    }
                }
                Err(at) => a.holders.insert(at, *h),
            }
        }
        a.resumed_ms = state.resumed_ms;
        a.stats = state.stats;
        // `K` comes with every request that reads the window.
        a.window = state.window.as_ref().map(|w| Throttle::restore(DEFAULT_K, w));
        a
    }

    /// Gives back the tokens of clients silent for two `ttl_ms`, once: a
    /// killed instance's grant expired a ttl ago (the margin covers a
    /// clock a little behind, a retry paid at the time seen before its
    /// attempt, an answer late on its way), so what it held and had not
    /// reported spent can no longer be spent, and goes back to the bucket.
    /// Only spends made after its last request arrived are credited too
    /// (the bound in the module's docs). Silence is counted only while the
    /// authority hears from someone: after a ttl without any request (the
    /// authority was away, or the fleet idle) it counts from the first
    /// request, so clients cut off with it, which spent what they held
    /// and could not say, have two ttls to say it. Then forgets clients silent for
    /// `forget_ms` (at least those two ttls): a late message from one is
    /// treated as new and credits nothing (it holds nothing here), so
    /// memory stays bounded by the clients heard from in the last
    /// `forget_ms`.
    fn forget(&mut self, now_ms: u64) {
        let ttl = self.config.ttl_ms;
        let last_ms = self.holders.iter().map(|h| h.seen_ms).max();
        if last_ms.is_none_or(|last| now_ms.saturating_sub(last) >= ttl) {
            self.resumed_ms = now_ms;
        }
        let silent_ms = ttl.saturating_mul(2);
        let since = self.resumed_ms;
        let silent = |h: &HolderState| now_ms.saturating_sub(h.seen_ms.max(since)) >= silent_ms;
        for h in self.holders.iter_mut().filter(|h| h.holding > 0 && silent(h)) {
            let back = core::mem::take(&mut h.holding);
            h.reclaimed = h.reclaimed.saturating_add(back);
            if let Some(q) = &self.quota {
                q.on_success(Some(back));
            }
            self.stats.tokens_reclaimed = self.stats.tokens_reclaimed.saturating_add(u64::from(back));
        }
        let keep_ms = self.config.forget_ms.max(silent_ms);
        self.holders.retain(|h| now_ms.saturating_sub(h.seen_ms.max(since)) < keep_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::budget::lease::ThrottleReport;

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
    fn a_slow_shared_rate_is_split_among_the_clients_heard_from_not_taken_by_the_first_to_ask() {
        let mut a = Authority::new(AuthorityConfig {
            quota: None,
            rate: Some(RateConfig { requests: 5, per_ms: 1000, burst: 1 }),
            ..AuthorityConfig::default()
        });
        let g = a.grant(&LeaseRequest { want_slots: 32, ..ask(1, 1) }, 0);
        assert_eq!(g.slots, 5, "alone: the whole horizon (share 6)");
        assert_eq!(a.grant(&LeaseRequest { want_slots: 32, ..ask(2, 1) }, 0).slots, 0, "taken");
        let g = a.grant(&LeaseRequest { want_slots: 32, ..ask(1, 2) }, 1000);
        assert_eq!((g.slots, g.first_slot_ms), (3, 1000), "two clients: 6 / 2 each");
        let g = a.grant(&LeaseRequest { want_slots: 32, ..ask(2, 2) }, 1000);
        assert_eq!((g.slots, g.first_slot_ms), (2, 1600), "the rest of the horizon");
        let fast = Authority::new(AuthorityConfig {
            rate: Some(RateConfig { requests: 1000, per_ms: 1000, burst: 1 }),
            ..AuthorityConfig::default()
        });
        assert_eq!(fast.fair_slots(0), 1001, "a fast rate: more than any grant asks");
    }

    #[test]
    fn a_restored_authority_goes_on_from_its_state_not_from_a_full_bucket() {
        let config = AuthorityConfig {
            quota: Some(QuotaConfig { capacity: 30, ..QuotaConfig::default() }),
            rate: Some(RateConfig { requests: 10, per_ms: 1000, burst: 1 }),
            ..AuthorityConfig::default()
        };
        let mut a = Authority::new(config);
        a.grant(&LeaseRequest { want_tokens: 20, want_slots: 3, ..ask(1, 1) }, 1000);
        let saved = a.state();
        assert_eq!((saved.level, saved.schedule_ms), (Some(10), Some(1300)));
        let mut b = Authority::restore(config, &saved);
        assert_eq!(b.state(), saved, "a restore is exact");
        assert!(b.grant(&ask(1, 1), 1001).duplicate, "the clients' sequence numbers are kept");
        let g = b.grant(&LeaseRequest { want_tokens: 20, want_slots: 1, ..ask(2, 1) }, 1001);
        assert_eq!((g.tokens, g.first_slot_ms), (10, 1300), "the level and the schedule go on");
        let smaller = AuthorityConfig { quota: Some(QuotaConfig { capacity: 5, ..QuotaConfig::default() }), ..config };
        assert_eq!(Authority::restore(smaller, &saved).quota_level(), Some(5), "clamped to a new capacity");
        let unkept = AuthorityState { level: None, ..saved };
        assert_eq!(Authority::restore(config, &unkept).quota_level(), Some(30));
    }

    #[test]
    fn a_client_holding_a_grant_this_authority_did_not_make_starts_its_schedule_a_horizon_after_its_first_request() {
        let config = AuthorityConfig {
            quota: None,
            rate: Some(RateConfig { requests: 10, per_ms: 1000, burst: 1 }),
            ..AuthorityConfig::default()
        };
        let slots = |g: Grant| (g.slots, g.first_slot_ms);
        let mut a = Authority::new(config);
        let fresh = a.grant(&want(1, 1, 2, false), 5_000);
        assert_eq!(slots(fresh), (2, 5_000), "a new client: the schedule from now");
        // Its state was lost (a Redis restarted without persistence): the
        // slots its predecessor handed out may run until 6000.
        let lost = a.grant(&want(2, 7, 2, true), 5_100);
        assert_eq!(slots(lost), (1, 6_000), "from a horizon after the first request, up to its own horizon");
        let other = a.grant(&want(3, 9, 1, true), 5_200);
        assert_eq!(slots(other), (1, 6_100), "once: another such client moves nothing further");
        assert_eq!(slots(a.grant(&want(2, 8, 1, true), 5_300)), (1, 6_200), "nor a known one");
        // An authority that kept its state knows its clients: nothing moves.
        let mut b = Authority::restore(config, &a.state());
        assert_eq!(slots(b.grant(&want(3, 10, 1, true), 5_400)), (1, 6_300));
        // Long after its first request, a client it forgot (or one whose
        // grant came from a predecessor long gone) moves nothing either.
        let mut c = Authority::new(config);
        c.grant(&want(1, 1, 1, false), 5_000);
        for (seq, t) in (2..).zip((6_000..=20_000).step_by(1_000)) {
            c.grant(&want(1, seq, 1, false), t);
        }
        assert_eq!(slots(c.grant(&want(4, 3, 1, true), 20_500)), (1, 20_500));
    }

    #[test]
    fn throttling_counts_are_credited_once_each_however_requests_are_lost_or_repeated() {
        let mut a = Authority::new(AuthorityConfig::default());
        let report = |requests, accepts| Some(ThrottleReport { k: 2.0, window_ms: 1_500, requests, accepts });
        let seen = |g: Grant| g.window.map(|w| (w.requests, w.accepts));
        let g = a.grant(&LeaseRequest { throttle: report(3, 1), ..ask(1, 1) }, 0);
        assert_eq!(seen(g), Some((3, 1)), "a first request's counts are all new");
        // Request 2 was lost: 3 carries the running totals.
        assert_eq!(seen(a.grant(&LeaseRequest { throttle: report(10, 2), ..ask(1, 3) }, 100)), Some((10, 2)));
        assert!(a.grant(&LeaseRequest { throttle: report(10, 2), ..ask(1, 3) }, 101).duplicate);
        assert_eq!(seen(a.grant(&LeaseRequest { throttle: report(10, 2), ..ask(1, 4) }, 102)), Some((10, 2)));
        // A client it does not know, past its first request (forgotten,
        // or known to a lost authority): counted from here on.
        assert_eq!(seen(a.grant(&LeaseRequest { throttle: report(500, 0), ..ask(2, 9) }, 103)), Some((10, 2)));
        assert_eq!(seen(a.grant(&LeaseRequest { throttle: report(504, 0), ..ask(2, 10) }, 104)), Some((14, 2)));
        let g = a.grant(&LeaseRequest { throttle: report(14, 2), ..ask(1, 5) }, 1_700);
        assert_eq!(seen(g), Some((4, 0)), "the window slid past the first counts");
        assert_eq!(a.grant(&ask(1, 6), 1_701).window, None, "a request without counts gets no picture");
    }

    /// A request for `slots`, from a client that holds a grant or not.
    fn want(client: u64, seq: u64, slots: u32, leased: bool) -> LeaseRequest {
        LeaseRequest { want_slots: slots, leased, ..ask(client, seq) }
    }

    fn silent_pair() -> Authority {
        let mut a = Authority::new(AuthorityConfig {
            quota: Some(QuotaConfig { capacity: 30, ..QuotaConfig::default() }),
            ttl_ms: 100,
            ..AuthorityConfig::default()
        });
        a.grant(&LeaseRequest { want_tokens: 20, ..ask(1, 1) }, 0);
        let spent = LeaseRequest { spent_total: 5, holding_tokens: 15, ..ask(1, 2) };
        a.grant(&spent, 50);
        assert_eq!(a.quota_level(), Some(10));
        a
    }

    /// Client 2 asks every 50 ms from `from` to `to`, its sequence from `seq`.
    fn others(a: &mut Authority, seq: u64, from: u64, to: u64) {
        for (n, t) in (from..=to).step_by(50).enumerate() {
            a.grant(&ask(2, seq + n as u64), t);
        }
    }

    #[test]
    fn a_silent_holders_unspent_tokens_come_back_once_two_ttls_after_it_was_last_heard() {
        let mut a = silent_pair();
        others(&mut a, 1, 100, 200);
        a.grant(&ask(2, 10), 249);
        assert_eq!(a.quota_level(), Some(10), "a ttl past its grant's expiry, not sooner");
        a.grant(&ask(2, 11), 250);
        assert_eq!(a.quota_level(), Some(25), "the 20 it took, less the 5 it reported spent");
        others(&mut a, 12, 300, 900);
        assert_eq!(a.quota_level(), Some(25), "once");
        assert_eq!(a.stats().tokens_reclaimed, 15);
    }

    #[test]
    fn after_a_ttl_without_any_request_silences_count_from_the_first_one_so_clients_cut_off_can_say_what_they_spent() {
        let mut a = silent_pair();
        // Nobody heard from 50 to 400 (the authority was away).
        others(&mut a, 1, 400, 550);
        assert_eq!(a.quota_level(), Some(10), "client 1 had until 600 to be heard");
        a.grant(&LeaseRequest { spent_total: 20, ..ask(1, 3) }, 580);
        others(&mut a, 5, 600, 900);
        assert_eq!((a.quota_level(), a.stats().tokens_reclaimed), (Some(10), 0), "it spent them all");
        let mut b = silent_pair();
        others(&mut b, 1, 400, 600);
        assert_eq!(b.quota_level(), Some(25), "not heard by then: given back");
    }

    #[test]
    fn a_late_message_from_a_client_whose_tokens_came_back_gets_nothing_twice() {
        let mut a = silent_pair();
        others(&mut a, 1, 100, 250);
        // Its tokens expired where it runs: it returns them. Nothing more.
        let returns = LeaseRequest { returned_total: 15, spent_total: 5, ..ask(1, 3) };
        a.grant(&returns, 260);
        assert_eq!((a.quota_level(), a.stats().tokens_credited), (Some(25), 0));
        assert!(a.grant(&LeaseRequest { holding_tokens: 15, ..ask(1, 2) }, 261).duplicate);
        let mut b = silent_pair();
        others(&mut b, 1, 100, 250);
        // A request sent before its tokens expired, arriving after they came
        // back: the grant renews them, so they are taken again.
        let late = LeaseRequest { holding_tokens: 15, spent_total: 5, ..ask(1, 3) };
        b.grant(&late, 260);
        assert_eq!(b.quota_level(), Some(10));
        assert_eq!((b.stats().tokens_reclaimed, b.stats().tokens_granted), (15, 35), "taken again: granted again");
        b.grant(&LeaseRequest { returned_total: 15, spent_total: 5, ..ask(1, 4) }, 270);
        assert_eq!(b.quota_level(), Some(25), "returned once, as any holding");
    }

    #[test]
    fn a_silent_client_is_forgotten_after_its_tokens_came_back_and_its_late_messages_gain_nothing() {
        let mut a = Authority::new(AuthorityConfig {
            quota: Some(QuotaConfig { capacity: 10, ..QuotaConfig::default() }),
            ttl_ms: 100,
            forget_ms: 0,
            ..AuthorityConfig::default()
        });
        a.grant(&LeaseRequest { want_tokens: 10, ..ask(1, 1) }, 0);
        others(&mut a, 1, 50, 200);
        assert_eq!(a.quota_level(), Some(10), "given back as it was forgotten");
        a.grant(&LeaseRequest { returned_total: 10, ..ask(1, 2) }, 200);
        assert_eq!((a.quota_level(), a.stats().tokens_credited), (Some(10), 0), "a late return credits nothing");
        a.grant(&LeaseRequest { holding_tokens: 10, ..ask(3, 5) }, 200);
        assert_eq!(a.quota_level(), Some(0), "an unknown client claiming tokens takes them from the bucket");
    }
}
