//! The leased client: a [`SharedState`] that spends what it holds and says,
//! as data, what it needs next.
//!
//! The engine calls it synchronously, as it calls the in-memory state. The
//! host pumps it: `pending_request(now)` after each operation (and on a
//! timer), carries the request to the authority, and hands back the answer
//! (`on_grant`) or the failure (`on_unreachable`). At most one request is in
//! flight; one unanswered after `answer_timeout_ms` counts as unreachable.

use core::cell::RefCell;
use serde::Serialize;

use super::super::quota::{Quota, QuotaConfig};
use super::super::rate::{Rate, RateConfig};
use super::super::SharedState;
use super::link;
use super::slots::Slots;
use super::super::Mode;
use super::{FleetConfig, FleetWindow, Grant, LeaseRequest, ThrottleReport, HORIZON_MS};
use crate::policy::backoff::BadRandom;
use crate::policy::number::ms;
use crate::policy::throttle::{Admit, Counts, Throttle, ThrottleConfig};

/// How soon a start refused while a request is in flight is tried again.
const QUEUE_POLL_MS: u64 = 25;

/// A throttling client with new counts reports them at most this many
/// times per window (every two of its buckets: 300 ms by default), and the
/// fleet's picture it admits with is at most that old plus a round trip
/// while it is busy.
const REPORTS_PER_WINDOW: u64 = 5;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientConfig {
    /// This client's id, unique within the fleet.
    pub client: u64,
    /// Retry tokens to hold: a request tops up to this.
    pub tokens: u32,
    /// Ask for tokens when fewer than this are held.
    pub low_tokens: u32,
    /// Start slots to hold (G): a request tops up to this.
    pub slots: u32,
    /// Ask for slots when this many or fewer are held.
    pub low_slots: u32,
    /// Starts allowed ahead of a slot while a refill is in flight.
    pub borrow: u32,
    /// A wait (a reserved start, a time to come back) that ended more than
    /// this late says the process stalled: the start is given up, and the
    /// slots more than this behind are dropped (`observe`).
    pub late_ms: u64,
    pub answer_timeout_ms: u64,
    /// The authority's horizon: the slots it hands out run at most this
    /// far past its last grant (see `reserve`, cut off).
    pub horizon_ms: u64,
    /// After an unreachable authority or a short grant, ask again no sooner.
    pub retry_ms: u64,
    /// Renew held tokens this long before they expire (only while busy).
    pub renew_before_ms: u64,
    /// This policy's retry costs; `None` when it keeps no quota (its
    /// retries then spend nothing from the fleet's bucket).
    pub quota: Option<QuotaConfig>,
    /// The conservative start rate used without slots (typically the
    /// fleet's rate divided by its expected size); `None` when no start
    /// rate is kept.
    pub local_rate: Option<RateConfig>,
    /// The quota and rate this client's requests offer the authority.
    pub offer: FleetConfig,
    /// The retry budget this client keeps on its own while no authority
    /// can run at all (`on_no_authority`): its policy's quota divided
    /// among the fleet; `None`, no retries then.
    pub alone_quota: Option<QuotaConfig>,
    /// Its policy's adaptive throttling (`policy::throttle`), `None` when
    /// off: the window it counts in, reported to the authority, which
    /// answers the fleet's (see `admit`).
    pub throttle: Option<ThrottleConfig>,
}

impl ClientConfig {
    /// A policy's client: the policy's quota costs, and for the starts it
    /// makes without slots its start rate divided among `fleet_size`
    /// clients (the same count over `fleet_size` windows, no burst), and
    /// for when no authority can run its quota's capacity divided among
    /// them too (the costs and refund unchanged). A start may run a
    /// fiftieth of the rate's window late (20 ms a second).
    pub fn for_policy(
        client: u64,
        quota: Option<QuotaConfig>,
        rate: Option<RateConfig>,
        fleet_size: u32,
    ) -> ClientConfig {
        let offer = FleetConfig { quota, rate };
        let late_ms = rate.map_or(ClientConfig::default().late_ms, |r| (r.per_ms / 50).max(1));
        ClientConfig {
            client,
            quota,
            late_ms,
            local_rate: link::local_rate(rate, fleet_size),
            offer,
            alone_quota: link::alone_quota(quota, fleet_size),
            ..ClientConfig::default()
        }
    }

    /// The most starts this client can make outside the authority's
    /// schedule in one window: held slots plus borrowed starts.
    pub fn burst(&self) -> u32 {
        self.slots.saturating_add(self.borrow)
    }
}

impl Default for ClientConfig {
    /// Sized for ≤ 0.05 round trips per operation on a busy client: a
    /// refill of slots brings `slots − low_slots` = 24 starts, and tokens
    /// (four retries' worth) are only asked for when retries spend them.
    fn default() -> Self {
        ClientConfig {
            client: 0,
            tokens: 20,
            low_tokens: 10,
            slots: 32,
            low_slots: 8,
            borrow: 4,
            late_ms: 20,
            answer_timeout_ms: 1_000,
            horizon_ms: HORIZON_MS,
            retry_ms: 500,
            renew_before_ms: 1_000,
            quota: Some(QuotaConfig::default()),
            local_rate: None,
            offer: FleetConfig::default(),
            alone_quota: None,
            throttle: None,
        }
    }
}

/// What a client shows in `stats()` and its reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseStats {
    pub mode: Mode,
    /// Requests sent, and answers received (round trips).
    #[serde(serialize_with = "ms")]
    pub requests: u64,
    #[serde(serialize_with = "ms")]
    pub round_trips: u64,
    #[serde(serialize_with = "ms")]
    pub unreachable: u64,
    /// Answers saying no authority can run for this client (a tab whose
    /// authority's module cannot load): it then retries on a budget of
    /// its own (`ClientConfig::alone_quota`).
    #[serde(serialize_with = "ms")]
    pub unavailable: u64,
    /// Answers to a request no longer awaited (or duplicates): ignored.
    #[serde(serialize_with = "ms")]
    pub stale_answers: u64,
    pub tokens_held: u32,
    pub slots_held: u32,
    /// Starts made ahead of a slot, to be repaid.
    pub debt: u32,
    #[serde(serialize_with = "ms")]
    pub tokens_spent: u64,
    #[serde(serialize_with = "ms")]
    pub tokens_expired: u64,
    /// Starts reserved on held slots (those given up late included: see
    /// `late_starts`).
    #[serde(serialize_with = "ms")]
    pub slot_starts: u64,
    /// Reserved starts given up because their wait ended more than
    /// `late_ms` after their time (the process stalled: a timer fired
    /// late); the operation reserved another.
    #[serde(serialize_with = "ms")]
    pub late_starts: u64,
    /// Slots dropped because a stall slept through them: a process that
    /// wakes does not spend them at once.
    #[serde(serialize_with = "ms")]
    pub slots_missed: u64,
    /// Starts on the local rate: borrowed (repaid from later slots), or in
    /// `Fallback` past `borrow`.
    #[serde(serialize_with = "ms")]
    pub local_starts: u64,
    /// Starts put off (the engine queues them): out of slots and borrowing
    /// while leased, or a later local start not taken while an answer that
    /// may bring a slot is on its way.
    #[serde(serialize_with = "ms")]
    pub refused_starts: u64,
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    seq: u64,
    at_ms: u64,
    want_tokens: u32,
    want_slots: u32,
    returned: u64,
    spent: u64,
    /// The throttling totals it reported.
    counted: Counts,
}

/// The fleet's window as the last grant answered it.
#[derive(Debug, Clone, Copy)]
struct Picture {
    window: FleetWindow,
    /// When it came.
    at_ms: u64,
    /// This client's totals as the request it answered reported them:
    /// what it counted since is not in the picture.
    reported: Counts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StartKind {
    Slot,
    Borrowed,
    Local,
}

#[derive(Debug)]
struct State {
    config: ClientConfig,
    /// Only for the cost of a retry.
    quota: Option<Quota>,
    /// The budget of its own, made at the first answer saying no
    /// authority can run, and kept (with its level) from then on.
    own: Option<Quota>,
    /// The last answer said no authority can run: retries spend `own`.
    alone: bool,
    local: Option<Rate>,
    now_ms: u64,
    seq: u64,
    sent: Option<Sent>,
    next_ask_ms: u64,
    /// A start or a retry since the last request.
    active: bool,
    tokens: u32,
    tokens_expire_ms: u64,
    returned_total: u64,
    refunded_total: u64,
    /// `returned_total` as the authority last acknowledged: a return not
    /// yet acknowledged is a reason to ask.
    returned_acked: u64,
    /// Tokens of the authority's this client ever spent, and as the
    /// authority last acknowledged: a spend not yet acknowledged is a
    /// reason to ask soon (what the authority gives back for a client gone
    /// silent is what it knows unspent).
    spent_total: u64,
    spent_acked: u64,
    slots: Slots,
    debt: u32,
    last_start: Option<(u64, StartKind)>,
    /// The last answer brought fewer slots than asked: the shared schedule
    /// is taken up to the authority's horizon (or this client's share of
    /// it is), so a start ahead of a slot would run ahead of the schedule
    /// by up to that horizon.
    slots_short: bool,
    /// The earliest wait this client set that has not ended: a start in
    /// the future, or a time to come back. A call later than it by more
    /// than `late_ms` says the process stalled (see `observe`).
    waits_ms: Option<u64>,
    /// Slots timed before this are never spent: those a stall slept
    /// through (see `observe`).
    floor_ms: u64,
    /// When this client, leased, lost the authority (until it is leased
    /// again): see `reserve`.
    lost_ms: Option<u64>,
    /// When this client last took a held slot (see `reserve`).
    took_ms: Option<u64>,
    /// Adaptive throttling: its own window (all it decides on without a
    /// fresh picture of the fleet's), its running totals, those the
    /// authority acknowledged, the fleet's picture, and when it last asked.
    window: Option<Throttle>,
    counted: Counts,
    counted_acked: Counts,
    picture: Option<Picture>,
    asked_ms: u64,
    stats: LeaseStats,
}

/// A client of an [`Authority`](super::Authority).
#[derive(Debug)]
pub struct LeasedClient {
    state: RefCell<State>,
}

impl LeasedClient {
    pub fn new(config: ClientConfig) -> LeasedClient {
        let stats = LeaseStats {
            mode: Mode::Local,
            requests: 0,
            round_trips: 0,
            unreachable: 0,
            unavailable: 0,
            stale_answers: 0,
            tokens_held: 0,
            slots_held: 0,
            debt: 0,
            tokens_spent: 0,
            tokens_expired: 0,
            slot_starts: 0,
            late_starts: 0,
            slots_missed: 0,
            local_starts: 0,
            refused_starts: 0,
        };
        LeasedClient {
            state: RefCell::new(State {
                config,
                quota: config.quota.map(Quota::new),
                own: None,
                alone: false,
                local: config.local_rate.map(Rate::new),
                now_ms: 0,
                seq: 0,
                sent: None,
                next_ask_ms: 0,
                active: false,
                tokens: 0,
                tokens_expire_ms: 0,
                returned_total: 0,
                refunded_total: 0,
                returned_acked: 0,
                spent_total: 0,
                spent_acked: 0,
                slots: Slots::default(),
                debt: 0,
                last_start: None,
                slots_short: false,
                waits_ms: None,
                floor_ms: 0,
                lost_ms: None,
                took_ms: None,
                window: config.throttle.map(Throttle::new),
                counted: Counts::default(),
                counted_acked: Counts::default(),
                picture: None,
                asked_ms: 0,
                stats,
            }),
        }
    }

    /// Runs `f` on the state; `or` if the state is busy (a re-entrant call,
    /// which the engine never makes).
    fn with<T>(&self, or: T, f: impl FnOnce(&mut State) -> T) -> T {
        match self.state.try_borrow_mut() {
            Ok(mut s) => f(&mut s),
            Err(_) => or,
        }
    }

    /// The request to send now, if one is due: below a low-water mark,
    /// tokens about to expire while busy, or unused tokens to give back.
    pub fn pending_request(&self, now_ms: u64) -> Option<LeaseRequest> {
        self.with(None, |s| s.pending_request(now_ms))
    }

    /// The authority's answer to the request in flight.
    pub fn on_grant(&self, grant: &Grant, now_ms: u64) {
        self.with((), |s| s.on_grant(grant, now_ms));
    }

    /// The request in flight failed or timed out: fall back.
    pub fn on_unreachable(&self, now_ms: u64) {
        self.with((), |s| {
            s.observe(now_ms);
            s.unreachable(now_ms);
        });
    }

    /// The exchange of request `seq` failed (threw, rejected, answered
    /// something that is not a grant, timed out). Only the request awaited
    /// counts: a failure that arrives after the client gave up on that
    /// request and sent another is stale, as a late answer is.
    pub fn on_failed(&self, seq: u64, now_ms: u64) {
        self.with((), |s| {
            if s.awaited(seq, now_ms) {
                s.unreachable(now_ms);
            }
        });
    }

    /// The carrier answered request `seq` that no authority can run for
    /// this client (a tab that cannot load the authority's module): it
    /// falls back as when unreachable, and its retries spend a budget of
    /// its own, `alone_quota` (made once, kept across later answers), until
    /// an authority answers again. A late answer is stale, as a grant is.
    pub fn on_no_authority(&self, seq: u64, now_ms: u64) {
        self.with((), |s| {
            if !s.awaited(seq, now_ms) {
                return;
            }
            s.fall_back(now_ms);
            s.stats.unavailable = s.stats.unavailable.saturating_add(1);
            s.alone = true;
            if s.own.is_none() {
                s.own = s.config.alone_quota.map(Quota::new);
            }
        });
    }

    /// Gives back every held token (a closing tab, an isolate shutting
    /// down): the last request this client sends.
    pub fn release_all(&self, now_ms: u64) -> LeaseRequest {
        self.with(LeaseRequest::default(), |s| {
            s.observe(now_ms);
            let held = core::mem::take(&mut s.tokens);
            s.give_back(held);
            s.request(now_ms, 0, 0)
        })
    }

    pub fn stats(&self) -> Option<LeaseStats> {
        self.state.try_borrow().ok().map(|s| LeaseStats {
            tokens_held: s.tokens,
            slots_held: s.slots.held(),
            debt: s.debt,
            ..s.stats
        })
    }
}

impl State {
    /// Moves the clock forward: expires grants and a request unanswered for
    /// too long.
    ///
    /// A call more than `late_ms` after the end of a wait this client set
    /// (a start it reserved, a time it said to come back) says the process
    /// stalled: its timers fired late. The held slots more than `late_ms`
    /// behind are then dropped, and so are those of a grant that arrives
    /// now for moments the stall slept through: the queued operations
    /// would otherwise spend them all at once, with the slots of the
    /// moment, and a window would see the starts of the stall's too (the
    /// in-memory rate forgets idle time the same way). Measured with Redis
    /// at 50 a second: 16 starts in 100 ms after a 300 ms stall, the
    /// worst second 61–73. A client that spends its slots at its own pace,
    /// later than their times, without waiting, keeps them: a slow client
    /// of a fast rate asks once per refill.
    fn observe(&mut self, now_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
        let now = self.now_ms;
        if self.tokens > 0 && now >= self.tokens_expire_ms {
            let t = core::mem::take(&mut self.tokens);
            self.give_back(t);
            self.stats.tokens_expired = self.stats.tokens_expired.saturating_add(u64::from(t));
        }
        self.slots.expire(now);
        if let Some(wait) = self.waits_ms.filter(|&w| w <= now) {
            self.waits_ms = None;
            if now > wait.saturating_add(self.config.late_ms) {
                self.floor_ms = self.floor_ms.max(now.saturating_sub(self.config.late_ms));
            }
        }
        let missed = self.slots.drop_before(self.floor_ms);
        self.stats.slots_missed = self.stats.slots_missed.saturating_add(u64::from(missed));
        if self.sent.is_some_and(|s| now.saturating_sub(s.at_ms) >= self.config.answer_timeout_ms) {
            self.unreachable(now);
        }
    }

    /// Whether request `seq` is the one awaited (after moving the clock
    /// forward); an answer to any other is counted as stale.
    fn awaited(&mut self, seq: u64, now_ms: u64) -> bool {
        self.observe(now_ms);
        let awaited = self.sent.is_some_and(|sent| sent.seq == seq);
        if !awaited {
            self.stats.stale_answers = self.stats.stale_answers.saturating_add(1);
        }
        awaited
    }

    /// Tokens that will not be spent; the next request tells the authority.
    fn give_back(&mut self, tokens: u32) {
        self.returned_total = self.returned_total.saturating_add(u64::from(tokens));
    }

    /// Gives up on the request in flight; its running totals travel again
    /// with the next one.
    fn unreachable(&mut self, now_ms: u64) {
        self.fall_back(now_ms);
        self.stats.unreachable = self.stats.unreachable.saturating_add(1);
    }

    /// No request in flight, the fallback budget, the next ask after `retry_ms`.
    fn fall_back(&mut self, now_ms: u64) {
        self.sent = None;
        if self.stats.mode == Mode::Leased {
            self.lost_ms = Some(now_ms);
        }
        self.stats.mode = Mode::Fallback;
        self.next_ask_ms = now_ms.saturating_add(self.config.retry_ms);
    }

    fn pending_request(&mut self, now_ms: u64) -> Option<LeaseRequest> {
        self.observe(now_ms);
        // A spend not yet reported goes out as soon as nothing is in
        // flight while leased, even before `next_ask_ms` (a short answer's
        // pause): each spend makes at most one request; cut off, it waits.
        let report = self.spent_total > self.spent_acked && self.stats.mode == Mode::Leased;
        // New throttling counts: at most `REPORTS_PER_WINDOW` asks a
        // window, leased even before `next_ask_ms` (a short answer's pause,
        // as an outage's empty bucket gives: the fleet's picture is what
        // lets it recover); cut off, they wait too.
        let counts = self.window.as_ref().is_some_and(|w| {
            let every = w.config().window_ms / REPORTS_PER_WINDOW;
            self.counted != self.counted_acked && self.now_ms >= self.asked_ms.saturating_add(every)
        });
        let report = report || (counts && self.stats.mode == Mode::Leased);
        if self.sent.is_some() || (self.now_ms < self.next_ask_ms && !report) {
            return None;
        }
        let c = self.config;
        // Used since the last request, or without a lease (never answered,
        // or cut off): a client in use keeps asking until it holds one.
        let demand = self.active || self.stats.mode != Mode::Leased;
        let held = self.slots.held();
        let want_tokens =
            if demand && self.quota.is_some() { c.tokens.saturating_sub(self.tokens) } else { 0 };
        let want_slots = if demand && self.local.is_some() { c.slots.saturating_sub(held) } else { 0 };
        let renew = demand
            && self.tokens > 0
            && self.now_ms.saturating_add(c.renew_before_ms) >= self.tokens_expire_ms;
        let due = (want_tokens > 0 && self.tokens < c.low_tokens)
            || (want_slots > 0 && (held <= c.low_slots || self.debt > 0))
            || renew
            || self.returned_total > self.returned_acked
            || report
            || counts;
        due.then(|| self.request(self.now_ms, want_tokens, want_slots))
    }

    fn request(&mut self, now_ms: u64, want_tokens: u32, want_slots: u32) -> LeaseRequest {
        self.seq = self.seq.saturating_add(1);
        self.sent = Some(Sent {
            seq: self.seq,
            at_ms: now_ms,
            want_tokens,
            want_slots,
            returned: self.returned_total,
            spent: self.spent_total,
            counted: self.counted,
        });
        self.asked_ms = now_ms;
        self.active = false;
        self.stats.requests = self.stats.requests.saturating_add(1);
        LeaseRequest {
            client: self.config.client,
            seq: self.seq,
            want_tokens,
            holding_tokens: self.tokens,
            returned_total: self.returned_total,
            refunded_total: self.refunded_total,
            spent_total: self.spent_total,
            want_slots,
            leased: now_ms < self.tokens_expire_ms,
            config: self.config.offer,
            throttle: self.window.as_ref().map(|w| ThrottleReport {
                k: w.config().k,
                window_ms: w.config().window_ms,
                requests: self.counted.requests,
                accepts: self.counted.accepts,
            }),
        }
    }

    fn on_grant(&mut self, grant: &Grant, now_ms: u64) {
        self.observe(now_ms);
        let awaited = self.sent.filter(|s| s.seq == grant.seq && grant.client == self.config.client);
        let Some(sent) = awaited.filter(|_| !grant.duplicate) else {
            self.stats.stale_answers = self.stats.stale_answers.saturating_add(1);
            return;
        };
        self.sent = None;
        self.returned_acked = sent.returned;
        self.spent_acked = sent.spent;
        self.counted_acked = sent.counted;
        self.picture = grant.window.map(|window| Picture { window, at_ms: self.now_ms, reported: sent.counted });
        self.stats.mode = Mode::Leased;
        self.lost_ms = None;
        self.alone = false;
        self.stats.round_trips = self.stats.round_trips.saturating_add(1);
        let expires = sent.at_ms.saturating_add(grant.ttl_ms);
        let kept = grant.tokens.min(sent.want_tokens);
        self.give_back(grant.tokens.saturating_sub(kept));
        self.tokens = self.tokens.saturating_add(kept);
        self.tokens_expire_ms = expires;
        self.debt = self.slots.add(grant, sent.want_slots, expires, self.debt);
        self.slots_short = grant.slots < sent.want_slots;
        let short = self.slots_short || grant.tokens < sent.want_tokens;
        self.next_ask_ms = if short { self.now_ms.saturating_add(self.config.retry_ms) } else { self.now_ms };
        self.observe(now_ms);
    }

    /// [`State::reserve`], remembering the wait it sets (see `observe`).
    fn reserve_start(&mut self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        let answer = self.reserve(now_ms, latest_ms);
        // The engine waits for a start in the future, or until a time to
        // come back before its deadline; otherwise it starts or gives up.
        let wait = match answer {
            Ok(at) => Some(at),
            Err(at) => Some(at).filter(|&at| at < latest_ms),
        };
        if let Some(at) = wait.filter(|&at| at > self.now_ms) {
            self.waits_ms = Some(self.waits_ms.map_or(at, |w| w.min(at)));
        }
        answer
    }

    fn reserve(&mut self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        self.observe(now_ms);
        let now = self.now_ms;
        self.active = true;
        let Some(local) = &self.local else { return Ok(now_ms) };
        let leased = self.stats.mode == Mode::Leased;
        // Slots it let pass (its operations were held up elsewhere: a slow
        // upstream, a busy event loop) and now wants faster than the
        // schedule's spacing: a burst that would spend them at once, on
        // top of the slots the others start on now (measured with Redis at
        // 50 a second: 20 starts in 100 ms, 57–67 in the worst second).
        // Dropped. A client slower than the schedule (a slow client of a
        // fast rate) keeps spending its slots late, one at a time.
        let burst = self.slots.drop_burst(now, self.config.late_ms, self.took_ms);
        self.stats.slots_missed = self.stats.slots_missed.saturating_add(u64::from(burst));
        let (result, kind) = match self.slots.take(now, latest_ms) {
            Some(r) => (r, StartKind::Slot),
            // Leased: ahead of a slot while a refill is due, unless the
            // last answer was short (a busy schedule: the slot repaying it
            // could be a horizon away).
            None if leased && !self.slots_short && self.debt < self.config.borrow => {
                (local.reserve(now, latest_ms), StartKind::Borrowed)
            }
            // Cut off from the authority after it answered: the other
            // clients still hold the slots it handed out before, up to a
            // horizon past the loss. Starts of its own now would come on top
            // of them (measured with Redis restarted at 50 a second: 58–64
            // in one second), so the operations wait for its held slots, or
            // for that horizon to pass, or for an answer.
            None if self.stats.mode == Mode::Fallback && now < self.quiet_until() => {
                self.stats.refused_starts = self.stats.refused_starts.saturating_add(1);
                return Err(self.come_back_at(now).min(self.quiet_until()));
            }
            // Then `borrow` starts repaid later, then the local rate alone.
            None if self.stats.mode == Mode::Fallback && self.debt < self.config.borrow => {
                (local.reserve(now, latest_ms), StartKind::Borrowed)
            }
            None if self.stats.mode == Mode::Fallback => (local.reserve(now, latest_ms), StartKind::Local),
            // Before the first answer: one start, repaid from the first
            // slots, and the rest wait for that answer (at most
            // `answer_timeout_ms`). Starts on the local rate would come on
            // top of the schedule the first answers hand out: K fresh
            // clients at R / K each would double the first window.
            None if !leased && self.debt == 0 => (local.reserve(now, latest_ms), StartKind::Borrowed),
            None => {
                // Not now: the engine queues and asks again then (within its
                // deadline), as it waits for a slot of the in-memory rate.
                // That is when the next request goes out, or, with one in
                // flight, a moment later (its answer may bring slots).
                self.stats.refused_starts = self.stats.refused_starts.saturating_add(1);
                return Err(self.come_back_at(now));
            }
        };
        let start = result?;
        // A later local start is not committed to while an answer that may
        // bring a slot sooner is on its way, or a request will go out before
        // it: the operation comes back then (the local rate's schedule is
        // left as it was, so the start is still there for it).
        let sooner = self.sent.is_some() || self.next_ask_ms < start;
        if sooner && kind != StartKind::Slot && start > now.saturating_add(QUEUE_POLL_MS) {
            local.release(start);
            self.stats.refused_starts = self.stats.refused_starts.saturating_add(1);
            return Err(self.come_back_at(now));
        }
        let s = &mut self.stats;
        match kind {
            StartKind::Slot => {
                s.slot_starts = s.slot_starts.saturating_add(1);
                self.took_ms = Some(now);
            }
            StartKind::Borrowed => {
                self.debt = self.debt.saturating_add(1);
                s.local_starts = s.local_starts.saturating_add(1);
            }
            StartKind::Local => s.local_starts = s.local_starts.saturating_add(1),
        }
        self.last_start = Some((start, kind));
        Ok(start)
    }

    /// Until when a client that lost the authority makes no start of its
    /// own: a horizon past the loss (0: it did not lose one).
    fn quiet_until(&self) -> u64 {
        self.lost_ms.map_or(0, |lost| lost.saturating_add(self.config.horizon_ms))
    }

    /// When an operation put off should ask for a start again: a moment
    /// after `now` while a request is in flight (its answer may bring
    /// slots), else when the next request goes out.
    fn come_back_at(&self, now: u64) -> u64 {
        let at = if self.sent.is_some() { now.saturating_add(QUEUE_POLL_MS) } else { self.next_ask_ms };
        at.max(now.saturating_add(1))
    }

    /// A start reserved for `start_ms` is made only within `late_ms` of it:
    /// a wait that ended later says the process stalled, and the start is
    /// given up with the slots the stall slept through (`observe`); the
    /// operation reserves again.
    fn keep_start(&mut self, start_ms: u64, now_ms: u64) -> bool {
        self.observe(now_ms);
        let on_time = self.now_ms <= start_ms.saturating_add(self.config.late_ms);
        if !on_time {
            self.stats.late_starts = self.stats.late_starts.saturating_add(1);
        }
        on_time
    }

    fn release_start(&mut self, start_ms: u64) {
        let Some((start, kind)) = self.last_start.take().filter(|&(s, _)| s == start_ms) else { return };
        if kind == StartKind::Slot {
            self.slots.untake(start);
            return;
        }
        if let Some(local) = &self.local {
            local.release(start);
        }
        if kind == StartKind::Borrowed {
            self.debt = self.debt.saturating_sub(1);
        }
    }

    /// A first attempt may start (`policy::throttle`)? Leased, with a
    /// picture of the fleet's window younger than a window: on that picture
    /// plus what this client counted since it reported (the fleet's own
    /// outage, seen by any client, throttles them all). Otherwise — before
    /// the first answer, cut off, idle a window — on its own window, as an
    /// unshared budget does.
    fn admit(&mut self, now_ms: u64, random: &mut dyn FnMut() -> f64) -> Result<Admit, BadRandom> {
        self.observe(now_ms);
        let now = self.now_ms;
        let leased = self.stats.mode == Mode::Leased;
        let counted = self.counted;
        let picture = self.picture.filter(|_| leased);
        let Some(window) = self.window.as_mut() else { return Ok(Admit::Go) };
        let fresh = picture.filter(|p| now < p.at_ms.saturating_add(window.config().window_ms));
        let seen = fresh.map(|p| (p.window.counts().plus(counted.since(p.reported)), p.window.retry_ms));
        let admit = window.admit_on(now, seen, random)?;
        if admit != Admit::Go {
            self.counted.requests = self.counted.requests.saturating_add(1);
        }
        Ok(admit)
    }

    /// An attempt went out: counted here and in the next report.
    fn sent(&mut self, now_ms: u64) {
        self.observe(now_ms);
        if let Some(window) = self.window.as_mut() {
            window.sent(self.now_ms);
            self.counted.requests = self.counted.requests.saturating_add(1);
        }
    }

    /// An attempt ended: counted here and in the next report.
    fn answered(&mut self, now_ms: u64, accepted: bool, floor: Option<u64>) {
        self.observe(now_ms);
        if let Some(window) = self.window.as_mut() {
            window.record(self.now_ms, accepted, floor);
            self.counted.accepts = self.counted.accepts.saturating_add(u64::from(accepted));
        }
    }

    fn spend_retry(&mut self, after_timeout: bool) -> Option<u32> {
        let Some(q) = &self.quota else { return Some(0) };
        let cost = q.cost(after_timeout);
        self.observe(self.now_ms);
        self.active = true;
        match self.tokens.checked_sub(cost) {
            Some(rest) => {
                self.tokens = rest;
                self.spent_total = self.spent_total.saturating_add(u64::from(cost));
            }
            // No authority can run: the budget of its own.
            None => {
                let own = self.own.as_ref().filter(|_| self.alone)?;
                if !own.try_spend(cost) {
                    return None;
                }
            }
        }
        self.stats.tokens_spent = self.stats.tokens_spent.saturating_add(u64::from(cost));
        Some(cost)
    }

    /// The tokens held, plus the budget of its own while no authority can run.
    fn quota_level(&self) -> Option<u32> {
        let own = self.own.as_ref().filter(|_| self.alone).map_or(0, Quota::level);
        self.quota.as_ref().map(|_| self.tokens.saturating_add(own))
    }

    fn on_success(&mut self, last_retry_cost: Option<u32>) {
        // Without an authority the refund is the own budget's: no
        // authority's bucket paid for these retries.
        if let Some(own) = self.own.as_ref().filter(|_| self.alone) {
            own.on_success(last_retry_cost);
        } else if let Some(c) = self.config.quota {
            let refund = last_retry_cost.unwrap_or(c.success_refund);
            self.refunded_total = self.refunded_total.saturating_add(u64::from(refund));
        }
    }
}

impl SharedState for LeasedClient {
    /// Pays from the tokens held and unexpired (as of the latest time
    /// seen); never waits, never asks.
    fn spend_retry(&self, after_timeout: bool) -> Option<u32> {
        self.with(None, |s| s.spend_retry(after_timeout))
    }

    /// Refunds travel to the authority with the next request.
    fn on_success(&self, last_retry_cost: Option<u32>) {
        self.with((), |s| s.on_success(last_retry_cost));
    }

    /// The tokens this client holds (and, while no authority can run,
    /// what its own budget has left).
    fn quota_level(&self) -> Option<u32> {
        self.with(None, |s| s.quota_level())
    }

    /// The earliest held slot. Without one: leased, a borrowed start on the
    /// local rate (up to `borrow`, and only if the last answer was not
    /// short); before the first answer, one borrowed start; cut off, up to
    /// `borrow` borrowed, then the local rate alone. Otherwise a refusal
    /// with the time to come back, as the in-memory rate answers a start
    /// past the deadline.
    fn reserve_start(&self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        self.with(Err(latest_ms), |s| s.reserve_start(now_ms, latest_ms))
    }

    fn release_start(&self, start_ms: u64) {
        self.with((), |s| s.release_start(start_ms));
    }

    /// Within `late_ms` of its time; a later one is given up with the held
    /// slots as far behind (counted in `late_starts`, `slots_missed`) and
    /// the engine reserves again.
    fn keep_start(&self, start_ms: u64, now_ms: u64) -> bool {
        self.with(true, |s| s.keep_start(start_ms, now_ms))
    }

    /// On the fleet's window, as the last grant pictured it, plus what
    /// this client counted since; else on its own (see `State::admit`).
    fn admit(&self, now_ms: u64, random: &mut dyn FnMut() -> f64) -> Result<Admit, BadRandom> {
        self.with(Ok(Admit::Go), |s| s.admit(now_ms, random))
    }

    fn sent(&self, now_ms: u64) {
        self.with((), |s| s.sent(now_ms));
    }

    fn answered(&self, now_ms: u64, accepted: bool, floor: Option<u64>) {
        self.with((), |s| s.answered(now_ms, accepted, floor));
    }
}
