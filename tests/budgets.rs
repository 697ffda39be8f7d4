//! Shared budgets across many operations, on virtual time: start-rate
//! spacing, the concurrency limit, and the retry quota's amplification.

mod support;

use saferetry::engine::{run, Call, Finished};
use saferetry::policy::budget::quota::QuotaConfig;
use saferetry::policy::budget::rate::RateConfig;
use saferetry::policy::budget::SharedState;
use saferetry::policy::classify::Safety;
use saferetry::policy::options::Options;
use saferetry::policy::reason::Reason;
use saferetry::policy::state::Phase;
use support::sim::{Script, Shared, Sim, SimClock, Step};

/// Runs `n` GET operations at once against one scripted server, sharing
/// one policy's budgets; returns their results and the server.
fn many(
    options: &Options,
    n: usize,
    steps: Vec<Step>,
    limit_ms: u64,
) -> (Vec<Finished<u16, &'static str>>, Script, Shared) {
    let sim = Sim::new();
    let script = Script::new(&sim, steps);
    let shared = Shared::new(options);
    let clocks: Vec<SimClock> = (0..n).map(|_| SimClock::new(&sim)).collect();
    let call = Call { options, safety: Safety::Idempotent, body_replayable: true, not_before: None };
    let tasks: Vec<_> = clocks
        .iter()
        .map(|clock| {
            let (script, shared) = (&script, &shared);
            async move { run(call, script, clock, shared.budget(), &mut || 0.5, &mut |_| {}).await }
        })
        .collect();
    let results = sim.run_all(tasks, limit_ms);
    (results, script, shared)
}

fn unlimited_time() -> Options {
    let mut o = Options::default();
    o.limits.total_ms = 2_147_483_647;
    o
}

#[test]
fn six_hundred_requests_at_ninety_a_minute_start_two_thirds_of_a_second_apart_and_take_about_400_s() {
    let mut o = unlimited_time();
    o.rate = Some(RateConfig { requests: 90, per_ms: 60_000, burst: 1 });
    let (results, script, _) = many(&o, 600, vec![Step::status(200)], 1_000_000);
    assert!(results.iter().all(|r| r.report.reason == Reason::Succeeded));
    let starts = script.starts.borrow();
    assert_eq!(starts.len(), 600);
    assert!(starts.windows(2).all(|w| w[1] - w[0] >= 666), "every gap is at least 666 ms");
    let last = *starts.last().unwrap();
    assert!((399_000..=400_000).contains(&last), "last start at {last} ms");
    println!(
        "600 starts at 90/min: last at {last} ms, smallest gap {} ms",
        starts.windows(2).map(|w| w[1] - w[0]).min().unwrap()
    );
}

/// The most starts inside any window of `window_ms`.
fn busiest_window(starts: &[u64], window_ms: u64) -> usize {
    (0..starts.len())
        .map(|i| starts[i..].iter().take_while(|&&s| s < starts[i] + window_ms).count())
        .max()
        .unwrap_or(0)
}

#[test]
fn no_one_second_window_holds_more_than_the_burst_allowance_plus_one_starts() {
    for (requests, per_ms, burst) in [(90u32, 60_000u64, 1u32), (1, 1000, 1), (1, 1000, 3), (2, 2000, 10)] {
        let mut o = unlimited_time();
        o.rate = Some(RateConfig { requests, per_ms, burst });
        let (_, script, _) = many(&o, 120, vec![Step::status(200)], 10_000_000);
        let busiest = busiest_window(&script.starts.borrow(), 1000);
        assert!(
            busiest <= burst as usize + 1,
            "{requests}/{per_ms} ms, burst {burst}: {busiest} starts in one second"
        );
        assert!(busiest >= burst as usize, "the burst allowance is usable");
    }
}

#[test]
fn rate_limited_retries_are_spaced_like_first_attempts() {
    let mut o = unlimited_time();
    o.rate = Some(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
    o.backoff.base_ms = 0;
    let (results, script, _) =
        many(&o, 1, vec![Step::status(503), Step::status(503), Step::status(200)], 60_000);
    assert_eq!(results[0].report.reason, Reason::Succeeded);
    assert_eq!(*script.starts.borrow(), [0, 1000, 2000]);
}

#[test]
fn with_two_second_responses_in_flight_never_exceeds_the_concurrency_limit() {
    let mut o = unlimited_time();
    o.concurrency = Some(3);
    let (results, script, shared) = many(&o, 20, vec![Step::status(200).headers_after(2000)], 100_000);
    assert!(results.iter().all(|r| r.report.reason == Reason::Succeeded));
    assert_eq!(script.max_in_flight.get(), 3);
    assert_eq!(script.requests(), 20);
    let starts = script.starts.borrow();
    assert_eq!(starts.iter().filter(|&&s| s == 0).count(), 3, "three start at once");
    assert_eq!(*starts.last().unwrap(), 12_000, "FIFO in batches of three: 7 batches");
    assert_eq!((shared.stats.in_flight.get(), shared.stats.queued.get()), (0, 0), "every slot released");
}

#[test]
fn a_queued_operation_that_cannot_start_before_its_deadline_stops_with_queue_exceeds_budget() {
    let mut o = Options::default();
    o.limits.total_ms = 3000;
    o.limits.attempt_ms = 3000;
    o.concurrency = Some(1);
    let (results, script, shared) = many(&o, 3, vec![Step::status(200).headers_after(2000)], 100_000);
    let reasons: Vec<Reason> = results.iter().map(|r| r.report.reason).collect();
    assert_eq!(reasons, [Reason::Succeeded, Reason::Deadline, Reason::QueueExceedsBudget]);
    assert_eq!(script.requests(), 2);
    assert_eq!(shared.gate.as_ref().unwrap().in_use(), 0);
}

#[test]
fn a_start_the_rate_puts_past_the_deadline_stops_with_queue_exceeds_budget_and_a_retry_at() {
    let mut o = Options::default();
    o.limits.total_ms = 1500;
    o.rate = Some(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
    let (results, script, _) = many(&o, 3, vec![Step::status(200)], 100_000);
    let reasons: Vec<Reason> = results.iter().map(|r| r.report.reason).collect();
    assert_eq!(reasons, [Reason::Succeeded, Reason::Succeeded, Reason::QueueExceedsBudget]);
    assert_eq!(results[2].report.retry_at, Some(support::sim::EPOCH_MS + 2000));
    assert_eq!(script.requests(), 2);
}

#[test]
fn against_a_server_that_always_fails_the_quota_caps_amplification_near_one() {
    let ops = 1000;
    let mut o = unlimited_time();
    o.backoff.base_ms = 10;
    // The quota's own bound (adaptive throttling would bound first attempts too).
    o.throttle = None;
    let (results, with_quota, shared) = many(&o, ops, vec![Step::status(503)], 10_000_000);
    let amplification = with_quota.requests() as f64 / ops as f64;
    o.quota = None;
    let (_, without, _) = many(&o, ops, vec![Step::status(503)], 10_000_000);
    let unbounded = without.requests() as f64 / ops as f64;
    println!("amplification over {ops} operations against 503s: quota {amplification:.3}x, no quota {unbounded:.3}x");
    assert!(amplification <= 1.1, "{amplification}");
    assert_eq!(without.requests(), 3 * ops);
    assert_eq!(shared.state.quota_level(), Some(0));
    let refused = results.iter().filter(|r| r.report.reason == Reason::RetryQuotaExhausted).count();
    assert!(refused >= 900, "{refused} operations were refused a retry by the empty quota");
    assert_eq!(results[0].phase.name(), "try-later");
}

#[test]
fn the_quota_refills_after_successes() {
    let mut o = unlimited_time();
    o.quota = Some(QuotaConfig { capacity: 20, ..QuotaConfig::default() });
    // After ten failed operations the throttle would reject the next: not this test's subject.
    o.throttle = None;
    let (_, _, shared) = many(&o, 10, vec![Step::status(503)], 1_000_000);
    assert_eq!(shared.state.quota_level(), Some(0));
    let emptied = shared.state.quota_level();
    for _ in 0..7 {
        shared.state.on_success(None);
    }
    assert_eq!((emptied, shared.state.quota_level()), (Some(0), Some(7)));
    // A retried operation that succeeds refunds its retry's full cost.
    let sim = Sim::new();
    let script = Script::new(&sim, vec![Step::status(503), Step::status(200)]);
    let clock = SimClock::new(&sim);
    let call = Call { options: &o, safety: Safety::Idempotent, body_replayable: true, not_before: None };
    let done = sim.run(run(call, &script, &clock, shared.budget(), &mut || 0.5, &mut |_| {}));
    assert_eq!(done.report.reason, Reason::Succeeded);
    assert_eq!(shared.state.quota_level(), Some(7), "spent 5 on the retry, refunded 5 on success");
}

#[test]
fn stats_count_operations_attempts_and_retries() {
    let o = unlimited_time();
    let (_, _, shared) = many(&o, 4, vec![Step::status(503), Step::status(200)], 1_000_000);
    let s = &shared.stats;
    let histogram: Vec<u64> = s.attempts_histogram.iter().map(|c| c.get()).collect();
    assert_eq!(s.operations.get(), 4);
    assert_eq!(histogram, [3, 1, 0, 0, 0], "the first request failed, the others found the 200");
    assert_eq!(s.retries.get(), 1);
}

#[test]
fn a_call_that_opted_out_of_the_quota_neither_spends_nor_refunds_it() {
    let mut o = unlimited_time();
    o.quota = Some(QuotaConfig { capacity: 20, ..QuotaConfig::default() });
    let sim = Sim::new();
    let shared = Shared::new(&o);
    assert_eq!(shared.state.spend_retry(false), Some(5));
    let script = Script::new(&sim, vec![Step::status(503), Step::status(200)]);
    let clock = SimClock::new(&sim);
    let call = Call { options: &o, safety: Safety::Idempotent, body_replayable: true, not_before: None };
    let budget = saferetry::engine::Budget { quota: false, ..shared.budget() };
    let done = sim.run(run(call, &script, &clock, budget, &mut || 0.5, &mut |_| {}));
    assert_eq!((done.report.reason, script.requests()), (Reason::Succeeded, 2));
    assert_eq!(shared.state.quota_level(), Some(15), "untouched by the opted-out call");
}

#[test]
fn a_permit_held_when_a_late_timer_leaves_no_room_for_an_attempt_is_free_before_the_end_is_shown() {
    let mut o = Options::default();
    o.limits.total_ms = 1500;
    o.rate = Some(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
    o.concurrency = Some(1);
    let sim = Sim::new();
    let script = Script::new(&sim, vec![Step::status(200)]);
    let shared = Shared::new(&o);
    let gate = shared.gate.as_ref().unwrap();
    let call = Call { options: &o, safety: Safety::Idempotent, body_replayable: true, not_before: None };
    // The rate's one start is taken: the operation holds the permit and
    // waits for the next start, at 1000; its timer fires late, at 2000,
    // past the deadline (1500), with no room left for an attempt.
    let taken = shared.state.reserve_start(sim.now(), sim.now() + 1500);
    assert!(taken.is_ok());
    let clock = SimClock::new(&sim);
    clock.stall(support::sim::EPOCH_MS + 900, support::sim::EPOCH_MS + 2000);
    let mut ends = Vec::new();
    let done = sim.run(run(call, &script, &clock, shared.budget(), &mut || 0.5, &mut |p| {
        if !matches!(p, Phase::Requesting { .. } | Phase::Waiting { .. } | Phase::Idle) {
            ends.push((p, gate.in_use()));
        }
    }));
    assert_eq!(done.report.reason, Reason::Deadline);
    assert_eq!(script.requests(), 0, "no attempt was sent");
    assert_eq!(ends.len(), 1, "one end shown: {ends:?}");
    assert_eq!(ends[0].1, 0, "the permit is back before the end is shown: {ends:?}");
}
