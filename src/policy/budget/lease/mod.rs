//! Leases: one retry quota and one start rate shared by a fleet of clients
//! (every isolate of a Worker, every tab of an origin), decided in Rust.
//!
//! # Why leases
//!
//! A budget kept in one isolate is multiplied by the number of isolates: K
//! isolates each start with a full bucket, so an outage sees K times the
//! retries the quota meant to allow, and a start rate set to respect an
//! upstream's limit is exceeded K-fold. One shared authority fixes that, but
//! asking it before every request puts a round trip (a Durable Object call,
//! a `BroadcastChannel` exchange) on every request's path, and makes every
//! request fail with the authority.
//!
//! A lease trades a bounded error for that round trip. The [`Authority`]
//! keeps the one true budget (today's [`Quota`] token bucket and [`Rate`]
//! GCRA schedule, unchanged) and hands out small grants: retry tokens taken
//! from its bucket, and start slots reserved in its schedule. A
//! [`LeasedClient`] spends from what it holds, synchronously, and asks for
//! more *before* it runs out (a low-water mark), so the common path never
//! waits on the authority. Everything is sans-IO: the client emits a
//! [`LeaseRequest`] as data, the host carries it (RPC, a message), the
//! authority answers with a [`Grant`], and the host hands that back. Time is
//! a parameter (`now_ms`), so the whole fleet runs on virtual time in tests.
//!
//! # The bounds
//!
//! With K clients, a grant of at most G start slots each, a shared rate of R
//! starts per `per_ms` and an authority burst B:
//!
//! - **Retries.** Every retry token spent was taken from the authority's
//!   bucket; a client never creates one. In an outage (no successes, no
//!   refunds) the fleet spends at most the bucket's capacity — the budget of
//!   *one* isolate, not K. Leases add no slack here; the test allows K grants.
//!   Whatever the clients' policies offer (see *One budget* below), the
//!   bucket is made once, by the first request that offers a quota, and no
//!   later request refills it: in tokens, the fleet spends at most that
//!   first capacity; in retries, that divided by the smallest `retry_cost`
//!   among the policies (a policy without a quota spends no tokens, and its
//!   retries are its own).
//! - **Starts.** A slot is a moment of the authority's schedule; a client
//!   starts on it at or after that moment, never before. A client holds at
//!   most G slots and makes at most `borrow` starts ahead of a slot while a
//!   refill is in flight (repaid from its next slots), so the starts made on
//!   the schedule in any window of `per_ms` number at most
//!   `R + (B − 1) + K × burst`, where `burst = G + borrow`
//!   ([`ClientConfig::burst`]): the schedule's own count plus what each
//!   client carries into the window. A leased client out of slots borrows
//!   only if its last answer was not short: a short one says the schedule
//!   is taken up to the horizon, and a start borrowed then would run up to
//!   a horizon ahead of the slot that repays it. Otherwise it does not
//!   start: it answers `reserve_start` with the time to ask again (when its
//!   refill goes out, or shortly after, while one is in flight), and the
//!   engine queues the operation until then, within its deadline, as it
//!   queues for the in-memory rate. A fresh client ([`Mode::Local`](super::Mode::Local)) makes
//!   at most `borrow` starts before its first answer (repaid from its first
//!   slots) and queues the rest for that answer: were it to start on its
//!   local rate, K fresh clients at R/K each would add R to the schedule the
//!   first answers hand out (measured: 118 starts in the first second at R
//!   = 100). So K fresh clients whose answers come within a fraction of the
//!   horizon start at most `R + (B − 1) + K × borrow` in any window, the
//!   first included (tests/fleet.rs). Only clients cut off from the
//!   authority ([`Mode::Fallback`](super::Mode::Fallback)) start on their conservative
//!   `local_rate`, at most one local rate's worth (+1) each per window:
//!   with `local_rate` = R/K, at most `R + K` while the authority is away.
//!   A later local start is not committed to while an answer is on its way
//!   or the next request goes out first: the operation comes back then, so
//!   a burst that arrives before an answer is spread on the slots it
//!   brings, not on the slow local rate. A client cut off after it was
//!   leased starts only on its held slots for a horizon ([`HORIZON_MS`]):
//!   every slot the authority handed out before runs out by then, and a
//!   local start would come on top of the others' held slots.
//! - **Moments.** A slot is a moment of the schedule, not a credit. A
//!   start whose wait ended more than `late_ms` (a fiftieth of the rate's
//!   window) after its time is given up, and the slots the stall slept
//!   through are dropped ([`SharedState::keep_start`]); so are slots a
//!   client let pass and then wants faster than their spacing. Spent at
//!   once, either would add to the window the slots the others start on
//!   then. So after a cold start, a stall or a lost authority, the busy
//!   fleet's window holds the schedule's R plus what its clients start
//!   ahead (one each before a first answer, `borrow` after a grant that
//!   was not short) and `late_ms` of slots (`tests/fleet.rs`: within 1.1 R
//!   for four clients at R = 50 and 100). A client slower than the
//!   schedule keeps spending its slots late, one at a time (the K × burst
//!   term above): a slow client of a fast rate asks once per refill.
//! - **A lost authority.** An authority without state (a Redis restarted
//!   without persistence) that hears from a client holding a grant it does
//!   not know ([`LeaseRequest::leased`]) starts its schedule a horizon after
//!   its first request: past every slot its predecessor handed out.
//! - **Staleness.** A grant is valid for the authority's `ttl_ms`, counted
//!   from when the client *sent* its request (so never later than the
//!   authority's own clock would say). Past it, held tokens are no longer
//!   spent and are returned; held slots are dropped. A client learns the time
//!   from every call that carries it (`reserve_start` before each attempt,
//!   `pending_request`, `on_grant`, `on_unreachable`); a retry is paid with
//!   the latest time seen, so a token is never spent more than one attempt
//!   (`attemptMs`) after its grant expired.
//! - **Clocks.** The bounds assume the clients' clocks and the authority's
//!   agree (tabs share one; Workers and their Durable Object are NTP-close).
//!   A skew of s ms moves slots by s and widens the staleness bound by s.
//! - **Returns.** Unused tokens go back with the next request and are
//!   credited exactly once: a request carries the running total of tokens
//!   the client ever gave back and the authority credits only what it has
//!   not seen, so a lost request's return arrives with the next one and a
//!   duplicated or late one credits nothing. It never credits a client more
//!   than it believes that client holds, and a request it has seen (same or
//!   older per-client `seq`) grants nothing. Only tokens granted in an
//!   answer that never arrives (or arrives after the client gave up on it)
//!   are lost to the bucket: a conservative loss that successes refill.
//! - **Killed clients.** A client reports its spends (`spent_total`, a
//!   running total credited like `returned_total`) and, leased, asks as soon
//!   as none is in flight after a spend. The authority keeps per client the
//!   tokens granted and not heard spent or returned; a client unheard for
//!   two `ttl_ms` (counted only while the authority hears from someone:
//!   after a `ttl_ms` without any request, from the next one) is taken for
//!   dead and that remainder goes back to the bucket, once. The grant had
//!   expired a `ttl_ms` before; the second is margin for skew, a retry paid
//!   at the time seen before its attempt, a late answer. A request still
//!   claiming tokens given back takes them from the bucket again (as far as
//!   it has them). So in an outage the fleet spends at most the capacity
//!   plus, per client killed (or cut off alone for two `ttl_ms`), the
//!   tokens it spent and the authority never heard of: those of its last
//!   request's round trip, at most what it held (`tests/fleet.rs`).
//!
//! # One budget
//!
//! Every request offers its policy's quota and rate ([`FleetConfig`]); the
//! authority keeps, for each client, its latest offer, and puts in force the
//! strictest of the offers heard within a grant's lifetime (`ttl_ms`),
//! field by field ([`FleetConfig::strictest`]): the smallest capacity, the
//! largest costs (kept for the record: each client pays its own policy's
//! costs from the tokens it holds), the slowest rate, the smallest burst.
//! A field no recent
//! client offers keeps what was in force, so a policy with `quota: false`
//! (or without a rate) spends nothing from the bucket and never removes it.
//! A change keeps the level (clamped to a smaller capacity, never raised)
//! and the schedule. Why not the first configuration seen: a Durable
//! Object outlives deployments, and a budget fixed by its first request
//! would never follow a change of the policies; the strictest recent offer
//! follows a redeploy once the old isolates have been silent for a
//! `ttl_ms`, and no request can loosen a budget another live policy asks
//! to be stricter, nor refill it. Requests offering something other than
//! what is in force are counted (`differing_configs`), as are changes.
//!
//! # When the authority is gone
//!
//! A request unanswered within `answer_timeout_ms` (or reported with
//! [`LeasedClient::on_unreachable`]) puts the client in [`Mode::Fallback`](super::Mode::Fallback):
//! first attempts are never blocked (they start on the held slots, then, a
//! horizon after the loss, on a conservative local rate, `local_rate`,
//! typically R/K), retries only from
//! the tokens still held and unexpired — after expiry, none. The client asks
//! again every `retry_ms`; the first answer puts it back in [`Mode::Leased`](super::Mode::Leased).
//!
//! When the carrier answers that no authority can run for the client at all
//! ([`LeasedClient::on_no_authority`]: a tab that cannot load the
//! authority's module), "none" would mean no retry ever, in every tab, and
//! nothing the fleet shares to protect. The client falls back as above, and
//! its retries spend a budget of its own, [`ClientConfig::alone_quota`]: its
//! policy's quota with the capacity divided among `fleet_size`, as its local
//! rate is: in an outage, `fleet_size` such clients spend at most one
//! capacity between them, the shared bucket's bound. The budget is made
//! once and keeps its level (its successes refund it, not the authority's
//! bucket) until an authority answers.
//!
//! # Adaptive throttling, shared
//!
//! The throttling window (`policy::throttle`) is the fleet's: one picture
//! of the upstream, whichever client saw it fail. The design, and why it
//! is exact:
//!
//! - A client counts, in a window of its own, every request and every
//!   accept, and keeps running totals of both. Each request carries the
//!   totals ([`ThrottleReport`]); the authority keeps per client the
//!   totals already credited ([`HolderState::counted`]) and adds only
//!   their increase to the fleet's window, in the bucket of its arrival —
//!   the pattern of `returned_total`: a lost request's counts come with
//!   the next, a duplicate or late one adds nothing, nothing is counted
//!   twice. A client's first request ever is credited whole; a client the
//!   authority does not know past that (forgotten, or known to a lost
//!   state) is counted from its next increase.
//! - Every grant to a request that reported answers the fleet's window
//!   ([`FleetWindow`]: its requests and accepts, and `Throttle::retry_at`
//!   under the asking client's `K`). The client admits a first attempt on
//!   those counts plus what it counted since the request it answers: its
//!   own later requests and accepts are not in the picture, the others'
//!   are not known yet. No count is in both.
//! - A picture is used while leased and younger than a window; otherwise
//!   (before the first answer, cut off, idle a window) the client's own
//!   window decides, as an unshared policy's does.
//! - A client with new counts asks at most five times a window (every
//!   300 ms by default), past a short answer's pause too: a busy client's
//!   picture is at most that old plus a round trip, an idle one asks
//!   nothing. The authority keeps the window with the request's width
//!   (a change starts it anew with its counts) and in its state
//!   ([`AuthorityState::window`]), so a restored one goes on with it.
//!
//! # Defaults, and why
//!
//! [`ClientConfig::default`]: hold 32 slots and ask at 8 or fewer, so a
//! refill brings about 24 starts and a busy client makes about one round
//! trip per 24 operations (0.042, measured in `tests/fleet.rs`; the target
//! is 0.05); hold 20 tokens (four retries at the default cost of 5) and ask
//! below 10 — on the success path tokens are not spent, and their renewal
//! (every `ttl_ms`, only while busy) rides on slot refills; borrow 4; give
//! the authority 1 s to answer and ask again 500 ms after a failure or a
//! short answer. [`AuthorityConfig::default`]: grants last 10 s, slots are
//! reserved at most 1 s ahead, at most 64 tokens and 64 slots a grant, and a
//! client silent for 10 minutes is forgotten.
//!
//! [`Quota`]: super::quota::Quota
//! [`Rate`]: super::rate::Rate
//! [`SharedState::keep_start`]: super::SharedState::keep_start

mod authority;
mod client;
pub mod link;
mod persist;
mod slots;
pub mod swap;

use serde::Serialize;

use super::quota::QuotaConfig;
use super::rate::RateConfig;
use crate::policy::number::ms;
use crate::policy::throttle::{Counts, ThrottleConfig};

pub use authority::{Authority, AuthorityConfig};

/// How far ahead of a grant its slots may be reserved
/// ([`AuthorityConfig::horizon_ms`]): a client that loses the authority
/// knows every slot handed out before runs out this long after
/// ([`ClientConfig::horizon_ms`]).
pub const HORIZON_MS: u64 = 1_000;
pub use client::{ClientConfig, LeaseStats, LeasedClient};
pub use persist::{AuthorityState, AuthorityStats, HolderState};

/// What a fleet shares, as one client offers it: its policy's quota and
/// start rate (`None`: this policy keeps none). Every request carries it,
/// so the authority (a Durable Object, a leader tab) needs no
/// configuration of its own and follows a redeploy; what it keeps is the
/// strictest of the offers heard within a grant's lifetime, never one
/// request's word ([`FleetConfig::strictest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetConfig {
    pub quota: Option<QuotaConfig>,
    pub rate: Option<RateConfig>,
}

impl FleetConfig {
    /// The stricter of two offers, field by field: a policy without a
    /// quota (or a rate) offers none and takes nothing away. Quotas: the
    /// smaller capacity and refund, the larger costs. Rates: the slower
    /// rate (fewer requests per ms, compared exactly), the smaller burst.
    pub fn strictest(self, other: FleetConfig) -> FleetConfig {
        let quota = match (self.quota, other.quota) {
            (Some(a), Some(b)) => Some(QuotaConfig {
                capacity: a.capacity.min(b.capacity),
                retry_cost: a.retry_cost.max(b.retry_cost),
                timeout_cost: a.timeout_cost.max(b.timeout_cost),
                success_refund: a.success_refund.min(b.success_refund),
            }),
            (a, b) => a.or(b),
        };
        let rate = match (self.rate, other.rate) {
            (Some(a), Some(b)) => {
                // a.requests / a.per_ms <= b.requests / b.per_ms, in u128.
                let a_slower = u128::from(a.requests).saturating_mul(u128::from(b.per_ms))
                    <= u128::from(b.requests).saturating_mul(u128::from(a.per_ms));
                let slower = if a_slower { a } else { b };
                Some(RateConfig { burst: a.burst.min(b.burst), ..slower })
            }
            (a, b) => a.or(b),
        };
        FleetConfig { quota, rate }
    }
}

/// What a client says of the upstream with each request, when its policy
/// throttles (`policy::throttle`): its `K` and window (the fleet's window
/// is kept as the latest request says) and the running totals of the
/// requests it counted and of those the upstream accepted, credited like
/// `returned_total` (each increase once).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThrottleReport {
    pub k: f64,
    #[serde(serialize_with = "ms")]
    pub window_ms: u64,
    #[serde(serialize_with = "ms")]
    pub requests: u64,
    #[serde(serialize_with = "ms")]
    pub accepts: u64,
}

impl ThrottleReport {
    pub fn config(&self) -> ThrottleConfig {
        ThrottleConfig { k: self.k, window_ms: self.window_ms }
    }

    pub fn totals(&self) -> Counts {
        Counts { requests: self.requests, accepts: self.accepts }
    }
}

/// The fleet's window as the authority answers it: its counts when it
/// granted, and the first moment at which, with no new requests, it would
/// reject fewer than half (`Throttle::retry_at`, under the asking
/// client's `K`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetWindow {
    #[serde(serialize_with = "ms")]
    pub requests: u64,
    #[serde(serialize_with = "ms")]
    pub accepts: u64,
    #[serde(serialize_with = "ms")]
    pub retry_ms: u64,
}

impl FleetWindow {
    pub fn counts(&self) -> Counts {
        Counts { requests: self.requests, accepts: self.accepts }
    }
}

/// A client's ask, as plain data (a Durable Object call's or a message's
/// body). Integers travel as JS numbers (`ms` writes them as `f64`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseRequest {
    /// Who asks; unique within the fleet (a random id chosen at start-up).
    #[serde(serialize_with = "ms")]
    pub client: u64,
    /// Increases with every request of this client, from 1.
    #[serde(serialize_with = "ms")]
    pub seq: u64,
    /// Retry tokens wanted on top of `holding_tokens`.
    pub want_tokens: u32,
    /// Tokens the client still holds and may spend; the grant renews them.
    pub holding_tokens: u32,
    /// Every unused token this client ever gave back (expired or released),
    /// a running total: the authority credits only its increase, so a lost
    /// message's return travels again with the next one, and a duplicated
    /// or late one credits nothing twice.
    #[serde(serialize_with = "ms")]
    pub returned_total: u64,
    /// Every token this client's successes ever refunded, a running total
    /// credited the same way.
    #[serde(serialize_with = "ms")]
    pub refunded_total: u64,
    /// Every token this client ever spent on a retry, a running total
    /// credited the same way (0 from a client that does not say): what
    /// the authority counts as no longer held, so that what it gives back
    /// for a client gone silent is only what that client had not spent.
    #[serde(serialize_with = "ms")]
    pub spent_total: u64,
    /// Start slots wanted.
    pub want_slots: u32,
    /// The client holds a grant that has not expired (one answered within
    /// a ttl). An authority that does not know such a client has lost its
    /// state (a Redis restarted without persistence): the slots handed out
    /// before may run a horizon past its first request, and its schedule
    /// starts there ([`Authority::grant`]).
    pub leased: bool,
    /// The quota and rate this client's policy asks for (an offer: see
    /// [`FleetConfig::strictest`]).
    pub config: FleetConfig,
    /// What it counted of the upstream, when its policy throttles (absent
    /// from a client of an older version, or one that does not throttle:
    /// no counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle: Option<ThrottleReport>,
}

/// The authority's answer, as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    #[serde(serialize_with = "ms")]
    pub client: u64,
    /// The request answered.
    #[serde(serialize_with = "ms")]
    pub seq: u64,
    /// A request already seen: nothing granted, nothing credited.
    pub duplicate: bool,
    /// New retry tokens.
    pub tokens: u32,
    /// New start slots: `slots` starts spread evenly from `first_slot_ms`
    /// to `last_slot_ms`, each usable at or after its own time.
    pub slots: u32,
    #[serde(serialize_with = "ms")]
    pub first_slot_ms: u64,
    #[serde(serialize_with = "ms")]
    pub last_slot_ms: u64,
    /// How long the grant (and every token the client holds) is valid,
    /// counted from when the request was sent.
    #[serde(serialize_with = "ms")]
    pub ttl_ms: u64,
    /// The fleet's window, to a request that reported counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<FleetWindow>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strictest_of_two_offers_compares_rates_across_windows_and_ignores_what_is_not_offered() {
        let per_second = RateConfig { requests: 10, per_ms: 1_000, burst: 4 };
        let per_minute = RateConfig { requests: 500, per_ms: 60_000, burst: 2 };
        let a = FleetConfig { quota: Some(QuotaConfig { capacity: 50, ..QuotaConfig::default() }), rate: Some(per_second) };
        let b = FleetConfig { quota: None, rate: Some(per_minute) };
        let s = a.strictest(b);
        assert_eq!(s.rate, Some(RateConfig { burst: 2, ..per_minute }), "8.3 a second is slower than 10");
        assert_eq!(s.quota, a.quota, "an offer without a quota takes nothing away");
        let c = FleetConfig {
            quota: Some(QuotaConfig { capacity: 900, retry_cost: 7, timeout_cost: 1, success_refund: 0 }),
            rate: None,
        };
        let q = a.strictest(c).quota.unwrap();
        assert_eq!((q.capacity, q.retry_cost, q.timeout_cost, q.success_refund), (50, 7, 10, 0));
        assert_eq!(FleetConfig::default().strictest(FleetConfig::default()), FleetConfig::default());
    }
}
