//! Adaptive throttling (`policy::throttle`) on virtual time: the rule's
//! promises as properties, and the outage, recovery and false-alarm
//! figures the module docs state, for one budget at a steady load.

mod support;
#[path = "support/traffic.rs"]
mod traffic;

use std::ops::Range;

use proptest::prelude::*;
use saferetry::policy::backoff::BadRandom;
use saferetry::policy::throttle::{Admit, Throttle, ThrottleConfig, MIN_REQUESTS, WINDOW_MS};
use support::sim::Draws;
use traffic::Traffic;

/// The outage: the upstream refuses everything from 5 s to 35 s of a 50 s run.
const DOWN: Range<u64> = 5_000..35_000;
const END_MS: u64 = 50_000;

/// One budget's calls at `rate` per second for 50 s, the first at a
/// random point of the first gap (`seed`): each call's first attempt is
/// admitted or rejected, and an admitted one is answered 5 ms later as
/// `up(t, draw)` says (accepted or not).
fn run(rate: u64, seed: u64, mut up: impl FnMut(u64, f64) -> bool) -> Traffic {
    let mut throttle = Throttle::new(ThrottleConfig::default());
    let mut draws = Draws(seed);
    let mut r = Traffic::new(END_MS);
    let gap_us = 1_000_000 / rate;
    let mut answers = std::collections::VecDeque::new();
    let mut at_us = (draws.next() * gap_us as f64) as u64;
    while at_us < END_MS * 1000 {
        let t = at_us / 1000;
        while let Some(&(at, accepted)) = answers.front().filter(|(at, _)| *at <= t) {
            throttle.record(at, accepted, None);
            answers.pop_front();
        }
        r.offered[t as usize] += 1;
        if throttle.admit(t, || draws.next()) == Ok(Admit::Go) {
            throttle.sent(t);
            r.sent[t as usize] += 1;
            answers.push_back((t + 5, up(t, draws.next())));
        }
        at_us += gap_us;
    }
    r
}

/// Distinct seeds for the `i`th run of a table.
fn seed(table: u64, i: u64) -> u64 {
    0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i + 1 + table * 7_919) | 1
}

/// Runs at each rate (fewer at 1000 a second: each is 50 000 calls).
const RATES: [(u64, u64); 5] = [(10, 200), (20, 200), (60, 200), (200, 100), (1000, 40)];

#[test]
fn an_upstream_down_for_30_s_receives_under_15_percent_of_the_calls_and_all_of_them_within_10_s_of_its_return_in_every_seeded_run(
) {
    println!("| calls a second | runs | outage share, mean / largest | back to 95 %, median / slowest |");
    for (rate, runs) in RATES {
        let (mut shares, mut backs) = (Vec::new(), Vec::new());
        for i in 0..runs {
            let r = run(rate, seed(0, i), |t, _| !DOWN.contains(&t));
            // From 1 s: at 1000 a second, the first 5 ms send 5 calls
            // before any is answered, which reads as 5 failures.
            assert_eq!(
                r.share(1_000..DOWN.start),
                1.0,
                "{rate}/s: nothing is rejected while the upstream is up"
            );
            shares.push(r.share(DOWN));
            backs.push(r.back_ms(DOWN.end).unwrap_or(u64::MAX));
        }
        backs.sort_unstable();
        let largest = shares.iter().copied().fold(0.0, f64::max);
        let mean = shares.iter().sum::<f64>() / runs as f64;
        let slowest = backs[backs.len() - 1];
        println!(
            "| {rate} | {runs} | {:.1} % / {:.1} % | {:.2} s / {:.2} s |",
            mean * 100.0,
            largest * 100.0,
            backs[backs.len() / 2] as f64 / 1000.0,
            if slowest == u64::MAX { f64::INFINITY } else { slowest as f64 / 1000.0 }
        );
        assert!(mean <= 0.15, "{rate}/s: {:.1} % of the calls reached a down upstream", mean * 100.0);
        assert!(slowest <= 10_000, "{rate}/s: back to 95 % of the load after {slowest} ms");
    }
}

#[test]
fn an_upstream_failing_30_percent_at_random_keeps_over_95_percent_of_the_calls_going_out() {
    for (rate, runs) in RATES {
        let shares: Vec<f64> =
            (0..runs).map(|i| run(rate, seed(1, i), |_, draw| draw >= 0.3).share(0..END_MS)).collect();
        let mean = shares.iter().sum::<f64>() / runs as f64;
        let least = shares.iter().copied().fold(1.0, f64::min);
        println!(
            "{rate}/s, 30 % failing at random: {:.1} % went out (least of {runs} runs {:.1} %)",
            mean * 100.0,
            least * 100.0
        );
        assert!(mean >= 0.95, "{rate}/s: only {:.1} % went out", mean * 100.0);
    }
}

#[test]
fn a_rejection_names_when_to_try_again_within_the_window() {
    let mut throttle = Throttle::new(ThrottleConfig::default());
    for t in 0..20 {
        assert_eq!(throttle.admit(t * 10, || 0.999_999), Ok(Admit::Go), "a draw above p goes");
        throttle.sent(t * 10);
        throttle.record(t * 10, false, None);
    }
    let Ok(Admit::Reject { retry_at }) = throttle.admit(200, || 0.0) else {
        panic!("everything failed: a draw of 0 is rejected")
    };
    assert!((200..=200 + WINDOW_MS).contains(&retry_at), "{retry_at}");
    // With no new requests, the window empties and nothing is rejected.
    assert_eq!(throttle.admit(200 + 2 * WINDOW_MS, || 0.0), Ok(Admit::Go));
}

#[test]
fn the_random_source_is_drawn_only_when_a_rejection_is_possible_and_a_bad_draw_is_refused() {
    let mut throttle = Throttle::new(ThrottleConfig::default());
    for t in 0..20 {
        let admitted = throttle.admit(t, || panic!("nothing failed yet: no draw"));
        assert_eq!(admitted, Ok(Admit::Go));
        throttle.sent(t);
        throttle.record(t, true, None);
    }
    for t in 20..60 {
        throttle.sent(t);
        throttle.record(t, false, None);
    }
    let mut draws = 0;
    assert_eq!(
        throttle.admit(60, || {
            draws += 1;
            0.999_999
        }),
        Ok(Admit::Go)
    );
    assert_eq!(draws, 1, "a failing window draws once");
    assert_eq!(throttle.admit(60, || 1.0), Err(BadRandom));
    assert_eq!(throttle.admit(60, || f64::NAN), Err(BadRandom));
}

proptest! {
    /// The rule's promise: while the window holds at least one accept per
    /// K requests, nothing is rejected, whatever the draw.
    #[test]
    fn an_upstream_that_accepts_at_least_one_request_in_k_is_never_throttled(
        steps in proptest::collection::vec((0u64..300, any::<bool>(), 0.0f64..1.0), 1..400),
        k in 1.0f64..4.0,
    ) {
        let mut throttle = Throttle::new(ThrottleConfig { k, ..ThrottleConfig::default() });
        let mut t = 0;
        for (gap, accepted, draw) in steps {
            t += gap;
            let c = throttle.counts(t);
            let decided = throttle.admit(t, || draw).unwrap();
            if k * c.accepts as f64 >= c.requests as f64 || c.requests < MIN_REQUESTS {
                prop_assert_eq!(decided, Admit::Go, "counts {:?}", c);
            }
            if decided == Admit::Go {
                throttle.sent(t);
                throttle.record(t, accepted, None);
            }
        }
    }

    /// A rejection never names a time before a server's floor seen
    /// earlier (however long ago), nor before now.
    #[test]
    fn a_rejection_never_shortens_a_server_s_retry_after(
        steps in proptest::collection::vec((0u64..300, any::<bool>(), proptest::option::of(0u64..5_000)), 1..300),
    ) {
        let mut throttle = Throttle::new(ThrottleConfig::default());
        let mut t = 0;
        let mut floors: Vec<(u64, u64)> = Vec::new();
        for (gap, accepted, floor) in steps {
            t += gap;
            if let Admit::Reject { retry_at } = throttle.admit(t, || 0.0).unwrap() {
                prop_assert!(retry_at >= t);
                for &(at, until) in &floors {
                    prop_assert!(retry_at >= until, "retry_at {} before the floor {} set at {}", retry_at, until, at);
                }
                continue;
            }
            throttle.sent(t);
            let until = floor.map(|f| t + f);
            throttle.record(t, accepted, until);
            if let Some(u) = until {
                floors.push((t, u));
            }
        }
    }
}
