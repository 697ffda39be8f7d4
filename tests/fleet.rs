//! A fleet on virtual time: K leased clients and one authority, a message
//! delay each way, a switch that makes the authority unreachable, and the
//! same workload against per-isolate budgets for comparison.
//!
//! Figures: `cargo test --test fleet -- --nocapture`.

mod support;

use std::collections::BTreeMap;
use std::rc::Rc;

use proptest::prelude::*;
use saferetry::engine::{run, Budget, Call};
use saferetry::policy::budget::lease::{
    Authority, AuthorityConfig, ClientConfig, FleetConfig, FleetWindow, Grant, LeaseRequest, LeasedClient,
    ThrottleReport,
};
use saferetry::policy::budget::quota::QuotaConfig;
use saferetry::policy::budget::rate::{Rate, RateConfig};
use saferetry::policy::budget::Mode;
use saferetry::policy::budget::{InMemory, SharedState, Stats};
use saferetry::policy::classify::Safety;
use saferetry::policy::options::Options;
use saferetry::policy::reason::Reason;
use saferetry::policy::throttle::ThrottleConfig;
use support::sim::{Script, Sim, SimClock, Step, EPOCH_MS};

#[derive(Clone, Copy)]
struct Scenario {
    k: usize,
    /// Operations arrive until then; the run goes on until all have ended.
    run_ms: u64,
    /// One operation per client every `every_ms`.
    every_ms: u64,
    attempt_ms: u64,
    backoff_ms: u64,
    max_attempts: u32,
    total_ms: u64,
    /// Does this attempt fail? (client, operation, attempt, time)
    fails: fn(usize, usize, u32, u64) -> bool,
    /// One way, each message.
    delay_ms: u64,
    /// The authority drops every request in `[from, to)`.
    away: Option<(u64, u64)>,
    /// ... or refuses it at once (a refused connection): the client hears
    /// of the failure after `delay_ms`.
    refused: bool,
    /// Every request reaches the authority twice.
    duplicate: bool,
    /// The first `n` clients are killed at `ms` (SIGKILL: nothing more
    /// sent, nothing received, their operations end there).
    killed: Option<(usize, u64)>,
    /// The authority loses its state at `ms` (a Redis restarted without
    /// persistence): a fresh one answers from then on.
    restart: Option<u64>,
    /// The first `n` clients stall in `[from, to)` (a process busy
    /// compiling, a loaded machine): nothing of theirs runs, their timers
    /// and messages wait for `to`.
    stall: Option<(usize, u64, u64)>,
    authority: AuthorityConfig,
    client: ClientConfig,
}

fn never(_: usize, _: usize, _: u32, _: u64) -> bool {
    false
}

fn always(_: usize, _: usize, _: u32, _: u64) -> bool {
    true
}

impl Scenario {
    fn new(k: usize) -> Scenario {
        Scenario {
            k,
            run_ms: 10_000,
            every_ms: 20,
            attempt_ms: 50,
            backoff_ms: 100,
            max_attempts: 3,
            total_ms: 4_000,
            fails: never,
            delay_ms: 5,
            away: None,
            refused: false,
            duplicate: false,
            killed: None,
            restart: None,
            stall: None,
            authority: AuthorityConfig::default(),
            client: ClientConfig::default(),
        }
    }

    /// Four seconds of arrivals, the authority away for `(from, length)`.
    fn short(k: usize, every_ms: u64, delay_ms: u64, away: Option<(u64, u64)>) -> Scenario {
        let mut s = Scenario::new(k);
        s.run_ms = 4_000;
        s.every_ms = every_ms;
        s.delay_ms = delay_ms;
        s.away = away.map(|(from, len)| (from, from + len));
        s
    }

    /// A shared start rate of `requests` per second; each client's local
    /// fallback share is `requests / k`.
    fn rate(mut self, requests: u32) -> Scenario {
        self.authority.rate = Some(RateConfig { requests, per_ms: 1000, burst: 1 });
        let share = (requests / self.k as u32).max(1);
        self.client.local_rate = Some(RateConfig { requests: share, per_ms: 1000, burst: 1 });
        self
    }

    fn away(&self, t: u64) -> bool {
        self.away.is_some_and(|(from, to)| (from..to).contains(&t))
    }

    /// When client `c`, stalled at `t`, runs again.
    fn stalled(&self, c: usize, t: u64) -> Option<u64> {
        self.stall.filter(|&(n, from, to)| c < n && (from..to).contains(&t)).map(|(_, _, to)| to)
    }
}

enum Budgets {
    Leased { authority: Box<Authority>, clients: Vec<LeasedClient> },
    PerIsolate(Vec<InMemory>),
}

impl Budgets {
    fn leased(s: &Scenario) -> Budgets {
        let clients =
            (0..s.k).map(|i| LeasedClient::new(ClientConfig { client: i as u64 + 1, ..s.client })).collect();
        Budgets::Leased { authority: Box::new(Authority::new(s.authority)), clients }
    }

    /// What a fleet has today: every isolate with the whole budget.
    fn per_isolate(s: &Scenario) -> Budgets {
        Budgets::PerIsolate((0..s.k).map(|_| InMemory::new(s.authority.quota, s.authority.rate)).collect())
    }

    fn state(&self, i: usize) -> &dyn SharedState {
        match self {
            Budgets::Leased { clients, .. } => &clients[i],
            Budgets::PerIsolate(states) => &states[i],
        }
    }

    fn client(&self, i: usize) -> Option<&LeasedClient> {
        match self {
            Budgets::Leased { clients, .. } => clients.get(i),
            Budgets::PerIsolate(_) => None,
        }
    }
}

#[derive(Clone, Copy)]
enum Ev {
    Decide,
    Begin,
    End,
}

struct Op {
    client: usize,
    arrived: u64,
    /// The start its last reservation was for.
    reserved: u64,
    attempt: u32,
    last_cost: Option<u32>,
    ended: Option<u64>,
}

#[derive(Default, Debug)]
struct Outcome {
    ops: u64,
    first_attempts: u64,
    retries: u64,
    succeeded: u64,
    /// Operations whose start was refused (queue-exceeds-budget).
    refused: u64,
    /// ... of which first attempts refused while not leased.
    refused_unleased_first: u64,
    /// Retries the quota refused.
    quota_refused: u64,
    unfinished: u64,
    /// Longest time from an operation's arrival to its end.
    longest_op_ms: u64,
    starts: Vec<u64>,
    retry_starts: Vec<u64>,
    /// Every client's mode, each second.
    modes: Vec<Vec<Mode>>,
    round_trips: u64,
    requests: u64,
    tokens_spent: u64,
    tokens_expired: u64,
    /// Tokens the killed clients held when killed, and spent without the
    /// authority hearing of it (after the last request of theirs it read).
    killed_held: u64,
    killed_unreported: u64,
}

impl Outcome {
    /// The most starts in any window of `ms`.
    fn max_in_window(&self, ms: u64) -> u64 {
        let mut starts = self.starts.clone();
        starts.sort_unstable();
        let mut lo = 0;
        let mut best = 0;
        for hi in 0..starts.len() {
            while starts[hi] - starts[lo] >= ms {
                lo += 1;
            }
            best = best.max(hi + 1 - lo);
        }
        best as u64
    }

    /// Attempts per operation.
    fn amplification(&self) -> f64 {
        (self.first_attempts + self.retries) as f64 / self.ops.max(1) as f64
    }

    fn round_trips_per_op(&self) -> f64 {
        self.round_trips as f64 / self.ops.max(1) as f64
    }
}

/// Runs a scenario millisecond by millisecond; returns what happened and
/// the budgets as they ended.
fn simulate(s: &Scenario, budgets: &mut Budgets) -> Outcome {
    let mut out = Outcome::default();
    let mut ops: Vec<Op> = Vec::new();
    let mut events: BTreeMap<u64, Vec<(usize, Ev)>> = BTreeMap::new();
    let mut to_authority: BTreeMap<u64, Vec<LeaseRequest>> = BTreeMap::new();
    let mut to_clients: BTreeMap<u64, Vec<Grant>> = BTreeMap::new();
    let mut failures: BTreeMap<u64, Vec<(usize, u64)>> = BTreeMap::new();
    let end_ms = s.run_ms + s.total_ms + s.attempt_ms + 2_000;
    let dead = |c: usize, t: u64| s.killed.is_some_and(|(n, at)| c < n && t >= at);
    // The spends each client reported in the requests the authority read.
    let mut reported = vec![0u64; s.k];
    for t in 0..end_ms {
        let now = EPOCH_MS + t;
        if let Budgets::Leased { authority, clients } = budgets {
            if s.restart == Some(t) {
                **authority = Authority::new(s.authority);
            }
            for req in to_authority.remove(&t).unwrap_or_default() {
                if !s.away(t) {
                    let grant = authority.grant(&req, now);
                    let r = &mut reported[req.client as usize - 1];
                    *r = (*r).max(req.spent_total);
                    to_clients.entry(t + s.delay_ms).or_default().push(grant);
                } else if s.refused {
                    failures.entry(t + s.delay_ms).or_default().push((req.client as usize - 1, req.seq));
                }
            }
            for (c, seq) in failures.remove(&t).unwrap_or_default() {
                if let Some(to) = s.stalled(c, t) {
                    failures.entry(to).or_default().push((c, seq));
                } else if !dead(c, t) {
                    clients[c].on_failed(seq, now);
                }
            }
            for grant in to_clients.remove(&t).unwrap_or_default() {
                if let Some(to) = s.stalled(grant.client as usize - 1, t) {
                    to_clients.entry(to).or_default().push(grant);
                } else if !dead(grant.client as usize - 1, t) {
                    clients[grant.client as usize - 1].on_grant(&grant, now);
                }
            }
            if s.killed.is_some_and(|(_, at)| at == t) {
                for (c, st) in clients
                    .iter()
                    .enumerate()
                    .filter(|&(c, _)| dead(c, t))
                    .filter_map(|(c, x)| Some((c, x.stats()?)))
                {
                    out.killed_held += u64::from(st.tokens_held);
                    out.killed_unreported += st.tokens_spent - reported[c];
                }
            }
            for (_, c) in
                clients.iter().enumerate().filter(|&(i, _)| !dead(i, t) && s.stalled(i, t).is_none())
            {
                if let Some(req) = c.pending_request(now) {
                    // Sent after this millisecond's deliveries: arrives at the next at the soonest.
                    let at = t + s.delay_ms.max(1);
                    to_authority.entry(at).or_default().push(req);
                    if s.duplicate {
                        to_authority.entry(at + 3).or_default().push(req);
                    }
                }
            }
            if t % 1000 == 0 {
                out.modes.push(clients.iter().filter_map(|c| c.stats()).map(|st| st.mode).collect());
            }
        }
        if t < s.run_ms {
            for c in (0..s.k).filter(|&c| !dead(c, t)) {
                if (t + c as u64 * 7) % s.every_ms == 0 {
                    ops.push(Op {
                        client: c,
                        arrived: t,
                        reserved: t,
                        attempt: 0,
                        last_cost: None,
                        ended: None,
                    });
                    events.entry(t).or_default().push((ops.len() - 1, Ev::Decide));
                    out.ops += 1;
                }
            }
        }
        while let Some(due) = events.remove(&t) {
            for (i, ev) in due {
                let op = &mut ops[i];
                if dead(op.client, t) {
                    op.ended = op.ended.or(Some(t));
                    continue;
                }
                if let Some(to) = s.stalled(op.client, t) {
                    events.entry(to).or_default().push((i, ev));
                    continue;
                }
                let state = budgets.state(op.client);
                let deadline = op.arrived + s.total_ms;
                match ev {
                    Ev::Decide => match state.reserve_start(now, EPOCH_MS + deadline) {
                        Ok(start) => {
                            op.reserved = start - EPOCH_MS;
                            events.entry(op.reserved).or_default().push((i, Ev::Begin));
                        }
                        // Queued until then, as the engine does.
                        Err(at) if at > now && at < EPOCH_MS + deadline => {
                            events.entry(at - EPOCH_MS).or_default().push((i, Ev::Decide));
                        }
                        Err(_) => {
                            out.refused += 1;
                            let leased = budgets.client(op.client).and_then(LeasedClient::stats);
                            if op.attempt == 0 && leased.is_some_and(|st| st.mode != Mode::Leased) {
                                out.refused_unleased_first += 1;
                            }
                            op.ended = Some(t);
                        }
                    },
                    // Its wait ended late (a stall): kept, or reserved again, as the engine does.
                    Ev::Begin if t > op.reserved && !state.keep_start(EPOCH_MS + op.reserved, now) => {
                        events.entry(t).or_default().push((i, Ev::Decide));
                    }
                    Ev::Begin => {
                        op.attempt += 1;
                        out.starts.push(t);
                        if op.attempt == 1 {
                            out.first_attempts += 1;
                        } else {
                            out.retries += 1;
                            out.retry_starts.push(t);
                        }
                        events.entry(t + s.attempt_ms).or_default().push((i, Ev::End));
                    }
                    Ev::End => {
                        if !(s.fails)(op.client, i, op.attempt, t) {
                            state.on_success(op.last_cost);
                            out.succeeded += 1;
                            op.ended = Some(t);
                        } else if op.attempt < s.max_attempts && t + s.backoff_ms < deadline {
                            match state.spend_retry(false) {
                                Some(cost) => {
                                    op.last_cost = Some(cost);
                                    events.entry(t + s.backoff_ms).or_default().push((i, Ev::Decide));
                                }
                                None => {
                                    out.quota_refused += 1;
                                    op.ended = Some(t);
                                }
                            }
                        } else {
                            op.ended = Some(t);
                        }
                    }
                }
            }
        }
    }
    for op in &ops {
        match op.ended {
            Some(end) => out.longest_op_ms = out.longest_op_ms.max(end - op.arrived),
            None => out.unfinished += 1,
        }
    }
    if let Budgets::Leased { clients, .. } = budgets {
        for st in clients.iter().filter_map(LeasedClient::stats) {
            out.round_trips += st.round_trips;
            out.requests += st.requests;
            out.tokens_spent += st.tokens_spent;
            out.tokens_expired += st.tokens_expired;
        }
    }
    out
}

fn authority(budgets: &Budgets) -> &Authority {
    match budgets {
        Budgets::Leased { authority, .. } => authority,
        Budgets::PerIsolate(_) => panic!("per-isolate budgets have no authority"),
    }
}

#[test]
fn a_busy_fleet_on_the_success_path_makes_at_most_one_round_trip_per_twenty_operations() {
    let mut s = Scenario::new(8).rate(1000);
    s.run_ms = 60_000;
    let mut b = Budgets::leased(&s);
    let out = simulate(&s, &mut b);
    assert_eq!((out.succeeded, out.refused, out.unfinished), (out.ops, 0, 0));
    println!(
        "success path, 8 clients × 50 ops/s for 60 s, defaults (G = {} slots, low-water {}, {} tokens): \
         {} ops, {} round trips = {:.4} per op",
        s.client.slots,
        s.client.low_slots,
        s.client.tokens,
        out.ops,
        out.round_trips,
        out.round_trips_per_op()
    );
    assert!(out.round_trips_per_op() <= 0.05, "{:.4} round trips per op", out.round_trips_per_op());
}

#[test]
fn in_a_total_outage_the_fleet_retries_at_most_one_quota_and_k_grants_not_k_quotas() {
    let mut s = Scenario::new(8);
    s.fails = always;
    s.every_ms = 50;
    s.run_ms = 30_000;
    let quota = s.authority.quota.unwrap();
    let mut leased = Budgets::leased(&s);
    let out = simulate(&s, &mut leased);
    let isolated = simulate(&s, &mut Budgets::per_isolate(&s));
    let k = s.k as u64;
    let bound = u64::from(quota.capacity) + k * u64::from(s.client.tokens);
    assert!(out.tokens_spent <= bound, "{} tokens spent > {bound}", out.tokens_spent);
    assert_eq!(out.retries * u64::from(quota.retry_cost), out.tokens_spent);
    assert!(out.retries <= u64::from(quota.capacity / quota.retry_cost) + k * 4);
    assert_eq!(isolated.retries, k * u64::from(quota.capacity / quota.retry_cost));
    assert_eq!(out.unfinished + isolated.unfinished, 0);
    println!(
        "total outage, 8 clients, quota {} (retry costs {}): leased fleet {} retries for {} ops \
         ({:.3} attempts per op, bound {} retries), per-isolate budgets {} retries ({:.3} attempts per op)",
        quota.capacity,
        quota.retry_cost,
        out.retries,
        out.ops,
        out.amplification(),
        bound / u64::from(quota.retry_cost),
        isolated.retries,
        isolated.amplification()
    );
}

#[test]
fn under_a_shared_rate_the_fleet_never_starts_more_than_r_plus_k_bursts_in_any_second() {
    let mut s = Scenario::new(8).rate(100);
    s.every_ms = 10;
    s.attempt_ms = 20;
    s.run_ms = 20_000;
    s.client.slots = 8;
    s.client.low_slots = 2;
    s.client.borrow = 2;
    let mut leased = Budgets::leased(&s);
    let out = simulate(&s, &mut leased);
    let isolated = simulate(&s, &mut Budgets::per_isolate(&s));
    let bound = 100 + s.k as u64 * u64::from(s.client.burst());
    let (most, naive) = (out.max_in_window(1000), isolated.max_in_window(1000));
    println!(
        "rate 100/s shared by 8 clients wanting 100/s each (G = {}, borrow {}): leased at most {most} \
         starts in any 1 s (bound R + K×burst = {bound}), {} starts in 20 s, {} refused; per-isolate \
         rates: at most {naive} in any 1 s",
        s.client.slots,
        s.client.borrow,
        out.starts.len(),
        out.refused
    );
    assert!(most <= bound, "{most} starts in one second > {bound}");
    assert!(out.starts.len() >= 1_900, "the shared rate is used, not starved: {}", out.starts.len());
    assert!(naive >= 790, "per-isolate rates multiply by K: {naive}");
    assert_eq!(out.unfinished, 0);
}

#[test]
fn an_authority_that_vanishes_and_returns_loses_and_hangs_no_operation() {
    let mut s = Scenario::new(4).rate(400);
    s.every_ms = 25;
    s.run_ms = 30_000;
    s.away = Some((5_000, 15_000));
    s.authority.ttl_ms = 3_000;
    s.fails = |_, op, attempt, _| op % 160 < 4 && attempt == 1; // one retry a second a client
    let mut b = Budgets::leased(&s);
    let out = simulate(&s, &mut b);
    assert_eq!(out.unfinished, 0, "every operation ended");
    assert!(out.longest_op_ms <= s.total_ms, "longest {} ms", out.longest_op_ms);
    assert_eq!(out.refused_unleased_first, 0, "no first attempt refused without a lease");
    let modes = |sec: usize| out.modes[sec].clone();
    assert!(modes(4).iter().all(|&m| m == Mode::Leased));
    assert!(modes(7).iter().all(|&m| m == Mode::Fallback));
    assert!(modes(17).iter().all(|&m| m == Mode::Leased), "{:?}", modes(17));
    let a = authority(&b).stats();
    assert!(out.tokens_expired > 0, "held tokens expired during the outage");
    assert_eq!(a.tokens_credited, out.tokens_expired, "every expired token credited back, once");
    let (gone, back) = (5_000 + 3_000 + s.backoff_ms, 15_000);
    assert!(out.quota_refused > 0);
    assert!(
        !out.retry_starts.iter().any(|t| (gone..back).contains(t)),
        "no retry once the tokens held when the authority left expired (at most 3 s after)"
    );
    assert!(out.retry_starts.iter().any(|&t| t >= back + 1_000), "retries again once leased");
    println!(
        "authority away 5–15 s (ttl 3 s): {} ops, {} succeeded, {} starts refused, {} retries refused, \
         {} tokens expired, {} credited back, {} round trips",
        out.ops,
        out.succeeded,
        out.refused,
        out.quota_refused,
        out.tokens_expired,
        a.tokens_credited,
        out.round_trips
    );
}

#[test]
fn duplicated_requests_change_nothing_and_credit_nothing_twice() {
    let mut s = Scenario::new(4).rate(400);
    s.run_ms = 20_000;
    s.duplicate = true;
    s.authority.ttl_ms = 2_000;
    s.every_ms = 500;
    s.fails = |_, op, attempt, _| op % 3 == 0 && attempt < 3;
    let mut b = Budgets::leased(&s);
    let out = simulate(&s, &mut b);
    let a = authority(&b).stats();
    assert_eq!(a.duplicates, out.requests, "every request arrived twice, once counted");
    assert!(a.tokens_credited <= out.tokens_expired, "{} > {}", a.tokens_credited, out.tokens_expired);
    assert_eq!(out.unfinished, 0);
}

/// A client holding 10 tokens and the slots at 0, 100, 200… of an
/// authority sharing 10 starts a second.
fn engine_client(sim: &Sim) -> LeasedClient {
    let mut a = Authority::new(AuthorityConfig {
        quota: Some(QuotaConfig { capacity: 10, ..QuotaConfig::default() }),
        rate: Some(RateConfig { requests: 10, per_ms: 1000, burst: 1 }),
        ..AuthorityConfig::default()
    });
    let c = LeasedClient::new(ClientConfig {
        local_rate: Some(RateConfig { requests: 1, per_ms: 1000, burst: 1 }),
        ..ClientConfig::default()
    });
    c.on_grant(&a.grant(&c.pending_request(sim.now()).unwrap(), sim.now()), sim.now());
    c
}

/// One GET through the engine on `c`: its stop reason and its starts.
fn engine_run(
    sim: &Rc<Sim>,
    c: &LeasedClient,
    clock: &SimClock,
    max_attempts: u32,
    steps: Vec<Step>,
) -> (Reason, Vec<u64>) {
    let mut options = Options::default();
    options.limits.max_attempts = max_attempts;
    let script = Script::new(sim, steps);
    let stats = Stats::default();
    let budget = Budget { shared: c, gate: None, stats: &stats, quota: true, counted: true };
    let call =
        Call { options: &options, safety: Safety::Idempotent, body_replayable: true, not_before: None };
    let done = sim.run(run(call, &script, clock, budget, &mut || 0.5, &mut |_| {}));
    let starts = script.starts.borrow().clone();
    (done.report.reason, starts)
}

#[test]
fn the_engine_runs_on_a_leased_client_starting_on_its_slots_and_retrying_on_its_tokens() {
    let sim = Sim::new();
    let c = engine_client(&sim);
    let (reason, starts) = engine_run(&sim, &c, &SimClock::new(&sim), 5, vec![Step::status(503)]);
    assert_eq!(reason, Reason::RetryQuotaExhausted, "10 tokens pay for two retries");
    assert_eq!(starts, [0, 100, 200], "each attempt on its slot, 100 ms apart");
    let st = c.stats().unwrap();
    assert_eq!((st.slot_starts, st.tokens_spent, st.tokens_held), (3, 10, 0));
}

#[test]
fn a_start_whose_timer_fires_late_is_given_up_with_the_slots_the_stall_slept_through_and_starts_on_the_next()
{
    let sim = Sim::new();
    let c = engine_client(&sim);
    let clock = SimClock::new(&sim);
    // The retry waits for its slot at 100; the process stalls from 60 to 350.
    clock.stall(EPOCH_MS + 60, EPOCH_MS + 350);
    let (reason, starts) = engine_run(&sim, &c, &clock, 2, vec![Step::status(503), Step::status(200)]);
    assert_eq!(reason, Reason::Succeeded);
    assert_eq!(
        starts,
        [0, 400],
        "not at 350 on the slot of 100 (nor on those of 200 and 300, slept through): on the next, 400"
    );
    let st = c.stats().unwrap();
    assert_eq!((st.late_starts, st.slots_missed, st.slot_starts), (1, 2, 3));
}

// ---------------- one budget name, one budget: mixed configurations ----------------

/// A quota of `capacity` tokens at the default costs.
fn quota(capacity: u32) -> Option<QuotaConfig> {
    Some(QuotaConfig { capacity, ..QuotaConfig::default() })
}

/// An authority as `BudgetAuthority` makes it: nothing in force until a
/// request offers it.
fn unconfigured() -> Authority {
    Authority::new(AuthorityConfig { quota: None, rate: None, ..AuthorityConfig::default() })
}

/// A client of a policy with `quota` and `rate`, in a fleet of 4.
fn policy_client(client: u64, quota: Option<QuotaConfig>, rate: Option<RateConfig>) -> LeasedClient {
    LeasedClient::new(ClientConfig::for_policy(client, quota, rate, 4))
}

/// `ops` operations of `c` against an upstream that always fails, each
/// with up to two retries, 10 ms apart; every request the client says is
/// due is answered at once. Returns the retries made and the time after.
fn outage_ops(a: &mut Authority, c: &LeasedClient, ops: u32, mut now: u64) -> (u64, u64) {
    let mut retries = 0;
    for _ in 0..ops {
        for attempt in 0..3 {
            if let Some(req) = c.pending_request(now) {
                c.on_grant(&a.grant(&req, now), now);
            }
            if c.reserve_start(now, now + 5_000).is_err() {
                break; // a shared rate's start not to be had: the operation ends
            }
            now += 10;
            if attempt == 2 || c.spend_retry(false).is_none() {
                break;
            }
            retries += 1;
        }
    }
    (retries, now)
}

#[test]
fn a_request_without_a_quota_or_a_rate_neither_removes_nor_refills_the_shared_bucket() {
    // The reproduction: drain with 30 grants, one request offering
    // `quota: null, rate: null`, then a normal request.
    let mut a = unconfigured();
    let offer = FleetConfig { quota: quota(500), rate: None };
    for client in 1..=30 {
        let req = LeaseRequest { client, seq: 1, want_tokens: 20, config: offer, ..LeaseRequest::default() };
        a.grant(&req, EPOCH_MS);
    }
    assert_eq!(a.quota_level(), Some(0), "25 grants of 20 emptied it");
    let bare = LeaseRequest { client: 99, seq: 1, want_tokens: 20, ..LeaseRequest::default() };
    assert_eq!(a.grant(&bare, EPOCH_MS + 1).tokens, 0);
    assert_eq!(a.config().fleet(), offer, "the quota stays in force");
    let next =
        LeaseRequest { client: 100, seq: 1, want_tokens: 20, config: offer, ..LeaseRequest::default() };
    assert_eq!(a.grant(&next, EPOCH_MS + 2).tokens, 0);
    assert_eq!(a.quota_level(), Some(0), "no fresh bucket");
    assert_eq!(a.stats().differing_configs, 0, "offering no quota is not a different quota");
}

#[test]
fn rounds_of_a_quota_policy_and_a_quota_false_policy_in_an_outage_spend_one_bucket_not_one_per_round() {
    // Issue 20: three rounds of (150 operations of a default-quota policy,
    // then 40 of a `quota: false` policy on the same budget) against an
    // always-503 upstream spent 100 retries a round.
    let mut a = unconfigured();
    let (mut now, mut quota_retries, mut free_retries) = (EPOCH_MS, 0, 0);
    for round in 0..3u64 {
        let limited = policy_client(round * 2 + 1, quota(500), None);
        let (r, t) = outage_ops(&mut a, &limited, 150, now);
        // With a rate, so that it asks (for slots) and its requests offer
        // `quota: null`.
        let free =
            policy_client(round * 2 + 2, None, Some(RateConfig { requests: 1000, per_ms: 1000, burst: 1 }));
        let (f, t) = outage_ops(&mut a, &free, 40, t);
        (quota_retries, free_retries, now) = (quota_retries + r, free_retries + f, t);
        println!(
            "round {round}: quota policy {r} retries, quota: false policy {f}, bucket level {:?}",
            a.quota_level()
        );
    }
    // One bucket is 500 tokens = 100 retries at 5 tokens each.
    assert!(quota_retries <= 100, "{quota_retries} retries > one bucket (100)");
    assert!(quota_retries >= 90, "the one bucket was used: {quota_retries}");
    assert_eq!(free_retries, 3 * 40 * 2, "a policy without a quota spends nothing from the bucket");
    assert_eq!(a.quota_level(), Some(0));
}

#[test]
fn the_strictest_configuration_heard_within_a_ttl_is_in_force_and_a_change_never_refills_the_bucket() {
    let mut a = unconfigured();
    let ask = |client: u64, seq: u64, config: FleetConfig| LeaseRequest {
        client,
        seq,
        want_tokens: 20,
        want_slots: 8,
        config,
        ..LeaseRequest::default()
    };
    let slow = RateConfig { requests: 10, per_ms: 1000, burst: 3 };
    let fast = RateConfig { requests: 100, per_ms: 1000, burst: 1 };
    let big = FleetConfig { quota: quota(500), rate: Some(fast) };
    let small = FleetConfig { quota: quota(100), rate: Some(slow) };
    a.grant(&ask(1, 1, big), EPOCH_MS);
    assert_eq!(a.quota_level(), Some(480));
    a.grant(&ask(2, 1, small), EPOCH_MS + 100);
    let strict = FleetConfig { quota: quota(100), rate: Some(RateConfig { burst: 1, ..slow }) };
    assert_eq!(a.config().fleet(), strict, "the smaller bucket, the slower rate, the smaller burst");
    assert_eq!(a.quota_level(), Some(80), "clamped to 100, then 20 granted");
    a.grant(&ask(1, 2, big), EPOCH_MS + 200);
    assert_eq!(
        a.config().fleet(),
        strict,
        "a looser offer cannot loosen it while the strict one is heard from"
    );
    assert_eq!(a.quota_level(), Some(60));
    // Client 2 falls silent: 10 s later (the ttl) only client 1's offer counts.
    a.grant(&ask(1, 3, big), EPOCH_MS + 10_200);
    assert_eq!(a.config().fleet(), big, "the strict policy has gone (a redeploy): the config follows");
    assert_eq!(a.quota_level(), Some(40), "and the level is kept, not refilled to 500");
    let st = a.stats();
    // Differing from the one in force when it came: client 2's first
    // request, and client 1's last two.
    assert_eq!((st.config_changes, st.differing_configs), (3, 3));
}

#[test]
fn a_restored_authority_keeps_each_clients_offer_and_the_config_in_force() {
    let mut a = unconfigured();
    let small = FleetConfig { quota: quota(100), rate: None };
    let req = LeaseRequest { client: 1, seq: 1, want_tokens: 20, config: small, ..LeaseRequest::default() };
    a.grant(&req, EPOCH_MS);
    let state = a.state();
    let mut b = Authority::restore(AuthorityConfig::of(state.config), &state);
    let big = FleetConfig { quota: quota(500), rate: None };
    let req = LeaseRequest { client: 2, seq: 1, want_tokens: 20, config: big, ..LeaseRequest::default() };
    b.grant(&req, EPOCH_MS + 1);
    assert_eq!(b.config().fleet(), small, "client 1's offer outlived the restart");
    assert_eq!(b.quota_level(), Some(60));
}

// ---------------- the first second: fresh clients and a fresh budget ----------------

/// K fresh policies (as `for_policy` makes them, fleet size K) on a fresh
/// authority with a shared rate R, each wanting far more than R / K, the
/// messages `delay_ms` each way.
fn cold_start(k: usize, r: u32, delay_ms: u64) -> (Scenario, Outcome) {
    let mut s = busy_fleet(k, r, delay_ms);
    s.run_ms = 3_000;
    let out = simulate(&s, &mut Budgets::leased(&s));
    (s, out)
}

#[test]
fn fresh_clients_wait_for_their_first_answer_after_one_start_so_the_first_second_stays_within_the_rate() {
    for r in [50, 100] {
        // Messages up to 100 ms each way. Slower ones bring slots after
        // their time, spent at once: the K × G of the general bound, which
        // this one does not cover.
        for delay_ms in [5, 50, 100] {
            let (s, out) = cold_start(4, r, delay_ms);
            let first = out.starts.iter().filter(|&&t| t < 1_000).count();
            let most = out.max_in_window(1000);
            println!(
                "cold start, 4 fresh clients, R = {r}/s, messages {delay_ms} ms each way: first second \
                 {first} starts, any 1 s at most {most}"
            );
            // R + (burst − 1) + K + R × delay / per: the one start each
            // fresh client makes before its first answer (repaid from its
            // first slots), and the slots whose time has come by the time
            // they arrive, spent at once.
            let bound = u64::from(r) + s.k as u64 + (u64::from(r) * delay_ms).div_ceil(1000);
            assert!(most <= bound, "{most} > {bound}");
            assert!(out.starts.len() as u64 >= u64::from(r) * 3 - u64::from(r) / 5, "not starved");
            assert_eq!(out.unfinished, 0);
        }
    }
}

/// The worst second of a fleet of four busy clients sharing R a second, on
/// virtual time: from a cold start (fresh clients, a fresh authority),
/// with the first `stalled` clients stalling 300 ms at 0.2 s (a process
/// compiling as it starts, a loaded machine), and across an authority that
/// loses its state at 2 s (a Redis restarted without persistence), at
/// once or after `down_ms` of refusing every request.
fn worst_second(r: u32, delay_ms: u64, stalled: usize, restart: Option<u64>) -> u64 {
    let mut s = busy_fleet(4, r, delay_ms);
    s.stall = (stalled > 0).then_some((stalled, 200, 500));
    if let Some(down_ms) = restart {
        s.away = Some((2_000, 2_000 + down_ms));
        s.refused = true;
        s.restart = Some(2_000 + down_ms);
    }
    let out = simulate(&s, &mut Budgets::leased(&s));
    assert_eq!(out.unfinished, 0);
    assert!(
        out.starts.len() as u64 >= u64::from(r) * 7 / 2,
        "the rate is used, not starved: {}",
        out.starts.len()
    );
    out.max_in_window(1000)
}

/// `k` fresh clients (as `for_policy` makes them, fleet size `k`) each
/// wanting 500 starts a second, on a fresh authority sharing `r` a second,
/// for four seconds; messages `delay_ms` each way.
fn busy_fleet(k: usize, r: u32, delay_ms: u64) -> Scenario {
    let rate = RateConfig { requests: r, per_ms: 1000, burst: 1 };
    let mut s = Scenario::short(k, 2, delay_ms, None);
    s.run_ms = 4_000;
    s.attempt_ms = 10;
    s.authority = AuthorityConfig { quota: None, rate: Some(rate), ..AuthorityConfig::default() };
    s.client = ClientConfig::for_policy(0, None, Some(rate), k as u32);
    s
}

#[test]
fn no_second_after_a_cold_start_a_stall_or_an_authority_restart_holds_more_than_1_1_r_starts_across_four_clients(
) {
    for r in [50, 100] {
        for delay_ms in [1, 5, 20] {
            for (stalled, restart) in
                [(0, None), (2, None), (0, Some(0)), (4, Some(0)), (0, Some(300)), (0, Some(1_500))]
            {
                let most = worst_second(r, delay_ms, stalled, restart);
                println!(
                    "R = {r}/s, 4 clients, messages {delay_ms} ms each way, {stalled} stalled 300 ms, \
                     restart after {restart:?} ms down: at most {most} starts in any 1 s"
                );
                assert!(most * 10 <= u64::from(r) * 11, "{most} > 1.1 × {r}");
            }
        }
    }
}

/// One client, one authority, messages by hand.
fn pair(ttl_ms: u64) -> (Authority, LeasedClient) {
    let authority = Authority::new(AuthorityConfig {
        quota: Some(QuotaConfig { capacity: 100, ..QuotaConfig::default() }),
        ttl_ms,
        ..AuthorityConfig::default()
    });
    (authority, LeasedClient::new(ClientConfig { client: 7, ..ClientConfig::default() }))
}

#[test]
fn a_client_cut_off_spends_its_grant_until_the_ttl_from_sending_and_not_after() {
    let (mut a, c) = pair(1_000);
    let req = c.pending_request(0).unwrap();
    c.on_grant(&a.grant(&req, 40), 80);
    assert_eq!(c.quota_level(), Some(20));
    assert_eq!(c.reserve_start(999, 5_000), Ok(999));
    assert_eq!(c.spend_retry(false), Some(5), "valid until 0 + ttl");
    assert_eq!(c.reserve_start(1_000, 5_000), Ok(1_000));
    assert_eq!(c.spend_retry(false), None, "expired at 1000 although it arrived at 80");
    assert_eq!(c.quota_level(), Some(0));
    assert_eq!(c.stats().unwrap().tokens_expired, 15);
}

#[test]
fn a_request_says_whether_its_client_holds_a_grant_that_has_not_expired() {
    let (mut a, c) = pair(1_000);
    let first = c.pending_request(0).unwrap();
    assert!(!first.leased, "never answered");
    c.on_grant(&a.grant(&first, 0), 10);
    let held = c.release_all(500);
    assert!(held.leased, "answered, valid until 0 + ttl");
    c.on_grant(&a.grant(&held, 500), 510);
    let later = c.release_all(1_500);
    assert!(!later.leased, "its last grant (asked at 500) expired at 1500");
}

#[test]
fn unused_tokens_go_back_once_even_duplicated_or_after_expiry() {
    let (mut a, c) = pair(1_000);
    c.on_grant(&a.grant(&c.pending_request(0).unwrap(), 0), 0);
    assert_eq!(a.quota_level(), Some(80));
    c.on_unreachable(10);
    assert_eq!(c.stats().unwrap().mode, Mode::Fallback);
    assert_eq!(c.pending_request(400), None, "asks again only after retry_ms");
    let back = c.pending_request(1_600).expect("expired tokens go back");
    assert_eq!((back.returned_total, back.holding_tokens), (20, 0));
    let first = a.grant(&back, 1_700);
    let again = a.grant(&back, 1_800);
    assert!(!first.duplicate && again.duplicate);
    assert_eq!(a.quota_level(), Some(100 - first.tokens), "credited once, after expiry");
    assert_eq!(a.stats().tokens_credited, 20);
    c.on_grant(&again, 1_805);
    c.on_grant(&first, 1_810);
    let st = c.stats().unwrap();
    assert_eq!((st.mode, st.stale_answers, c.quota_level()), (Mode::Leased, 1, Some(first.tokens)));
    let last = c.release_all(1_900);
    a.grant(&last, 1_950);
    assert_eq!(a.quota_level(), Some(100), "a closing client gives everything back");
}

#[test]
fn a_client_drained_to_zero_asks_again_when_it_wants_a_retry_and_gets_the_refilled_bucket() {
    let mut a = Authority::new(AuthorityConfig {
        quota: Some(QuotaConfig { capacity: 10, ..QuotaConfig::default() }),
        ..AuthorityConfig::default()
    });
    let c = LeasedClient::new(ClientConfig { client: 7, ..ClientConfig::default() });
    c.on_grant(&a.grant(&c.pending_request(0).unwrap(), 0), 0);
    assert_eq!((c.quota_level(), a.quota_level()), (Some(10), Some(0)));
    assert_eq!(c.spend_retry(false), Some(5));
    assert_eq!(c.spend_retry(false), Some(5));
    let short = c.pending_request(600).expect("below the low-water mark, 500 ms after a short answer");
    c.on_grant(&a.grant(&short, 600), 600);
    assert_eq!(c.quota_level(), Some(0), "the bucket is empty");
    for _ in 0..20 {
        c.on_success(None); // successes refund at the client
    }
    assert_eq!(c.spend_retry(false), None, "nothing held");
    let ask = c.pending_request(1_200).expect("a retry was wanted: the drained client asks again");
    assert_eq!(ask.refunded_total, 20);
    c.on_grant(&a.grant(&ask, 1_200), 1_200);
    assert_eq!(c.quota_level(), Some(10), "its refunds refilled the bucket, and it gets them");
}

#[test]
fn a_client_without_tokens_and_without_a_rate_asks_again_when_it_wants_a_retry() {
    // Quota only (no rate: no start ever marks the client busy). Cut off
    // before any answer, then the authority is back: the retry it wants
    // 500 ms later is demand enough to ask.
    let (mut a, c) = pair(10_000);
    let first = c.pending_request(0).expect("asks at once");
    c.on_unreachable(1_000);
    assert_eq!(c.spend_retry(false), None, "nothing held");
    let again = c.pending_request(1_600).expect("a wanted retry makes it ask again");
    assert_eq!(again.seq, first.seq + 1);
    c.on_grant(&a.grant(&again, 1_610), 1_620);
    assert_eq!(c.stats().unwrap().mode, Mode::Leased);
    assert_eq!(c.spend_retry(false), Some(5), "and it retries again");
}

#[test]
fn a_client_told_no_authority_can_run_retries_on_its_share_of_the_quota_until_an_authority_answers() {
    // A policy of capacity 100 (20 retries at cost 5) in a fleet of 4: 25
    // tokens of its own, 5 retries, while no authority can run.
    let c = policy_client(7, quota(100), None);
    let first = c.pending_request(0).expect("asks at once");
    assert_eq!(c.spend_retry(false), None, "before any answer: nothing held");
    c.on_no_authority(first.seq + 1, 10);
    assert_eq!(c.stats().unwrap().stale_answers, 1, "an answer to another request is stale");
    c.on_no_authority(first.seq, 10);
    let st = c.stats().unwrap();
    assert_eq!((st.mode, st.unavailable, st.unreachable), (Mode::Fallback, 1, 0));
    assert_eq!(c.quota_level(), Some(25));
    let paid: Vec<_> = (0..6).map(|_| c.spend_retry(false)).collect();
    assert_eq!(paid, [Some(5), Some(5), Some(5), Some(5), Some(5), None], "five retries, then none");
    c.on_success(Some(5));
    assert_eq!(c.quota_level(), Some(5), "a success refunds its own budget");
    // Asked again: still no authority. The budget is not made afresh.
    let again = c.pending_request(600).expect("asks again after retry_ms");
    c.on_no_authority(again.seq, 600);
    assert_eq!(c.quota_level(), Some(5), "the same budget, not a fresh one");
    assert_eq!(again.refunded_total, 0, "its own refunds are not the authority's");
    // An authority answers: its grants again, the own budget unused.
    let mut a = unconfigured();
    let third = c.pending_request(1_200).expect("asks again");
    c.on_grant(&a.grant(&third, 1_200), 1_200);
    assert_eq!((c.stats().unwrap().mode, c.quota_level()), (Mode::Leased, Some(20)), "20 tokens leased");
    let spent = (0..5).filter(|_| c.spend_retry(false).is_some()).count();
    assert_eq!(spent, 4, "four retries from the grant, none from the own budget");
}

#[test]
fn a_client_told_no_authority_can_run_without_a_quota_of_its_own_retries_nothing() {
    let c = LeasedClient::new(ClientConfig::default());
    let first = c.pending_request(0).unwrap();
    c.on_no_authority(first.seq, 0);
    assert_eq!((c.stats().unwrap().mode, c.spend_retry(false)), (Mode::Fallback, None));
}

#[test]
fn a_return_lost_on_the_way_travels_again_with_the_next_request_and_counts_once() {
    let (mut a, c) = pair(1_000);
    c.on_grant(&a.grant(&c.pending_request(0).unwrap(), 0), 0);
    let lost = c.pending_request(1_000).expect("expired tokens go back");
    assert_eq!(lost.returned_total, 20);
    c.on_unreachable(1_100);
    let next = c.pending_request(1_600).expect("the return is not acknowledged yet");
    assert_eq!((next.returned_total, next.seq), (20, lost.seq + 1));
    a.grant(&next, 1_650);
    assert!(a.grant(&lost, 1_700).duplicate, "the lost one turning up late is older");
    // Credited once (100), then a fresh grant for the client, which is
    // cut off and so asks for one (80).
    assert_eq!((a.stats().tokens_credited, a.quota_level()), (20, Some(80)));
}

#[test]
fn a_failure_reported_for_a_request_no_longer_awaited_is_stale_and_changes_nothing() {
    let (mut a, c) = pair(1_000);
    let first = c.pending_request(0).unwrap();
    assert_eq!(
        c.pending_request(1_000),
        None,
        "given up on at the answer timeout, asked again after retry_ms"
    );
    let second = c.pending_request(1_500).expect("a second request");
    c.on_failed(first.seq, 1_600);
    let s = c.stats().unwrap();
    assert_eq!((s.mode, s.stale_answers), (Mode::Fallback, 1), "still waiting for the second request");
    c.on_grant(&a.grant(&second, 1_650), 1_700);
    assert_eq!(c.stats().unwrap().mode, Mode::Leased);
    c.on_failed(second.seq, 1_800);
    assert_eq!(c.stats().unwrap().mode, Mode::Leased, "an answered request cannot fail afterwards");
    let third = c.pending_request(30_000).expect("tokens expired: a return is due");
    c.on_failed(third.seq, 30_001);
    assert_eq!(c.stats().unwrap().mode, Mode::Fallback, "the request awaited failed");
}

#[test]
fn a_client_that_never_heard_from_the_authority_waits_for_its_answer_then_starts_on_its_local_rate_and_retries_nothing(
) {
    let c = LeasedClient::new(ClientConfig {
        local_rate: Some(RateConfig { requests: 10, per_ms: 1000, burst: 1 }),
        borrow: 2,
        ..ClientConfig::default()
    });
    assert!(c.pending_request(0).is_some(), "asks at once");
    assert_eq!(c.reserve_start(0, 10_000), Ok(0), "the local rate's start now is taken");
    assert_eq!(c.reserve_start(0, 10_000), Err(25), "a later one waits a moment for the answer");
    assert_eq!(c.pending_request(1_000), None, "no answer in 1 s: given up on, asked again after retry_ms");
    let starts: Vec<_> = (0..6).map(|_| c.reserve_start(1_000, 10_000)).collect();
    let local: Vec<_> = (10..=15).map(|n| Ok(n * 100)).collect();
    assert_eq!(starts, local, "up to the next ask (1500): the local rate");
    assert_eq!(c.reserve_start(1_000, 10_000), Err(1_500), "after it: come back when it goes out");
    assert_eq!(c.spend_retry(false), None);
    let st = c.stats().unwrap();
    assert_eq!((st.mode, st.local_starts, st.debt), (Mode::Fallback, 7, 2), "two borrowed, repaid later");
}

/// An authority sharing 10 starts a second, and a client holding at most
/// `slots` of them, borrowing one, with a local rate of 1 a second.
fn rate_pair(horizon_ms: u64, slots: u32) -> (Authority, LeasedClient) {
    let authority = Authority::new(AuthorityConfig {
        quota: None,
        rate: Some(RateConfig { requests: 10, per_ms: 1000, burst: 1 }),
        horizon_ms,
        ..AuthorityConfig::default()
    });
    let client = LeasedClient::new(ClientConfig {
        quota: None,
        slots,
        low_slots: 0,
        borrow: 1,
        local_rate: Some(RateConfig { requests: 1, per_ms: 1000, burst: 1 }),
        ..ClientConfig::default()
    });
    (authority, client)
}

#[test]
fn a_leased_client_out_of_slots_after_a_short_answer_queues_for_the_next_grant_instead_of_borrowing() {
    let (mut a, c) = rate_pair(200, 4);
    let g = a.grant(&c.pending_request(0).unwrap(), 0);
    assert_eq!((g.slots, g.first_slot_ms, g.last_slot_ms), (2, 0, 100), "2 of 4: the rate is taken");
    c.on_grant(&g, 0);
    let starts: Vec<_> = (0..4).map(|_| c.reserve_start(0, 10_000)).collect();
    // A short answer says the schedule is taken up to the horizon: a start
    // borrowed now would be repaid from a slot up to a horizon later.
    assert_eq!(starts, [Ok(0), Ok(100), Err(500), Err(500)], "two slots, then back when it asks again");
    assert_eq!(c.pending_request(499), None, "a short answer is followed by retry_ms of quiet");
    let req = c.pending_request(500).unwrap();
    assert_eq!(req.want_slots, 4);
    c.on_grant(&a.grant(&req, 500), 500);
    assert_eq!(c.stats().unwrap().debt, 0, "nothing borrowed");
    assert_eq!(c.reserve_start(500, 10_000), Ok(500), "the new grant's first slot");
}

#[test]
fn a_leased_client_whose_refill_is_late_queues_for_it_instead_of_spending_past_its_share() {
    let (mut a, c) = rate_pair(1_000, 2);
    c.on_grant(&a.grant(&c.pending_request(0).unwrap(), 0), 0);
    let starts: Vec<_> = (0..4).map(|_| c.reserve_start(0, 10_000)).collect();
    assert_eq!(
        starts,
        [Ok(0), Ok(100), Ok(0), Err(1)],
        "two slots, one borrowed, then: come back when asked"
    );
    let req = c.pending_request(1).expect("the refill goes out");
    assert_eq!(c.reserve_start(1, 10_000), Err(26), "with the refill in flight: a moment later");
    c.on_grant(&a.grant(&req, 20), 20);
    assert_eq!(c.reserve_start(26, 10_000), Ok(300), "200 repaid the borrowed start: the next slot is 300");
    let st = c.stats().unwrap();
    assert_eq!((st.slot_starts, st.local_starts, st.refused_starts), (3, 1, 2));
}

#[test]
fn a_client_that_loses_the_authority_starts_on_its_held_slots_then_on_its_own_rate_a_horizon_after_the_loss()
{
    let (mut a, c) = rate_pair(1_000, 2);
    c.on_grant(&a.grant(&c.pending_request(0).unwrap(), 0), 0);
    assert_eq!((c.reserve_start(0, 10_000), c.reserve_start(0, 10_000)), (Ok(0), Ok(100)));
    let lost = c.pending_request(1).expect("out of slots: it asks");
    c.on_failed(lost.seq, 50);
    assert_eq!(c.stats().unwrap().mode, Mode::Fallback);
    // The other clients may hold the authority's slots until 1050: no start
    // of its own before, not even a borrowed one.
    assert_eq!(c.reserve_start(60, 10_000), Err(550), "back when it asks again");
    let again = c.pending_request(550).expect("asks again after retry_ms");
    c.on_failed(again.seq, 560);
    assert_eq!(c.reserve_start(600, 10_000), Err(1_050), "back a horizon after the loss");
    assert_eq!(c.reserve_start(1_050, 10_000), Ok(1_050), "then a borrowed start, on its own rate");
    assert_eq!(
        c.reserve_start(1_050, 10_000),
        Err(1_060),
        "the local rate's next (2050) is after its next ask"
    );
    // Leased again: the next loss counts from its own moment.
    let back = c.pending_request(1_060).unwrap();
    c.on_grant(&a.grant(&back, 1_060), 1_060);
    assert_eq!(c.stats().unwrap().mode, Mode::Leased);
}

/// A message delay, and maybe a time the authority is away: `(from, length)`.
#[test]
fn a_client_killed_holding_tokens_gives_back_what_it_had_not_spent_and_the_fleet_spends_one_bucket_plus_what_it_spent_unheard(
) {
    let mut s = Scenario::new(4);
    s.fails = always;
    s.every_ms = 50;
    s.run_ms = 20_000;
    s.authority.ttl_ms = 2_000;
    s.killed = Some((1, 300));
    let capacity = u64::from(s.authority.quota.unwrap().capacity);
    let mut b = Budgets::leased(&s);
    let out = simulate(&s, &mut b);
    let a = authority(&b);
    let st = a.stats();
    println!(
        "outage, 4 clients, one killed at 0.3 s holding {} tokens ({} spent unheard): {} reclaimed, fleet spent {} of a \
         bucket of {capacity}, {} left; {} round trips for {} ops ({:.3} per op)",
        out.killed_held,
        out.killed_unreported,
        st.tokens_reclaimed,
        out.tokens_spent,
        a.quota_level().unwrap_or(0),
        out.round_trips,
        out.ops,
        out.round_trips_per_op()
    );
    assert!(out.killed_held > 0, "it held tokens when killed");
    assert!(st.tokens_reclaimed >= out.killed_held, "what it held came back");
    assert!(out.tokens_spent <= capacity + out.killed_unreported);
    assert_eq!(
        out.tokens_spent + u64::from(a.quota_level().unwrap_or(0)),
        capacity + out.killed_unreported,
        "nothing lost"
    );
}

fn link() -> impl Strategy<Value = (u64, Option<(u64, u64)>)> {
    (0u64..60, proptest::option::of((0u64..3_000, 0u64..3_000)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_fleet_under_a_shared_rate_stays_within_r_plus_k_bursts_plus_its_local_rates_per_window(
        k in 1usize..6,
        requests in 5u32..200,
        slots in 1u32..16,
        low in 0u32..8,
        borrow in 0u32..4,
        every_ms in 2u64..40,
        (delay_ms, away) in link(),
    ) {
        let mut s = Scenario::short(k, every_ms, delay_ms, away).rate(requests);
        s.attempt_ms = 10;
        s.client.slots = slots;
        s.client.low_slots = low.min(slots);
        s.client.borrow = borrow;
        s.client.local_rate = Some(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
        let out = simulate(&s, &mut Budgets::leased(&s));
        // Starts on the local rates (1 a second each): at most 2 a client in
        // any second.
        let local = k as u64 * 2;
        let bound = u64::from(requests) + k as u64 * u64::from(s.client.burst()) + local;
        prop_assert!(out.max_in_window(1000) <= bound, "{} > {bound}", out.max_in_window(1000));
        prop_assert_eq!(out.unfinished, 0);
    }

    #[test]
    fn any_fleet_in_an_outage_spends_at_most_the_quota_plus_what_its_killed_clients_spent_unheard(
        k in 1usize..8,
        capacity in 0u32..300,
        tokens in 0u32..40,
        (delay_ms, away) in link(),
        duplicate: bool,
        killed in 0usize..3,
        kill_ms in 0u64..4_000,
    ) {
        let mut s = Scenario::short(k, 30, delay_ms, away);
        s.fails = always;
        s.duplicate = duplicate;
        s.killed = Some((killed.min(k), kill_ms));
        s.authority.ttl_ms = 1_000;
        s.authority.quota = Some(QuotaConfig { capacity, ..QuotaConfig::default() });
        s.client.tokens = tokens;
        s.client.low_tokens = tokens / 2;
        let mut b = Budgets::leased(&s);
        let out = simulate(&s, &mut b);
        // A killed client's tokens come back once its silence shows it
        // gone; those it spent without the authority hearing are credited
        // too: the bound's only slack, at most what it held.
        let bound = u64::from(capacity) + out.killed_unreported;
        prop_assert!(out.tokens_spent <= bound, "{} > {capacity} + {}", out.tokens_spent, out.killed_unreported);
        prop_assert!(out.killed_unreported <= killed as u64 * u64::from(tokens));
        let a = authority(&b).stats();
        prop_assert!(a.tokens_credited <= out.tokens_expired);
        prop_assert!(a.tokens_credited + a.tokens_reclaimed <= a.tokens_granted);
        prop_assert_eq!(out.unfinished, 0);
    }

    #[test]
    fn any_mix_of_configurations_in_an_outage_spends_at_most_the_first_bucket(
        policies in proptest::collection::vec(
            (proptest::option::of((0u32..400, 0u32..12)), proptest::option::of(1u32..200)),
            1..6,
        ),
        steps in proptest::collection::vec((0usize..6, 1u32..30, 0u64..6_000), 1..40),
    ) {
        // Policies with or without a quota (capacity, retry cost) and with
        // or without a rate, taking turns in any order, time passing
        // between turns (past a grant's ttl or not).
        let clients: Vec<(LeasedClient, Option<QuotaConfig>)> = policies
            .iter()
            .enumerate()
            .map(|(i, &(q, r))| {
                let q = q.map(|(capacity, retry_cost)| QuotaConfig { capacity, retry_cost, ..QuotaConfig::default() });
                let r = r.map(|requests| RateConfig { requests, per_ms: 1000, burst: 1 });
                (policy_client(i as u64 + 1, q, r), q)
            })
            .collect();
        let mut a = unconfigured();
        let (mut now, mut first, mut retries) = (EPOCH_MS, None, 0);
        for (who, ops, pause) in steps {
            let (c, q) = &clients[who % clients.len()];
            let (r, t) = outage_ops(&mut a, c, ops, now);
            now = t + pause;
            if q.is_some() {
                retries += r;
            }
            // The bucket is made by the first request that offers a quota.
            first = first.or(a.config().quota.map(|q| q.capacity));
        }
        let spent: u64 = clients.iter().filter_map(|(c, _)| c.stats()).map(|st| st.tokens_spent).sum();
        let bucket = u64::from(first.unwrap_or(0));
        prop_assert!(spent <= bucket, "{spent} tokens spent > the first bucket, {bucket}");
        let cheapest = clients.iter().filter_map(|(_, q)| q.map(|q| q.retry_cost)).min().unwrap_or(0);
        if cheapest > 0 {
            prop_assert!(retries <= bucket / u64::from(cheapest), "{retries} retries > {bucket} / {cheapest}");
        }
        let st = a.stats();
        prop_assert!(st.tokens_credited <= st.tokens_granted);
    }

    #[test]
    fn a_client_never_starts_on_a_slot_before_the_authority_scheduled_it(
        steps in proptest::collection::vec((0u64..80, any::<bool>()), 1..300),
        requests in 1u32..60,
        burst in 1u32..4,
        horizon_ms in 0u64..2_000,
        slots in 1u32..20,
    ) {
        let rate = RateConfig { requests, per_ms: 1000, burst };
        let config = AuthorityConfig { quota: None, rate: Some(rate), horizon_ms, ..AuthorityConfig::default() };
        let mut a = Authority::new(config);
        let shadow = Rate::new(rate);
        let c = LeasedClient::new(ClientConfig {
            quota: None,
            slots,
            low_slots: slots,
            borrow: 0,
            local_rate: Some(RateConfig { requests: 1, per_ms: 1000, burst: 1 }),
            ..ClientConfig::default()
        });
        let (mut now, mut reserved, mut started) = (EPOCH_MS, Vec::new(), Vec::new());
        for (advance, ask) in steps {
            now += advance;
            if ask {
                let Some(req) = c.pending_request(now) else { continue };
                let g = a.grant(&req, now);
                let latest = now + horizon_ms.min(config.ttl_ms);
                let same: Vec<u64> = (0..req.want_slots.min(config.max_slots))
                    .map_while(|_| shadow.reserve(now, latest).ok())
                    .collect();
                prop_assert_eq!(same.len() as u32, g.slots);
                reserved.extend(same);
                c.on_grant(&g, now);
            } else {
                let before = c.stats().unwrap().slot_starts;
                let start = c.reserve_start(now, now + 5_000);
                if c.stats().unwrap().slot_starts > before {
                    started.push(start.unwrap());
                }
            }
        }
        started.sort_unstable();
        prop_assert!(started.len() <= reserved.len());
        for (s, r) in started.iter().zip(&reserved) {
            prop_assert!(s >= r, "a start at {} on a slot reserved for {}", s - EPOCH_MS, r - EPOCH_MS);
        }
    }

    #[test]
    fn a_stall_or_a_lost_authority_adds_to_a_busy_fleets_worst_second_only_what_its_clients_may_start_ahead_or_late(
        k in 2usize..7,
        requests in 10u32..200,
        delay_ms in 0u64..30,
        stall in proptest::option::of((1usize..7, 0u64..3_500, 1u64..800)),
        // Lost at `at`, after `down` ms of refused requests.
        restart in proptest::option::of((300u64..3_500, 0u64..1_500)),
    ) {
        let mut s = busy_fleet(k, requests, delay_ms);
        let plain = simulate(&s, &mut Budgets::leased(&s)).max_in_window(1000);
        s.stall = stall.map(|(n, from, len)| (n, from, from + len));
        if let Some((at, down_ms)) = restart {
            s.away = Some((at, at + down_ms));
            s.refused = true;
            s.restart = Some(at + down_ms);
        }
        let out = simulate(&s, &mut Budgets::leased(&s));
        // What a client out of slots borrows while its refill is on its
        // way (`borrow` each: the stall or the restart may move when), and
        // the slots a start may run late (20 ms: a fiftieth of R). Not the
        // K × 32 slots the clients hold: those a stall slept through, or
        // a lost authority's, are not spent on top of the schedule.
        let bound = plain + k as u64 * u64::from(ClientConfig::default().borrow) + u64::from(requests).div_ceil(50);
        prop_assert!(out.max_in_window(1000) <= bound, "{} > {bound}", out.max_in_window(1000));
        prop_assert_eq!(out.unfinished, 0);
    }

    #[test]
    fn no_message_however_absurd_makes_either_side_panic_or_credit_more_than_it_granted(
        msgs in proptest::collection::vec(
            (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>()),
            1..40,
        ),
    ) {
        let mut a = Authority::new(AuthorityConfig {
            rate: Some(RateConfig { requests: 7, per_ms: 1000, burst: 2 }),
            ..AuthorityConfig::default()
        });
        let c = LeasedClient::new(ClientConfig {
            local_rate: Some(RateConfig { requests: 3, per_ms: 1000, burst: 1 }),
            throttle: Some(ThrottleConfig::default()),
            ..ClientConfig::default()
        });
        for (n, (seq, x, y, z, w, t1, t2)) in msgs.into_iter().enumerate() {
            let req = LeaseRequest {
                client: seq % 3,
                seq: seq % 5,
                want_tokens: x,
                holding_tokens: y,
                returned_total: u64::from(z),
                refunded_total: u64::from(w % 3),
                spent_total: u64::from(x % 11),
                want_slots: x % 100,
                leased: z % 2 == 0,
                throttle: (y % 2 == 0).then(|| ThrottleReport {
                    k: 1.0 + f64::from(z % 100),
                    window_ms: 10 + t2 % 600_000,
                    requests: u64::from(y),
                    accepts: u64::from(w),
                }),
                config: match w % 3 {
                    0 => FleetConfig::default(),
                    1 => FleetConfig {
                        quota: Some(QuotaConfig { capacity: y, retry_cost: z, timeout_cost: x, success_refund: w }),
                        rate: None,
                    },
                    _ => FleetConfig {
                        quota: None,
                        rate: Some(RateConfig { requests: y % 1_000, per_ms: t2 % 100_000, burst: z % 5 }),
                    },
                },
            };
            let g = a.grant(&req, t1);
            let window = Some(FleetWindow { requests: u64::from(x), accepts: u64::from(y), retry_ms: t2 });
            c.on_grant(&Grant { seq: n as u64, first_slot_ms: t2, last_slot_ms: t1, slots: y, tokens: z, ttl_ms: t2, window, ..g }, t1);
            let _ = c.admit(t1, &mut || f64::from(z % 100) / 100.0);
            c.sent(t2);
            c.answered(t1, w % 2 == 0, Some(t2));
            let _ = c.pending_request(t2);
            let _ = c.reserve_start(t1, t2);
            c.release_start(t1);
            let _ = c.spend_retry(n % 2 == 0);
            c.on_success(Some(x));
            c.on_unreachable(t2);
        }
        let st = a.stats();
        prop_assert!(st.tokens_credited + st.tokens_reclaimed <= st.tokens_granted);
    }
}
