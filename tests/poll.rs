//! Submit-then-poll on virtual time: the phased schedule, gateway failures
//! while polling, a fatal verdict, and a submit that is never repeated.
//! The poll's machine (`policy::poll::Poll`) is performed here as
//! js/src/poll.js performs it: the submit and each status query are
//! `engine::run` operations on the policy's budgets (`engine::poll::Role`),
//! the waits the simulation's timers, the verdict the test's hook.

mod support;

use std::cell::{Cell, RefCell};
use std::future::Future;

use saferetry::engine::poll::Role;
use saferetry::engine::{race, run, Answer, Call, Clock, Either, Failed, Finished, Slept, Transport};
use saferetry::policy::classify::Safety;
use saferetry::policy::options::Options;
use saferetry::policy::poll::{Next, Poll, PollSchedule, PollVerdict, Queried};
use saferetry::policy::rate_limit::FloorHeaders;
use saferetry::policy::reason::Reason;
use saferetry::policy::state::Phase;
use support::sim::{Script, Shared, Sim, SimClock, Step};

/// A task that finishes `done_at` ms after the first poll's schedule
/// began; selected polls are answered by a failing gateway instead.
struct Task {
    sim: std::rc::Rc<Sim>,
    begin: Cell<u64>,
    done_at: u64,
    gateway_fails: Vec<usize>,
    /// Polls answered 503 with Retry-After: 5.
    busy: Vec<usize>,
    rejected: bool,
    polls: RefCell<Vec<u64>>,
}

impl Transport for Task {
    type Body = u16;
    type Error = &'static str;

    fn send(&self, _: u32) -> impl Future<Output = Result<Answer<u16>, Failed<&'static str>>> {
        let elapsed = self.sim.now() - self.begin.get();
        let n = self.polls.borrow().len();
        self.polls.borrow_mut().push(elapsed);
        let busy = self.busy.contains(&n);
        let status = match () {
            _ if busy => 503,
            _ if self.gateway_fails.contains(&n) => 502,
            _ if self.rejected && elapsed >= self.done_at => 409,
            _ if elapsed >= self.done_at => 200,
            _ => 202,
        };
        std::future::ready(Ok(Answer {
            status,
            floor_headers: FloorHeaders {
                retry_after: busy.then(|| String::from("5")),
                ..FloorHeaders::default()
            },
            cross_origin: false,
            body: status,
        }))
    }

    fn snippet(&self, _: &u16) -> Option<String> {
        None
    }
}

/// The caller's verdict on one poll's response (its `verdict` hook).
trait Judge {
    fn judge(&self, answer: &Answer<u16>) -> impl Future<Output = PollVerdict>;
}

/// The caller's hook: 200 done, 202 pending, 409 the task was rejected.
struct Hook(Cell<u32>);

impl Judge for Hook {
    fn judge(&self, answer: &Answer<u16>) -> impl Future<Output = PollVerdict> {
        self.0.set(self.0.get() + 1);
        std::future::ready(match answer.status {
            200 => PollVerdict::Done,
            202 => PollVerdict::Pending,
            _ => PollVerdict::Fatal,
        })
    }
}

type Done = Finished<u16, &'static str>;

/// Performs `poll` after the submit `submitted`, as js/src/poll.js does:
/// each query one `run` under `Role::Query`'s options and budget, its
/// attempts added to the submit's report; the end's outcome composed the
/// same way (the last query's response when the end says so).
async fn perform(
    mut poll: Poll,
    submitted: Done,
    options: &Options,
    task: &Task,
    judge: &impl Judge,
    clock: &SimClock,
    shared: &Shared,
) -> Done {
    let now = || clock.now_ms();
    let last_status = submitted.report.attempts.last().and_then(|a| a.status);
    let succeeded = submitted.phase == Phase::Succeeded;
    let (elapsed, not_before) = (submitted.report.elapsed_ms, submitted.report.not_before);
    let mut next = poll.submitted(succeeded, elapsed, not_before, last_status, now());
    let mut report = submitted.report.clone();
    let mut last: Option<Done> = None;
    loop {
        next = match next {
            Next::SubmitEnds => return submitted,
            Next::Sleep { ms } => match clock.sleep(ms).await {
                Slept::Elapsed => poll.timer(now()),
                Slept::Cancelled => poll.cancel(now()),
            },
            Next::Query { poll: n, left_ms, offset_ms } => {
                let role = Role::Query { poll: n, left_ms };
                let one = role.options(options).expect("a query's options");
                let call = Call {
                    options: &one,
                    safety: Safety::Idempotent,
                    body_replayable: true,
                    not_before: None,
                };
                let done =
                    run(call, task, clock, role.budget(shared.budget()), &mut || 0.5, &mut |_| {}).await;
                for mut record in done.report.attempts.iter().cloned() {
                    record.start_ms += offset_ms;
                    record.poll = true;
                    report.attempts.push(record);
                }
                let q = Queried {
                    status: done.response.as_ref().map(|a| a.status),
                    cancelled: done.phase == Phase::Cancelled,
                    not_before: done.report.not_before,
                    record: done.report.attempts.last().map(|a| a.status),
                };
                last = Some(done);
                poll.queried(q, now())
            }
            Next::Judge { ms } => {
                let answer = last.as_ref().and_then(|d| d.response.as_ref()).expect("a response to judge");
                match race(judge.judge(answer), clock.sleep(ms)).await {
                    Either::Left(verdict) => poll.judged(Some(verdict), now()),
                    Either::Right(Slept::Elapsed) => poll.timer(now()),
                    Either::Right(Slept::Cancelled) => poll.cancel(now()),
                }
            }
            Next::End(end) => {
                report.reason = end.reason;
                report.retry_at = end.retry_at;
                report.elapsed_ms = end.elapsed_ms;
                report.not_before = end.not_before;
                let response = last.filter(|_| end.response).and_then(|d| d.response);
                return Finished { phase: end.phase, report, response, cause: None };
            }
            other => panic!("nothing here performs {other:?}"),
        };
    }
}

struct Polled {
    finished: Done,
    submits: usize,
    polls: Vec<u64>,
    hook_calls: u32,
}

fn submit_then_poll(submit: Vec<Step>, done_at: u64, gateway_fails: Vec<usize>, rejected: bool) -> Polled {
    let hook = Hook(Cell::new(0));
    let polled = polled_with(submit, done_at, gateway_fails, vec![], rejected, &hook, None);
    Polled { hook_calls: hook.0.get(), ..polled }
}

fn polled_with(
    submit: Vec<Step>,
    done_at: u64,
    gateway_fails: Vec<usize>,
    busy: Vec<usize>,
    rejected: bool,
    hook: &impl Judge,
    cancel_after: Option<u64>,
) -> Polled {
    let sim = Sim::new();
    let options = Options::default();
    let shared = Shared::new(&options);
    let submit_server = Script::new(&sim, submit);
    let task = Task {
        sim: sim.clone(),
        begin: Cell::new(0),
        done_at,
        gateway_fails,
        busy,
        rejected,
        polls: RefCell::new(Vec::new()),
    };
    let clock = SimClock::new(&sim);
    if let Some(ms) = cancel_after {
        clock.cancel_after(ms);
    }
    let poll = Poll::new(PollSchedule::default(), false, true);
    let finished = sim.run(async {
        let call = Call {
            options: &options,
            safety: Safety::of("POST", false),
            body_replayable: true,
            not_before: None,
        };
        let submitted = run(call, &submit_server, &clock, shared.budget(), &mut || 0.5, &mut |_| {}).await;
        task.begin.set(sim.now());
        perform(poll, submitted, &options, &task, hook, &clock, &shared).await
    });
    Polled { finished, submits: submit_server.requests(), polls: task.polls.take(), hook_calls: 0 }
}

#[test]
fn a_task_that_takes_45_s_is_fetched_with_30_then_8_polls() {
    let p = submit_then_poll(vec![Step::status(202)], 45_000, vec![], false);
    assert_eq!(p.finished.report.reason, Reason::Succeeded);
    assert_eq!(p.submits, 1);
    let first_phase = p.polls.iter().filter(|&&t| t <= 30_000).count();
    let second_phase = p.polls.iter().filter(|&&t| t > 30_000).count();
    assert_eq!((first_phase, second_phase), (30, 8), "polls at {:?}", p.polls);
    assert_eq!(*p.polls.last().unwrap(), 46_000);
    let report = &p.finished.report;
    assert_eq!(report.attempts.len(), 1 + 38, "one report covers the submit and every poll");
    assert!(!report.attempts[0].poll && report.attempts[1..].iter().all(|a| a.poll));
    assert_eq!(report.attempts[1].start_ms, 1000);
}

#[test]
fn gateway_502s_while_polling_do_not_stop_it() {
    let p = submit_then_poll(vec![Step::status(202)], 5_000, vec![1, 2, 3, 4], false);
    assert_eq!(p.finished.report.reason, Reason::Succeeded);
    assert_eq!(p.polls, [1000, 2000, 3000, 4000, 5000, 6000]);
    assert_eq!(p.hook_calls, 2, "gateway failures never reach the hook");
    let statuses: Vec<Option<u16>> = p.finished.report.attempts.iter().map(|a| a.status).collect();
    assert_eq!(statuses[1..], [Some(202), Some(502), Some(502), Some(502), Some(502), Some(200)]);
}

#[test]
fn a_business_rejection_stops_polling_as_fatal() {
    let p = submit_then_poll(vec![Step::status(202)], 3_000, vec![], true);
    assert_eq!(p.finished.report.reason, Reason::TaskFailed);
    assert_eq!(p.finished.phase.name(), "failed");
    assert_eq!(p.finished.response.as_ref().map(|a| a.status), Some(409));
    assert_eq!(p.polls, [1000, 2000, 3000]);
}

#[test]
fn a_failed_submit_is_never_repeated_and_never_polled() {
    let p = submit_then_poll(vec![Step::status(503), Step::status(202)], 0, vec![], false);
    assert_eq!(p.finished.report.reason, Reason::HttpStop);
    assert_eq!((p.submits, p.polls.len()), (1, 0));
}

#[test]
fn polling_stops_at_its_budget() {
    let p = submit_then_poll(vec![Step::status(202)], u64::MAX, vec![], false);
    assert_eq!(p.finished.report.reason, Reason::Deadline);
    assert_eq!(p.finished.phase.name(), "try-later");
    assert_eq!(*p.polls.last().unwrap(), 298_000);
}

/// A verdict hook that never answers.
struct Silent;

impl Judge for Silent {
    fn judge(&self, _: &Answer<u16>) -> impl Future<Output = PollVerdict> {
        std::future::pending()
    }
}

#[test]
fn a_poll_answered_with_retry_after_is_not_repeated_before_it() {
    let hook = Hook(Cell::new(0));
    let p = polled_with(vec![Step::status(202)], 9_000, vec![], vec![1], false, &hook, None);
    assert_eq!(p.finished.report.reason, Reason::Succeeded);
    assert_eq!(&p.polls[..3], &[1000, 2000, 7000], "the 503 at 2 s asked for 5 s");
}

#[test]
fn a_verdict_that_never_comes_ends_at_the_polling_budget_or_on_cancel() {
    let p = polled_with(vec![Step::status(202)], 0, vec![], vec![], false, &Silent, None);
    assert_eq!(p.finished.report.reason, Reason::Deadline);
    assert_eq!(p.polls.len(), 1);
    let c = polled_with(vec![Step::status(202)], 0, vec![], vec![], false, &Silent, Some(1500));
    assert_eq!(c.finished.report.reason, Reason::Cancelled);
}
