//! Adaptive throttling through the engine, on virtual time: a policy's
//! calls against an upstream that goes down and comes back. A rejected
//! call sends nothing and ends `try-later` with reason `throttled` and a
//! `retryAt`; probes still go out, so recovery is seen; a call that opts
//! out, and a policy with `throttle: false`, always send; a `retryAt`
//! never comes before a server's `Retry-After`.

mod support;

use std::cell::RefCell;
use std::future::Future;
use std::ops::Range;
use std::rc::Rc;

use saferetry::engine::{run, Answer, Call, Failed, Finished, Transport};
use saferetry::policy::classify::Safety;
use saferetry::policy::options::Options;
use saferetry::policy::rate_limit::FloorHeaders;
use saferetry::policy::reason::Reason;
use saferetry::policy::state::Phase;
use support::sim::{Draws, Shared, Sim, SimClock, EPOCH_MS};

/// An upstream that answers 503 (with `retry_after`, if set) while
/// `down` (ms since the start), 200 otherwise, after `answer_ms`; it
/// records when each request reached it.
struct Upstream {
    sim: Rc<Sim>,
    down: Range<u64>,
    retry_after: Option<&'static str>,
    answer_ms: u64,
    starts: RefCell<Vec<u64>>,
}

impl Upstream {
    fn new(sim: &Rc<Sim>, down: Range<u64>) -> Upstream {
        Upstream {
            sim: sim.clone(),
            down,
            retry_after: None,
            answer_ms: 20,
            starts: RefCell::new(Vec::new()),
        }
    }

    /// Requests that reached it in `during` (ms since the start).
    fn received(&self, during: Range<u64>) -> usize {
        self.starts.borrow().iter().filter(|t| during.contains(t)).count()
    }
}

impl Transport for Upstream {
    type Body = u16;
    type Error = &'static str;

    fn send(&self, _attempt: u32) -> impl Future<Output = Result<Answer<u16>, Failed<&'static str>>> {
        let at = self.sim.elapsed();
        self.starts.borrow_mut().push(at);
        let down = self.down.contains(&at);
        let status = if down { 503 } else { 200 };
        let retry_after = self.retry_after.filter(|_| down).map(String::from);
        let delay = self.sim.delay(self.answer_ms);
        async move {
            delay.await;
            let floor_headers = FloorHeaders { retry_after, ..FloorHeaders::default() };
            Ok(Answer { status, floor_headers, cross_origin: false, body: status })
        }
    }

    fn snippet(&self, _body: &u16) -> Option<String> {
        None
    }
}

/// A call every `gap_ms` for `seconds`, each under `options` (or
/// `opted_out` for every `nth` call, when given), on one policy's budgets:
/// each call's start (ms since the start) and how it finished.
struct Calls<'a> {
    options: &'a Options,
    gap_ms: u64,
    seconds: u64,
    opted_out: Option<(&'a Options, usize)>,
    /// The policy's state is built from these (its `throttle` option).
    policy: &'a Options,
}

type Ended = (u64, Finished<u16, &'static str>);

impl Calls<'_> {
    fn run(&self, upstream: &Upstream, sim: &Rc<Sim>) -> Vec<Ended> {
        self.run_on(&Shared::new(self.policy), upstream, sim)
    }

    /// The same, on a policy's budgets and counters made by the caller.
    fn run_on(&self, shared: &Shared, upstream: &Upstream, sim: &Rc<Sim>) -> Vec<Ended> {
        let n = (self.seconds * 1000 / self.gap_ms) as usize;
        let clocks: Vec<SimClock> = (0..n).map(|_| SimClock::new(sim)).collect();
        let draws = RefCell::new(Draws(0x2545_f491_4f6c_dd1d));
        let tasks: Vec<_> = clocks
            .iter()
            .enumerate()
            .map(|(i, clock)| {
                let options = match self.opted_out {
                    Some((o, nth)) if i % nth == 0 => o,
                    _ => self.options,
                };
                let call =
                    Call { options, safety: Safety::Idempotent, body_replayable: true, not_before: None };
                let (shared, draws, sim, at) = (shared, &draws, sim.clone(), i as u64 * self.gap_ms);
                async move {
                    sim.delay(at).await;
                    let mut random = || draws.borrow_mut().next();
                    let done = run(call, upstream, clock, shared.budget(), &mut random, &mut |_| {}).await;
                    (at, done)
                }
            })
            .collect();
        sim.run_all(tasks, 24 * 3_600_000)
    }
}

/// One attempt per call: the throttle's own effect, not the retries'.
fn one_attempt() -> Options {
    let mut o = Options::default();
    o.limits.max_attempts = 1;
    o
}

fn throttled(ended: &[Ended], during: Range<u64>) -> Vec<&Finished<u16, &'static str>> {
    ended
        .iter()
        .filter(|(at, f)| during.contains(at) && f.report.reason == Reason::Throttled)
        .map(|(_, f)| f)
        .collect()
}

fn in_range(ended: &[Ended], during: Range<u64>) -> usize {
    ended.iter().filter(|(at, _)| during.contains(at)).count()
}

/// A call every 50 ms for 40 s, one attempt each, against an upstream
/// down from 5 s to 25 s: what it received, how each call ended, and the
/// policy's counters.
fn through_an_outage() -> (Upstream, Vec<Ended>, Shared) {
    let sim = Sim::new();
    let upstream = Upstream::new(&sim, 5_000..25_000);
    let o = one_attempt();
    let shared = Shared::new(&o);
    let ended = Calls { options: &o, gap_ms: 50, seconds: 40, opted_out: None, policy: &o }
        .run_on(&shared, &upstream, &sim);
    (upstream, ended, shared)
}

#[test]
fn in_an_outage_most_first_attempts_end_throttled_without_a_request_and_probes_still_go_out() {
    let (upstream, ended, _) = through_an_outage();
    // The outage, after the first window has filled with failures.
    let outage = 7_000..25_000;
    let (offered, received) = (in_range(&ended, outage.clone()), upstream.received(outage.clone()));
    let rejected = throttled(&ended, outage.clone());
    println!("outage: {received} of {offered} calls reached the upstream, {} throttled", rejected.len());
    assert_eq!(rejected.len() + received, offered, "every call either went out or ended throttled");
    assert!(received * 100 <= offered * 15, "{received} of {offered} calls reached a down upstream");
    // About one in (requests in the window + 1): at 20 calls a second, one every second or two.
    assert!(received >= 9, "probes still go out, one every 2 s at least: {received}");
    for f in &rejected {
        assert!(f.report.attempts.is_empty(), "a throttled call sends nothing");
        let retry_at = f.report.retry_at.expect("a throttled call says when to try again");
        assert!(matches!(f.phase, Phase::TryLater { reason: Reason::Throttled, retry_at: Some(_) }));
        assert!(retry_at >= EPOCH_MS + 7_000 && f.report.elapsed_ms == 0, "ends at once");
    }
    // Nothing is throttled while the upstream is up.
    assert!(throttled(&ended, 0..5_000).is_empty());
}

#[test]
fn stats_count_every_call_that_ended_throttled_and_no_other() {
    let (upstream, ended, shared) = through_an_outage();
    let rejected = throttled(&ended, 0..40_000).len();
    assert!(rejected > 300, "throttled in the outage: {rejected}");
    let s = &shared.stats;
    assert_eq!(s.throttled.get(), rejected as u64, "stats().throttled: the calls that sent nothing");
    assert_eq!(s.operations.get(), ended.len() as u64);
    let sent = ended.iter().filter(|(_, f)| !f.report.attempts.is_empty()).count();
    assert_eq!(s.throttled.get() + sent as u64, s.operations.get(), "every other call sent a request");
    assert_eq!(upstream.received(0..40_000), sent, "the requests saved are the throttled calls");
}

#[test]
fn after_the_upstream_recovers_calls_go_out_again_within_a_few_seconds() {
    let (upstream, ended, _) = through_an_outage();
    assert!(throttled(&ended, 7_000..25_000).len() > 300, "throttled in the outage");
    let back = (25_000..40_000).step_by(1000).find(|&s| {
        let second = s..s + 1000;
        upstream.received(second.clone()) * 100 >= in_range(&ended, second) * 95
    });
    println!("back to 95 % of the load {:?} ms after the upstream recovered", back.map(|s| s - 25_000));
    assert!(back.is_some_and(|s| s <= 35_000), "{back:?}");
    let last = 35_000..40_000;
    assert_eq!(upstream.received(last.clone()), in_range(&ended, last), "all calls go out once recovered");
}

#[test]
fn a_call_that_opts_out_is_sent_even_when_the_others_are_throttled() {
    let sim = Sim::new();
    let upstream = Upstream::new(&sim, 0..60_000);
    let o = one_attempt();
    let out = Options { throttle: None, ..one_attempt() };
    let calls = Calls { options: &o, gap_ms: 50, seconds: 10, opted_out: Some((&out, 4)), policy: &o };
    let ended = calls.run(&upstream, &sim);
    let (mine, others): (Vec<_>, Vec<_>) = ended.iter().enumerate().partition(|(i, _)| i % 4 == 0);
    assert!(mine
        .iter()
        .all(|(_, (_, f))| f.report.reason != Reason::Throttled && f.report.attempts.len() == 1));
    let others_throttled = others.iter().filter(|(_, (_, f))| f.report.reason == Reason::Throttled).count();
    assert!(others_throttled * 2 > others.len(), "the others are mostly throttled: {others_throttled}");
}

#[test]
fn a_policy_with_throttle_false_never_throttles() {
    let sim = Sim::new();
    let upstream = Upstream::new(&sim, 0..60_000);
    let off = Options { throttle: None, ..one_attempt() };
    let ended =
        Calls { options: &off, gap_ms: 50, seconds: 10, opted_out: None, policy: &off }.run(&upstream, &sim);
    assert!(ended.iter().all(|(_, f)| f.report.reason == Reason::AttemptsExhausted));
    assert_eq!(upstream.received(0..10_000), ended.len());
}

#[test]
fn a_throttled_calls_retry_at_never_comes_before_a_servers_retry_after() {
    let sim = Sim::new();
    let mut upstream = Upstream::new(&sim, 0..60_000);
    upstream.retry_after = Some("30");
    let o = one_attempt();
    let ended =
        Calls { options: &o, gap_ms: 50, seconds: 10, opted_out: None, policy: &o }.run(&upstream, &sim);
    let starts = upstream.starts.borrow();
    let rejected = throttled(&ended, 0..10_000);
    assert!(rejected.len() > ended.len() / 2, "{} of {}", rejected.len(), ended.len());
    for (at, f) in ended.iter().filter(|(_, f)| f.report.reason == Reason::Throttled) {
        // The latest Retry-After answered before this call: its request
        // started at `s` and was answered 20 ms later.
        let floor = starts.iter().filter(|&&s| s + 20 <= *at).map(|s| EPOCH_MS + s + 20 + 30_000).max();
        assert!(
            f.report.retry_at >= floor,
            "throttled at {at}: retryAt {:?} before {floor:?}",
            f.report.retry_at
        );
    }
}

#[test]
fn while_the_upstream_accepts_the_random_source_is_never_drawn_for_a_first_attempt() {
    let sim = Sim::new();
    let upstream = Upstream::new(&sim, 60_000..60_001);
    let o = one_attempt();
    let shared = Shared::new(&o);
    let clock = SimClock::new(&sim);
    let call = Call { options: &o, safety: Safety::Idempotent, body_replayable: true, not_before: None };
    for _ in 0..50 {
        let mut draws = 0;
        let done = sim.run(run(
            call,
            &upstream,
            &clock,
            shared.budget(),
            &mut || {
                draws += 1;
                0.5
            },
            &mut |_| {},
        ));
        assert_eq!((done.report.reason, draws), (Reason::Succeeded, 0));
    }
}
