//! The foundation table, reproduced exactly on virtual time: the real
//! engine, a scripted server and a virtual clock; random() fixed at 0.5.

mod support;

use saferetry::engine::{run, Call, Finished};
use saferetry::policy::classify::{RetryOn, Safety, Stage};
use saferetry::policy::options::Options;
use saferetry::policy::reason::Reason;
use saferetry::policy::state::Phase;
use support::sim::{Script, Shared, Sim, SimClock, Step, EPOCH_MS};

/// maxAttempts 3, totalMs 4000, attemptMs 1000, baseMs 50, capMs 200;
/// retryable statuses 429 and 503; spread off.
pub fn table_options() -> Options {
    let mut o = Options::default();
    o.limits.max_attempts = 3;
    o.limits.total_ms = 4000;
    o.limits.attempt_ms = 1000;
    o.backoff.base_ms = 50;
    o.backoff.cap_ms = 200;
    o.backoff.retry_after_spread = false;
    o.retry_on = RetryOn::new(&[429, 503], true, true);
    o
}

#[derive(Clone, Copy, PartialEq)]
enum Cancel {
    Never,
    BeforeTheCall,
    WhilePreparingTheWait,
    DuringTheWait,
}

struct Ran {
    requests: usize,
    finished: Finished<u16, &'static str>,
    phases: Vec<Phase>,
    ended_at: u64,
}

impl Ran {
    fn waits(&self) -> Vec<u64> {
        self.finished.report.attempts.iter().filter_map(|a| a.planned_wait_ms).collect()
    }
    fn reason(&self) -> Reason {
        self.finished.report.reason
    }
}

fn run_case(options: &Options, method: &str, steps: Vec<Step>, cancel: Cancel, random: f64) -> Ran {
    let sim = Sim::new();
    let script = Script::new(&sim, steps);
    let clock = SimClock::new(&sim);
    let shared = Shared::new(options);
    if cancel == Cancel::BeforeTheCall {
        clock.cancel_after(0);
    }
    let mut phases = Vec::new();
    let call = Call { options, safety: Safety::of(method, false), body_replayable: true, not_before: None };
    let finished = sim.run(async {
        let mut random = || random;
        let mut observe = |p: Phase| {
            if matches!(p, Phase::Waiting { .. }) {
                match cancel {
                    Cancel::WhilePreparingTheWait => clock.cancel_after(0),
                    Cancel::DuringTheWait => clock.cancel_after(10),
                    _ => {}
                }
            }
            phases.push(p);
        };
        run(call, &script, &clock, shared.budget(), &mut random, &mut observe).await
    });
    Ran { requests: script.requests(), finished, phases, ended_at: sim.elapsed() }
}

fn row(steps: Vec<Step>) -> Ran {
    run_case(&table_options(), "GET", steps, Cancel::Never, 0.5)
}

#[test]
fn a_503_twice_then_200_succeeds_on_the_third_request_after_waits_of_25_and_50_ms() {
    let r = row(vec![Step::status(503), Step::status(503), Step::status(200)]);
    assert_eq!((r.requests, r.reason(), r.waits()), (3, Reason::Succeeded, vec![25, 50]));
    assert_eq!(r.finished.phase, Phase::Succeeded);
    assert_eq!(r.finished.response.as_ref().map(|a| a.status), Some(200));
    assert_eq!(r.ended_at, 75);
}

#[test]
fn a_404_stops_at_once_with_http_stop() {
    let r = row(vec![Step::status(404)]);
    assert_eq!((r.requests, r.reason(), r.waits()), (1, Reason::HttpStop, vec![]));
    assert_eq!(r.finished.report.snippet.as_deref(), Some("status 404"));
}

#[test]
fn a_501_stops_at_once_with_http_stop() {
    let r = row(vec![Step::status(501)]);
    assert_eq!((r.requests, r.reason()), (1, Reason::HttpStop));
}

#[test]
fn a_503_forever_ends_after_three_requests_with_attempts_exhausted() {
    let r = row(vec![Step::status(503)]);
    assert_eq!((r.requests, r.reason(), r.waits()), (3, Reason::AttemptsExhausted, vec![25, 50]));
    assert_eq!(r.finished.phase.name(), "try-later");
}

#[test]
fn a_503_with_max_attempts_1_is_sent_once_and_exhausts_the_attempts() {
    let mut o = table_options();
    o.limits.max_attempts = 1;
    let r = run_case(&o, "GET", vec![Step::status(503)], Cancel::Never, 0.5);
    assert_eq!((r.requests, r.reason()), (1, Reason::AttemptsExhausted));
}

#[test]
fn a_429_with_retry_after_1_then_200_waits_exactly_1000_ms() {
    let r = row(vec![Step::status(429).retry_after("1"), Step::status(200)]);
    assert_eq!((r.requests, r.reason(), r.waits()), (2, Reason::Succeeded, vec![1000]));
    assert_eq!(r.finished.report.attempts[0].retry_after_ms, Some(1000));
}

#[test]
fn with_the_spread_on_a_retry_after_of_1_waits_between_1000_and_1025_ms() {
    let mut o = table_options();
    o.backoff.retry_after_spread = true;
    for random in [0.0, 0.5, 0.999_999] {
        let steps = vec![Step::status(429).retry_after("1"), Step::status(200)];
        let r = run_case(&o, "GET", steps, Cancel::Never, random);
        let wait = r.waits()[0];
        assert!((1000..=1049).contains(&wait), "random {random}: {wait}");
        assert_eq!(r.reason(), Reason::Succeeded);
    }
    let r =
        run_case(&o, "GET", vec![Step::status(429).retry_after("1"), Step::status(200)], Cancel::Never, 0.5);
    assert_eq!(r.waits(), vec![1025]);
}

#[test]
fn a_retry_after_of_60_s_against_a_1_s_budget_stops_and_says_when_to_come_back() {
    let mut o = table_options();
    o.limits.total_ms = 1000;
    let r = run_case(&o, "GET", vec![Step::status(503).retry_after("60")], Cancel::Never, 0.5);
    assert_eq!((r.requests, r.reason()), (1, Reason::WaitExceedsBudget));
    assert_eq!(r.finished.report.retry_at, Some(EPOCH_MS + 60_000));
    assert_eq!(
        r.finished.phase,
        Phase::TryLater { retry_at: Some(EPOCH_MS + 60_000), reason: Reason::WaitExceedsBudget }
    );
}

#[test]
fn a_fractional_retry_after_stops_as_unsupported() {
    let r = row(vec![Step::status(503).retry_after("1.5")]);
    assert_eq!((r.requests, r.reason()), (1, Reason::UnsupportedRetryAfter));
}

fn no_timeout_retries() -> Options {
    let mut o = table_options();
    o.retry_on.timeouts = false;
    o.limits.attempt_ms = 50;
    o
}

#[test]
fn headers_after_250_ms_with_attempt_ms_50_time_out_at_50_ms() {
    let r = run_case(
        &no_timeout_retries(),
        "GET",
        vec![Step::status(200).headers_after(250)],
        Cancel::Never,
        0.5,
    );
    assert_eq!((r.requests, r.reason(), r.ended_at), (1, Reason::AttemptTimeout, 50));
    let err = r.finished.report.attempts[0].error.as_ref().unwrap();
    assert_eq!((err.stage, err.code.as_str()), (Stage::MaybeDelivered, "attempt-timeout"));
}

#[test]
fn a_body_that_ends_after_250_ms_with_attempt_ms_50_times_out_at_50_ms() {
    let r =
        run_case(&no_timeout_retries(), "GET", vec![Step::status(200).body_takes(250)], Cancel::Never, 0.5);
    assert_eq!((r.requests, r.reason(), r.ended_at), (1, Reason::AttemptTimeout, 50));
}

#[test]
fn the_same_slow_body_with_total_ms_50_ends_at_the_deadline() {
    let mut o = table_options();
    o.limits.total_ms = 50;
    o.limits.attempt_ms = 1000;
    let r = run_case(&o, "GET", vec![Step::status(200).body_takes(250)], Cancel::Never, 0.5);
    assert_eq!((r.requests, r.reason(), r.ended_at), (1, Reason::Deadline, 50));
}

#[test]
fn cancelled_before_the_call_sends_nothing() {
    let r = run_case(&table_options(), "GET", vec![Step::status(200)], Cancel::BeforeTheCall, 0.5);
    assert_eq!((r.requests, r.reason()), (0, Reason::Cancelled));
    assert_eq!(r.phases, vec![Phase::Cancelled]);
}

#[test]
fn cancelled_while_preparing_the_wait_sends_no_further_request() {
    let r = run_case(&table_options(), "GET", vec![Step::status(503)], Cancel::WhilePreparingTheWait, 0.5);
    assert_eq!((r.requests, r.reason(), r.ended_at), (1, Reason::Cancelled, 0));
    assert_eq!(r.finished.phase, Phase::Cancelled);
}

#[test]
fn cancelled_during_the_wait_sends_no_further_request() {
    let r = run_case(&table_options(), "GET", vec![Step::status(503)], Cancel::DuringTheWait, 0.5);
    assert_eq!((r.requests, r.reason(), r.ended_at), (1, Reason::Cancelled, 10));
    assert_eq!(r.phases.last(), Some(&Phase::Cancelled));
}

#[test]
fn states_go_requesting_waiting_requesting_then_end_once() {
    let r = row(vec![Step::status(503), Step::status(200)]);
    let names: Vec<&str> = r.phases.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["requesting", "waiting", "requesting", "succeeded"]);
    assert_eq!(
        r.phases[1],
        Phase::Waiting {
            attempt: 2,
            until_ms: EPOCH_MS + 25,
            wait_ms: 25,
            why: saferetry::policy::state::WaitWhy::Backoff
        }
    );
}

#[test]
fn a_post_is_retried_after_not_sent_but_never_after_maybe_delivered() {
    let o = table_options();
    let r = run_case(&o, "POST", vec![Step::fails(Stage::NotSent), Step::status(200)], Cancel::Never, 0.5);
    assert_eq!((r.requests, r.reason()), (2, Reason::Succeeded));
    let r =
        run_case(&o, "POST", vec![Step::fails(Stage::MaybeDelivered), Step::status(200)], Cancel::Never, 0.5);
    assert_eq!((r.requests, r.reason()), (1, Reason::MaybeDelivered));
    assert_eq!(r.finished.cause, Some("scripted network failure"));
    assert_eq!(r.finished.phase.name(), "failed");
    let r = run_case(&o, "POST", vec![Step::status(503)], Cancel::Never, 0.5);
    assert_eq!((r.requests, r.reason()), (1, Reason::HttpStop));
}

#[test]
fn a_cross_origin_503_without_retry_after_uses_the_throttling_base_and_says_so() {
    let mut o = table_options();
    o.limits.total_ms = 10_000;
    let r =
        run_case(&o, "GET", vec![Step::status(503).cross_origin(), Step::status(200)], Cancel::Never, 0.5);
    assert_eq!(r.waits(), vec![500]);
    assert!(r.finished.report.retry_after_hidden);
    let r = run_case(&o, "GET", vec![Step::status(503), Step::status(200)], Cancel::Never, 0.5);
    assert!(!r.finished.report.retry_after_hidden);
}

#[test]
fn an_invalid_random_stops_with_a_defined_reason() {
    let r = run_case(&table_options(), "GET", vec![Step::status(503)], Cancel::Never, f64::NAN);
    assert_eq!((r.requests, r.reason()), (1, Reason::InvalidRandom));
    let r = run_case(&table_options(), "GET", vec![Step::status(503)], Cancel::Never, 1.0);
    assert_eq!(r.reason(), Reason::InvalidRandom);
}

#[test]
fn an_http_date_retry_after_waits_until_that_date() {
    // EPOCH_MS is Mon, 30 Nov 2026 00:00:00 GMT.
    let r = row(vec![Step::status(503).retry_after("Mon, 30 Nov 2026 00:00:02 GMT"), Step::status(200)]);
    assert_eq!((r.requests, r.waits()), (2, vec![2000]));
}
