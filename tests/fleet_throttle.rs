//! Adaptive throttling shared by a fleet (`policy::budget::lease`,
//! `policy::throttle`) on virtual time: leased clients report their
//! requests and accepts with their lease requests, the authority keeps the
//! fleet's window and answers it with each grant, and every client admits
//! on that picture plus what it counted since.
//!
//! Figures: `cargo test --test fleet_throttle -- --nocapture`.

mod support;
#[path = "support/traffic.rs"]
mod traffic;

use std::collections::VecDeque;
use std::ops::Range;

use saferetry::policy::budget::lease::{
    Authority, AuthorityConfig, AuthorityState, ClientConfig, Grant, LeaseRequest, LeasedClient,
};
use saferetry::policy::budget::{InMemory, Mode, SharedState};
use saferetry::policy::throttle::{Admit, ThrottleConfig};
use support::sim::Draws;
use traffic::Traffic;

fn client(id: u64) -> LeasedClient {
    LeasedClient::new(ClientConfig {
        client: id,
        throttle: Some(ThrottleConfig::default()),
        ..ClientConfig::default()
    })
}

/// Carries the request `c` says is due, if any, and its grant (no delay).
fn exchange(c: &LeasedClient, a: &mut Authority, now: u64) {
    if let Some(request) = c.pending_request(now) {
        let grant = a.grant(&request, now);
        c.on_grant(&grant, now);
    }
}

/// One call's first attempt at `now`, drawing `random`: whether it went
/// out; if it did, the upstream answers at once, `up` or not.
fn call(state: &dyn SharedState, now: u64, random: f64, up: bool) -> bool {
    match state.admit(now, &mut || random) {
        Ok(Admit::Go) => {
            state.sent(now);
            state.answered(now, up, None);
            true
        }
        Ok(Admit::Reject { retry_at }) => {
            assert!(retry_at >= now, "a rejection's retryAt is not in the past");
            false
        }
        Err(_) => panic!("the draws are in [0, 1)"),
    }
}

/// A fleet of two leased clients on one authority, both leased at 0.
fn fleet() -> (Authority, LeasedClient, LeasedClient) {
    let mut a = Authority::new(AuthorityConfig::default());
    let (x, y) = (client(1), client(2));
    exchange(&x, &mut a, 0);
    exchange(&y, &mut a, 0);
    assert_eq!(x.stats().map(|s| s.mode), Some(Mode::Leased));
    (a, x, y)
}

/// Client `x` alone meets an outage: 30 calls, one every 20 ms from 1000,
/// every one refused by the upstream (`random` 0.999: only a certainty
/// rejects), exchanging after each as the host pumps; its last counts are
/// reported at 1900 (a report goes out at most every 300 ms).
fn outage_seen_by(x: &LeasedClient, a: &mut Authority) {
    for t in (1_000..1_600).step_by(20) {
        assert!(call(x, t, 0.999, false));
        exchange(x, a, t);
    }
    exchange(x, a, 1_900);
}

#[test]
fn a_client_that_saw_nothing_of_an_outage_is_throttled_once_the_fleets_picture_reaches_it() {
    let (mut a, x, y) = fleet();
    outage_seen_by(&x, &mut a);
    // `y` was idle: its picture is a window old, so its first call goes
    // out on its own (empty) window; sending it makes a report due, and
    // the grant answers the fleet's window.
    assert!(call_unanswered(&y, 2_000), "a stale picture throttles nothing");
    exchange(&y, &mut a, 2_000);
    // Its one call not even answered, it has seen no failure; the fleet has.
    let rejected = (0..4).filter(|i| !call_unanswered(&y, 2_010 + i)).count();
    assert_eq!(rejected, 4, "the fleet's outage throttles a client that saw none of it");
    // Without sharing (a window of its own, as before), the same calls
    // would have gone out: the control.
    let alone = InMemory::new(None, None).throttled(Some(ThrottleConfig::default()));
    let sent = (0..5).filter(|i| call_unanswered(&alone, 2_000 + i * 10)).count();
    assert_eq!(sent, 5, "a window of its own holds nothing to throttle on");
}

/// A call whose attempt goes out and is not answered yet (random 0.0:
/// any probability above 0 rejects).
fn call_unanswered(state: &dyn SharedState, now: u64) -> bool {
    match state.admit(now, &mut || 0.0) {
        Ok(Admit::Go) => {
            state.sent(now);
            true
        }
        _ => false,
    }
}

#[test]
fn the_fleet_throttles_after_an_outage_seen_by_either_client_and_recovers_within_10_s_of_the_upstreams_return(
) {
    for seer in [0, 1] {
        let (mut a, x, y) = fleet();
        let clients = [&x, &y];
        let mut draws = Draws(0x2545_f491_4f6c_dd1d + seer as u64);
        // Both call every 20 ms (100 a second between them); the upstream
        // is down from 1 s to 11 s, but only `seer` calls it before 2 s
        // (the other is idle then).
        let (mut offered, mut sent) = ([0u64; 30], [0u64; 30]);
        // What the idle client sends in its first 300 ms of calls.
        let mut joined_sent = 0;
        for t in (1_000..30_000u64).step_by(10) {
            let who = ((t / 10) % 2) as usize;
            if t < 2_000 && who != seer {
                continue;
            }
            let up = !(1_000..11_000).contains(&t);
            let second = (t / 1_000) as usize;
            offered[second] += 1;
            if call(clients[who], t, draws.next(), up) {
                sent[second] += 1;
                if who != seer && t < 2_300 {
                    joined_sent += 1;
                }
            }
            exchange(clients[who], &mut a, t);
        }
        let outage: (u64, u64) = (2..11).fold((0, 0), |(o, s), i| (o + offered[i], s + sent[i]));
        let share = outage.1 as f64 / outage.0 as f64;
        let back = (11..30).position(|i| sent[i] as f64 >= 0.95 * offered[i] as f64);
        println!(
            "outage seen first by client {}: {:.1} % of the calls in seconds 2-11 went out; back to 95 % {back:?} s after the return",
            seer + 1,
            share * 100.0
        );
        assert!(share <= 0.15, "the fleet holds back during the outage: {:.1} %", share * 100.0);
        // On its own window it would send 5 before rejecting anything.
        assert!(joined_sent <= 2, "the client joining mid-outage is throttled at once: sent {joined_sent}");
        for i in 2..11 {
            assert!(sent[i] < offered[i] / 2, "second {i}: {} of {} went out", sent[i], offered[i]);
        }
        assert!(back.is_some_and(|s| s <= 10), "back to 95 % within 10 s: {back:?}");
        assert_eq!(sent[29], offered[29], "and every call goes out once recovered");
    }
}

/// A fleet's load on virtual time: three leased clients on one authority,
/// each starting a call every `every_ms` (plus up to `jitter_ms`), from a
/// random moment in its first 50 ms, exchanging with the authority as the
/// host pumps, each request answered `round_trip` ms later (the authority
/// decides halfway). The upstream answers 5 ms after a call, refusing
/// everything sent within `down`; with `retry`, a refused call is retried
/// once (`maxAttempts: 2`) after a full-jitter wait of up to 50 ms, when
/// the retry quota allows.
struct Load {
    every_ms: u64,
    jitter_ms: u64,
    retry: bool,
    down: Range<u64>,
    end: u64,
    round_trip: u64,
}

/// What a [`Load`] did: per millisecond, the calls offered and the first
/// attempts sent; per client, the first accepted answer from the
/// upstream's return on (ms after it).
struct Ran {
    traffic: Traffic,
    back: [Option<u64>; 3],
}

impl Load {
    /// The throttle tier's: three clients calling every 45-55 ms (60 a
    /// second between them), refused from 5 s to 35 s of 50 s.
    fn tier(round_trip: u64) -> Load {
        Load { every_ms: 45, jitter_ms: 10, retry: false, down: 5_000..35_000, end: 50_000, round_trip }
    }

    fn run(&self, seed: u64) -> Ran {
        let (end, round_trip) = (self.end, self.round_trip);
        let mut a = Authority::new(AuthorityConfig::default());
        let clients = [client(1), client(2), client(3)];
        let mut draws = Draws(seed);
        let mut traffic = Traffic::new(end);
        let mut back = [None; 3];
        let mut next: Vec<u64> = (0..3).map(|_| (draws.next() * 50.0) as u64).collect();
        // Answers on their way: when, whether accepted, whether a refusal is retried.
        let mut answers: Vec<VecDeque<(u64, bool, bool)>> = vec![VecDeque::new(); 3];
        let mut retries: Vec<VecDeque<u64>> = vec![VecDeque::new(); 3];
        // A request on its way to the authority, or its grant on its way back.
        let mut asked: Vec<Option<(u64, LeaseRequest)>> = vec![None, None, None];
        let mut granted: Vec<Option<(u64, Grant)>> = vec![None, None, None];
        for t in 0..end {
            for (i, c) in clients.iter().enumerate() {
                if let Some((_, request)) = asked[i].take_if(|(at, _)| *at <= t) {
                    granted[i] = Some((t + round_trip - round_trip / 2, a.grant(&request, t)));
                }
                if let Some((_, grant)) = granted[i].take_if(|(at, _)| *at <= t) {
                    c.on_grant(&grant, t);
                }
                while let Some((at, up, retried)) = answers[i].front().copied().filter(|(at, ..)| *at <= t) {
                    answers[i].pop_front();
                    c.answered(at, up, None);
                    if up && at >= self.down.end {
                        back[i].get_or_insert(at - self.down.end);
                    }
                    if !up && retried && c.spend_retry(false).is_some() {
                        retries[i].push_back(t + (draws.next() * 50.0) as u64);
                    }
                }
                while retries[i].front().is_some_and(|&at| at <= t) {
                    retries[i].pop_front();
                    c.sent(t);
                    answers[i].push_back((t + 5, !self.down.contains(&t), false));
                }
                if next[i] == t {
                    traffic.offered[t as usize] += 1;
                    if c.admit(t, &mut || draws.next()) == Ok(Admit::Go) {
                        c.sent(t);
                        traffic.sent[t as usize] += 1;
                        answers[i].push_back((t + 5, !self.down.contains(&t), self.retry));
                    }
                    next[i] = t + self.every_ms + (draws.next() * self.jitter_ms as f64) as u64;
                }
                if asked[i].is_none() && granted[i].is_none() {
                    asked[i] = c.pending_request(t).map(|r| (t + round_trip / 2, r));
                }
            }
        }
        Ran { traffic, back }
    }
}

#[test]
fn at_the_throttle_tiers_load_a_fleet_holds_back_during_an_outage_and_is_back_within_10_s_in_every_seeded_run(
) {
    for round_trip in [2, 40] {
        let (mut shares, mut backs) = (Vec::new(), Vec::new());
        for i in 0..100u64 {
            let load = Load::tier(round_trip);
            let Ran { traffic, .. } = load.run(0x2545_f491_4f6c_dd1du64.wrapping_mul(i + 1) | 1);
            shares.push(traffic.share(load.down.clone()));
            backs.push(traffic.back_ms(load.down.end).unwrap_or(u64::MAX));
        }
        backs.sort_unstable();
        let mean = shares.iter().sum::<f64>() / shares.len() as f64;
        let slowest = backs[backs.len() - 1];
        println!(
            "3 clients x 20/s, round trip {round_trip} ms, 100 runs: {:.1} % of the calls out in the outage (largest {:.1} %); back to 95 % after {:.2} s (median), {:.2} s (slowest; none: not within 15 s)",
            mean * 100.0,
            shares.iter().copied().fold(0.0, f64::max) * 100.0,
            backs[backs.len() / 2] as f64 / 1000.0,
            if slowest == u64::MAX { f64::INFINITY } else { slowest as f64 / 1000.0 }
        );
        assert!(mean <= 0.15, "the fleet holds back: {:.1} %", mean * 100.0);
        assert!(slowest <= 10_000, "round trip {round_trip} ms: back to 95 % after {slowest} ms");
    }
}

#[test]
fn a_restored_authority_keeps_the_fleets_window() {
    let (mut a, x, y) = fleet();
    outage_seen_by(&x, &mut a);
    let saved = a.state();
    let window = saved.window.clone().expect("a client reported counts");
    assert_eq!(
        window.buckets.iter().map(|b| (b.requests, b.accepts)).fold((0, 0), |s, b| (s.0 + b.0, s.1 + b.1)),
        (30, 0)
    );
    let mut restored = Authority::restore(a.config(), &saved);
    assert_eq!(restored.state(), saved, "a restore is exact");
    // `y`'s next report reaches the restored authority: it is throttled
    // on the window the old one kept.
    assert!(call_unanswered(&y, 2_000));
    exchange(&y, &mut restored, 2_000);
    assert!(!call_unanswered(&y, 2_001), "the restored window throttles");
    // And one restored from a state without a window (kept by an older
    // version) starts one empty: nothing throttles.
    let mut older = Authority::restore(a.config(), &saved_without_window(&saved));
    let z = client(3);
    exchange(&z, &mut older, 2_000);
    assert!(call_unanswered(&z, 2_001));
}

fn saved_without_window(saved: &AuthorityState) -> AuthorityState {
    AuthorityState { window: None, ..saved.clone() }
}

#[test]
fn a_random_failure_rate_of_30_percent_in_a_fleet_keeps_over_95_percent_of_the_calls_going_out() {
    let (mut a, x, y) = fleet();
    let mut draws = Draws(0x9e37_79b9_7f4a_7c15);
    let (mut offered, mut sent) = (0, 0);
    for t in (1_000..31_000u64).step_by(10) {
        let c = if (t / 10) % 2 == 0 { &x } else { &y };
        offered += 1;
        let up = draws.next() >= 0.3;
        if call(c, t, draws.next(), up) {
            sent += 1;
        }
        exchange(c, &mut a, t);
    }
    let share = sent as f64 / offered as f64;
    println!(
        "30 % random failures, two clients at 50 a second each: {:.2} % of the calls went out",
        share * 100.0
    );
    assert!(share >= 0.95, "{:.2} %", share * 100.0);
}

#[test]
fn counts_are_reported_at_most_five_times_a_window_and_credited_once() {
    let (mut a, x, _) = fleet();
    let before = x.stats().unwrap().requests;
    for t in (1_000..2_500).step_by(5) {
        call(&x, t, 0.999, true);
        exchange(&x, &mut a, t);
    }
    let asked = x.stats().unwrap().requests - before;
    assert!((4..=6).contains(&asked), "one report per 300 ms over 1.5 s: {asked}");
    // Every count was credited exactly once: the fleet's window holds the
    // 300 requests and accepts made (the last report's, less what came after).
    let w = a.state().window.unwrap();
    let (requests, accepts) = w.buckets.iter().fold((0, 0), |s, b| (s.0 + b.requests, s.1 + b.accepts));
    assert_eq!(requests, accepts);
    assert!((240..=300).contains(&requests), "{requests}");
}

/// The demo's three tabs (www/scenarios.js "Three tabs, upstream down 5 s,
/// then back"; tests/demo asserts that each tab gets a 200 in the 9 s
/// after the return): three leased clients calling every 50 ms,
/// `maxAttempts: 2`, the upstream down from 1 s to 6 s of 15 s. Each
/// client's first 200 after the return waits for its first probe: at the
/// cap one call in 33, evenly spaced (`policy::throttle`). With a draw per
/// call that wait was geometric: at the 30 calls a second the demo made
/// before (every 100 ms) 0.5 % of 2000 runs had a tab with none within
/// 9 s and the slowest took 13 s (a fresh-clone run of the demo tier
/// failed so once); spaced, 6.6 s at most there, and 4.9 s here.
#[test]
fn at_the_demos_load_every_one_of_three_tabs_gets_a_200_within_9_s_of_the_upstreams_return_in_every_seeded_run(
) {
    const RUNS: u64 = 2_000;
    let load =
        Load { every_ms: 50, jitter_ms: 0, retry: true, down: 1_000..6_000, end: 15_000, round_trip: 2 };
    let mut slowest: Vec<u64> = (0..RUNS)
        .map(|i| {
            let ran = load.run(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i + 1) | 1);
            ran.back.iter().map(|b| b.unwrap_or(u64::MAX)).max().unwrap_or(u64::MAX)
        })
        .collect();
    slowest.sort_unstable();
    let at = |q: f64| match slowest[((RUNS - 1) as f64 * q) as usize] {
        u64::MAX => f64::INFINITY,
        ms => ms as f64 / 1000.0,
    };
    println!(
        "the demo's three tabs at 20 calls a second each, {RUNS} runs: the slowest tab's first 200 after the return at {:.2} s (median), {:.2} s (99th percentile), {:.2} s (slowest; inf: none within the run)",
        at(0.5),
        at(0.99),
        at(1.0)
    );
    assert!(slowest[slowest.len() - 1] <= 9_000, "every tab within 9 s: {:.2} s", at(1.0));
}
