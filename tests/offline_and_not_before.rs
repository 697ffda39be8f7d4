//! Offline awareness and "not before" on virtual time: no attempt is spent
//! while the host is offline, and a fresh operation never starts before a
//! server's Retry-After carried over from the last one.

mod support;

use saferetry::engine::{run, Call, Finished};
use saferetry::policy::classify::Safety;
use saferetry::policy::options::Options;
use saferetry::policy::reason::Reason;
use saferetry::policy::state::{Phase, WaitWhy};
use support::sim::{Script, Shared, Sim, SimClock, Step, EPOCH_MS};

struct Ran {
    finished: Finished<u16, &'static str>,
    starts: Vec<u64>,
    phases: Vec<Phase>,
}

fn go(steps: Vec<Step>, offline_for: Option<u64>, not_before: Option<u64>) -> Ran {
    let sim = Sim::new();
    let mut options = Options::default();
    options.limits.total_ms = 10_000;
    let script = Script::new(&sim, steps);
    let shared = Shared::new(&options);
    let clock = SimClock::new(&sim);
    if let Some(ms) = offline_for {
        clock.offline_for(ms);
    }
    let mut phases = Vec::new();
    let call = Call { options: &options, safety: Safety::Idempotent, body_replayable: true, not_before };
    let finished = sim.run(run(call, &script, &clock, shared.budget(), &mut || 0.5, &mut |p| phases.push(p)));
    let starts = script.starts.borrow().clone();
    Ran { finished, starts, phases }
}

#[test]
fn while_offline_no_attempt_is_spent_and_coming_back_online_resumes() {
    let r = go(vec![Step::status(200)], Some(3_000), None);
    assert_eq!(r.finished.report.reason, Reason::Succeeded);
    assert_eq!(r.starts, [3_000], "the only request started when the host came back");
    assert!(matches!(r.phases[0], Phase::Waiting { attempt: 1, why: WaitWhy::Offline, .. }));
    assert_eq!(r.phases[1], Phase::Requesting { attempt: 1, max: 3 });
}

#[test]
fn offline_for_the_whole_budget_ends_in_try_later_with_reason_offline_and_nothing_sent() {
    let r = go(vec![Step::status(200)], Some(u64::MAX), None);
    assert_eq!(r.finished.report.reason, Reason::Offline);
    assert_eq!(r.finished.phase.name(), "try-later");
    assert!(r.starts.is_empty());
}

#[test]
fn a_fresh_operation_waits_for_a_carried_over_retry_after() {
    let r = go(vec![Step::status(200)], None, Some(EPOCH_MS + 4_000));
    assert_eq!(r.starts, [4_000]);
    assert!(matches!(r.phases[0], Phase::Waiting { why: WaitWhy::RetryAfter, wait_ms: 4_000, .. }));
}

#[test]
fn a_carried_over_retry_after_beyond_the_budget_sends_nothing_and_says_when() {
    let r = go(vec![Step::status(200)], None, Some(EPOCH_MS + 60_000));
    assert_eq!(r.finished.report.reason, Reason::WaitExceedsBudget);
    assert_eq!(r.finished.report.retry_at, Some(EPOCH_MS + 60_000));
    assert!(r.starts.is_empty());
}

#[test]
fn the_report_remembers_the_latest_retry_after_as_not_before() {
    let r = go(vec![Step::status(503).retry_after("60")], None, None);
    assert_eq!(r.finished.report.reason, Reason::WaitExceedsBudget);
    assert_eq!(r.finished.report.not_before, Some(EPOCH_MS + 60_000));
    let plain = go(vec![Step::status(503)], None, None);
    assert_eq!(plain.finished.report.not_before, None, "our own backoff is no server demand");
}
