//! Adaptive throttling (`policy::throttle`) on virtual time: the rule's
//! promises as properties, and the outage, recovery and false-alarm
//! figures the module docs state, for one budget at a steady load.

mod support;

use proptest::prelude::*;
use saferetry::policy::backoff::BadRandom;
use saferetry::policy::throttle::{Admit, Throttle, ThrottleConfig, MIN_REQUESTS, WINDOW_MS};
use support::sim::Draws;

/// One budget's calls at `rate` per second for `seconds`: each call's
/// first attempt is admitted or rejected, and an admitted one is answered
/// as `up(t, draw)` says (accepted or not). Per second: (offered, sent).
fn run(rate: u64, seconds: u64, mut up: impl FnMut(u64, f64) -> bool) -> Vec<(u64, u64)> {
    let mut throttle = Throttle::new(ThrottleConfig::default());
    let mut draws = Draws(0x9e37_79b9_7f4a_7c15);
    let mut per_second = vec![(0, 0); seconds as usize];
    let gap = 1000 / rate;
    let mut t = 0;
    while t < seconds * 1000 {
        let second = &mut per_second[(t / 1000) as usize];
        second.0 += 1;
        if throttle.admit(t, || draws.next()) == Ok(Admit::Go) {
            throttle.sent(t);
            second.1 += 1;
            let accepted = up(t, draws.next());
            throttle.record(t + 5, accepted, None);
        }
        t += gap;
    }
    per_second
}

fn share(seconds: &[(u64, u64)]) -> f64 {
    let (offered, sent) = seconds.iter().fold((0, 0), |(o, s), (a, b)| (o + a, s + b));
    sent as f64 / offered as f64
}

#[test]
fn an_upstream_down_for_30_s_receives_under_15_percent_of_the_calls_and_all_of_them_within_10_s_of_its_return(
) {
    for rate in [10, 20, 50, 200, 1000] {
        let seconds = run(rate, 90, |t, _| !(30_000..60_000).contains(&t));
        let outage = share(&seconds[30..60]);
        assert!(outage <= 0.15, "{rate}/s: {:.1} % of the calls reached a down upstream", outage * 100.0);
        let back = seconds[60..].iter().position(|(offered, sent)| *sent as f64 >= 0.95 * *offered as f64);
        println!(
            "{rate}/s: {:.1} % reached the down upstream, back to 95 % after {back:?} s",
            outage * 100.0
        );
        assert!(back.is_some_and(|s| s <= 10), "{rate}/s: back to 95 % of the load after {back:?} s");
        assert!(share(&seconds[..30]) == 1.0, "{rate}/s: nothing is rejected while the upstream is up");
    }
}

#[test]
fn an_upstream_failing_30_percent_at_random_keeps_over_95_percent_of_the_calls_going_out() {
    for rate in [10, 20, 50, 200, 1000] {
        let seconds = run(rate, 60, |_, draw| draw >= 0.3);
        let sent = share(&seconds);
        println!("{rate}/s, 30 % failing at random: {:.1} % went out", sent * 100.0);
        assert!(sent >= 0.95, "{rate}/s: only {:.1} % went out", sent * 100.0);
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
