//! The engine's loop as a resumable machine: a transport and a clock that
//! are mailboxes, and a future polled once per event.
//!
//! Why this works without rewriting the loop: `engine::run` only ever
//! waits on `Transport::send` and `Clock::sleep` (raced for an attempt's
//! timer), plus the concurrency gate and the `online` wait, which this
//! spike leaves out. Each of our futures says, while pending, what it waits
//! for ([`Io`]); after an event the machine polls the loop until it is
//! pending again and reads the next [`Action`] off the mailboxes. Nothing
//! here decides: the loop and `policy` do, exactly as in the shipped shape.

use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::engine::{self, Answer, Budget, Call, Clock, Failed, Finished, Slept, Transport};
use crate::policy::body::ResponseBody;
use crate::policy::budget::{InMemory, Stats};
use crate::policy::classify::{normalize_method, Failure, Safety, Stage};
use crate::policy::limits::timer_ms;
use crate::policy::options::Options;
use crate::policy::rate_limit::{throttling, FloorHeaders};
use crate::policy::runtime::{fetch_failure, ErrorShape, Runtime, Sent};

/// What the executor does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Send the request under a timer of `timeout_ms`; read its body inside
    /// the attempt (rule 13's `buffer`), or hand it over as it streams.
    Fetch { timeout_ms: u64, read_body: bool },
    /// Report the throttling response's rate-limit headers.
    RateLimitHeaders,
    /// Wait `ms`, then report the timer.
    Sleep { ms: u64 },
    /// Finished with the last response: hand it to the caller.
    Done,
    /// Finished without a response.
    Fail,
    /// Waiting on nothing the executor can perform (unreachable while the
    /// gate and the offline wait are left out).
    Idle,
}

/// One policy: its options and the budgets its calls share.
pub struct Policy {
    pub options: Options,
    pub runtime: Runtime,
    state: InMemory,
    stats: Stats,
}

impl Policy {
    pub fn new(options: Options, runtime: Runtime) -> Policy {
        let state = InMemory::new(options.quota, options.rate);
        Policy { options, runtime, state, stats: Stats::default() }
    }
}

type Outcome = Result<Answer<()>, Failed<()>>;

/// What the loop waits for, and what the executor reported.
#[derive(Default)]
struct Io {
    now: Cell<u64>,
    random: Cell<f64>,
    cancelled: Cell<bool>,
    /// An attempt is waiting for its outcome.
    fetching: Cell<bool>,
    outcome: Cell<Option<Outcome>>,
    /// A sleep is waiting for its timer (ms).
    sleeping: Cell<Option<u64>>,
    fired: Cell<bool>,
}

/// The transport and the clock the loop runs against.
struct Mailbox(Rc<Io>);

/// A pending attempt: registered on its first poll, withdrawn on drop (the
/// loop drops it when its timer or the cancel wins the race).
struct Sending(Rc<Io>);

impl Future for Sending {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Outcome> {
        self.0.outcome.take().map_or(Poll::Pending, Poll::Ready)
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.0.fetching.set(false);
        self.0.outcome.set(None);
    }
}

impl Transport for Mailbox {
    type Body = ();
    type Error = ();

    async fn send(&self, _attempt: u32) -> Outcome {
        self.0.fetching.set(true);
        self.0.outcome.set(None);
        Sending(self.0.clone()).await
    }

    /// Not in the spike: the body stays in JS (see BENCHMARKS.md).
    fn snippet(&self, _body: &()) -> Option<String> {
        None
    }
}

struct Sleeping {
    io: Rc<Io>,
    ms: u64,
    armed: bool,
}

impl Future for Sleeping {
    type Output = Slept;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Slept> {
        if self.io.cancelled.get() {
            return Poll::Ready(Slept::Cancelled);
        }
        if self.ms == 0 {
            return Poll::Ready(Slept::Elapsed);
        }
        if !self.armed {
            self.armed = true;
            self.io.sleeping.set(Some(timer_ms(self.ms)));
            self.io.fired.set(false);
            return Poll::Pending;
        }
        if self.io.fired.get() {
            return Poll::Ready(Slept::Elapsed);
        }
        Poll::Pending
    }
}

impl Drop for Sleeping {
    fn drop(&mut self) {
        if self.armed {
            self.io.sleeping.set(None);
            self.io.fired.set(false);
        }
    }
}

impl Clock for Mailbox {
    fn now_ms(&self) -> u64 {
        self.0.now.get()
    }

    fn sleep(&self, ms: u64) -> impl Future<Output = Slept> {
        Sleeping { io: self.0.clone(), ms, armed: false }
    }

    fn cancelled(&self) -> bool {
        self.0.cancelled.get()
    }

    /// Not in the spike: the offline wait needs the host's `online` event.
    fn online(&self) -> bool {
        true
    }

    fn until_online(&self, ms: u64) -> impl Future<Output = Slept> {
        self.sleep(ms)
    }
}

/// The request, as far as the rules need it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    pub has_key: bool,
    pub body_replayable: bool,
    /// The caller's signal had aborted before the call.
    pub aborted: bool,
}

/// A rejected `fetch` or body read, as the executor saw it.
#[derive(Debug, Clone, Copy)]
pub struct Rejected<'a> {
    pub shape: ErrorShape<'a>,
    /// The body read failed (the response had started: delivered).
    pub during_body: bool,
    pub sent: Sent<'a>,
}

type Run = Pin<Box<dyn Future<Output = Finished<(), ()>>>>;

/// One logical operation.
pub struct Machine {
    policy: Rc<Policy>,
    io: Rc<Io>,
    run: Option<Run>,
    finished: Option<Finished<(), ()>>,
    /// A throttling response waiting for its rate-limit headers.
    held: Option<Answer<()>>,
}

impl Machine {
    pub fn new(policy: Rc<Policy>) -> Machine {
        Machine { policy, io: Rc::default(), run: None, finished: None, held: None }
    }

    /// Starts the operation (once; later calls answer the current action).
    pub fn start(&mut self, now: u64, random: f64, request: Request) -> Action {
        if self.run.is_some() || self.finished.is_some() {
            return self.step();
        }
        self.io.now.set(now);
        self.io.random.set(random);
        self.io.cancelled.set(request.aborted);
        let (policy, io) = (self.policy.clone(), self.io.clone());
        let safety = Safety::of(normalize_method(request.method), request.has_key);
        let body_replayable = request.body_replayable;
        self.run = Some(Box::pin(async move {
            let p = &*policy;
            let call = Call { options: &p.options, safety, body_replayable, not_before: None };
            let budget = Budget { shared: &p.state, gate: None, stats: &p.stats, quota: true, counted: true };
            let mailbox = Mailbox(io);
            let mut random = || mailbox.0.random.get();
            engine::run(call, &mailbox, &mailbox, budget, &mut random, &mut |_| {}).await
        }));
        self.step()
    }

    /// The response's status and headers arrived (and its body was read,
    /// if the fetch action said so).
    pub fn on_response(
        &mut self,
        now: u64,
        random: f64,
        status: u16,
        floor_headers: FloorHeaders,
        cross_origin: bool,
    ) -> Action {
        let answer = Answer { status, floor_headers, cross_origin, body: () };
        self.io.now.set(now);
        self.io.random.set(random);
        if throttling(status) && self.io.fetching.get() {
            self.held = Some(answer);
            return Action::RateLimitHeaders;
        }
        self.deliver(Ok(answer))
    }

    /// The rate-limit headers of the throttling response just reported.
    pub fn on_rate_limit_headers(
        &mut self,
        ratelimit: Option<String>,
        remaining: Option<String>,
        reset: Option<String>,
        reset_after: Option<String>,
    ) -> Action {
        let Some(mut answer) = self.held.take() else {
            return self.step();
        };
        let h = &mut answer.floor_headers;
        (h.ratelimit, h.remaining, h.reset, h.reset_after) = (ratelimit, remaining, reset, reset_after);
        self.deliver(Ok(answer))
    }

    /// `fetch` or the body read rejected.
    pub fn on_error(&mut self, now: u64, random: f64, rejected: &Rejected) -> Action {
        self.io.now.set(now);
        self.io.random.set(random);
        let failure = if rejected.during_body {
            Failure::Network(Stage::MaybeDelivered)
        } else {
            fetch_failure(self.policy.runtime, &rejected.shape, rejected.sent)
        };
        let code = String::from(rejected.shape.best_code());
        self.deliver(Err(Failed { failure, code, name: String::from(rejected.shape.name), error: None }))
    }

    /// The timer of the current `Fetch` or `Sleep` fired.
    pub fn on_timer(&mut self, now: u64, random: f64) -> Action {
        self.io.now.set(now);
        self.io.random.set(random);
        if self.io.sleeping.get().is_some() {
            self.io.fired.set(true);
        }
        self.step()
    }

    /// The caller's signal aborted.
    pub fn on_abort(&mut self, now: u64) -> Action {
        self.io.now.set(now);
        self.io.cancelled.set(true);
        self.held = None;
        self.step()
    }

    /// How the operation ended, once it has.
    pub fn finished(&self) -> Option<&Finished<(), ()>> {
        self.finished.as_ref()
    }

    fn deliver(&mut self, outcome: Outcome) -> Action {
        if self.io.fetching.get() {
            self.io.outcome.set(Some(outcome));
        }
        self.step()
    }

    /// Runs the loop until it waits again; answers what it waits for.
    fn step(&mut self) -> Action {
        if let Some(run) = &mut self.run {
            if let Poll::Ready(mut finished) = run.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                let streamed = self.policy.options.response_body == ResponseBody::Stream;
                finished.report.streamed = finished.response.as_ref().map(|_| streamed);
                self.run = None;
                self.finished = Some(finished);
            }
        }
        let io = &self.io;
        match &self.finished {
            Some(f) if f.response.is_some() => Action::Done,
            Some(_) => Action::Fail,
            None if self.held.is_some() => Action::RateLimitHeaders,
            None if io.fetching.get() => Action::Fetch {
                timeout_ms: io.sleeping.get().unwrap_or(timer_ms(u64::MAX)),
                // `auto` (which needs the headers first) is not in the spike: it buffers.
                read_body: self.policy.options.response_body != ResponseBody::Stream,
            },
            None => io.sleeping.get().map_or(Action::Idle, |ms| Action::Sleep { ms }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::reason::Reason;

    fn policy(edit: impl FnOnce(&mut Options)) -> Rc<Policy> {
        let mut options = Options::default();
        edit(&mut options);
        Rc::new(Policy::new(options, Runtime::Node))
    }

    const GET: Request = Request { method: "get", has_key: false, body_replayable: true, aborted: false };
    const POST: Request = Request { method: "POST", ..GET };

    fn reason(m: &Machine) -> Option<Reason> {
        m.finished().map(|f| f.report.reason)
    }

    fn ok(retry_after: Option<&str>) -> FloorHeaders {
        FloorHeaders { retry_after: retry_after.map(String::from), ..FloorHeaders::default() }
    }

    fn socket_error() -> Rejected<'static> {
        let shape = ErrorShape {
            name: "TypeError",
            message: Some("fetch failed"),
            has_cause: true,
            cause_code: Some("UND_ERR_SOCKET"),
            ..ErrorShape::default()
        };
        Rejected { shape, during_body: false, sent: Sent { url: "", body_streamed: false, doomed: false } }
    }

    #[test]
    fn a_success_is_one_fetch_under_the_attempt_timer_then_done() {
        let mut m = Machine::new(policy(|o| o.limits.attempt_ms = 700));
        assert_eq!(
            Machine::new(policy(|o| o.response_body = ResponseBody::Stream)).start(0, 0.0, GET),
            Action::Fetch { timeout_ms: 10_000, read_body: false }
        );
        assert_eq!(m.start(1000, 0.5, GET), Action::Fetch { timeout_ms: 700, read_body: true });
        assert_eq!(m.on_response(1010, 0.5, 200, ok(None), false), Action::Done);
        assert_eq!(reason(&m), Some(Reason::Succeeded));
        assert_eq!(m.finished().map(|f| f.report.attempts.len()), Some(1));
        assert_eq!(m.on_timer(1020, 0.5), Action::Done, "a late event changes nothing");
    }

    #[test]
    fn a_503_with_retry_after_sleeps_at_least_the_server_s_time_then_fetches_again() {
        let mut m = Machine::new(policy(|o| o.backoff.retry_after_spread = false));
        m.start(0, 0.0, GET);
        assert_eq!(m.on_response(10, 0.0, 503, ok(Some("2")), false), Action::RateLimitHeaders);
        assert_eq!(m.on_rate_limit_headers(None, None, None, None), Action::Sleep { ms: 2000 });
        assert!(matches!(m.on_timer(2010, 0.0), Action::Fetch { .. }));
        assert_eq!(m.on_response(2020, 0.0, 200, ok(None), false), Action::Done);
        let attempts = m.finished().map(|f| f.report.attempts.clone()).unwrap_or_default();
        assert_eq!(attempts[0].retry_after_ms, Some(2000));
    }

    #[test]
    fn a_post_is_not_repeated_after_a_maybe_delivered_failure_but_a_get_is() {
        let mut m = Machine::new(policy(|_| {}));
        m.start(0, 0.0, POST);
        assert_eq!(m.on_error(5, 0.0, &socket_error()), Action::Fail);
        assert_eq!(reason(&m), Some(Reason::MaybeDelivered));
        let mut m = Machine::new(policy(|_| {}));
        m.start(0, 0.0, GET);
        assert!(matches!(m.on_error(5, 0.0, &socket_error()), Action::Sleep { .. } | Action::Fetch { .. }));
    }

    #[test]
    fn the_attempt_timer_and_the_deadline_end_attempts_and_the_operation() {
        let mut m = Machine::new(policy(|o| {
            o.limits = crate::policy::limits::Limits { max_attempts: 5, total_ms: 250, attempt_ms: 100 };
            o.backoff.base_ms = 0;
            o.response_body = ResponseBody::Buffer;
        }));
        assert_eq!(m.start(0, 0.0, GET), Action::Fetch { timeout_ms: 100, read_body: true });
        assert_eq!(
            m.on_timer(100, 0.0),
            Action::Fetch { timeout_ms: 100, read_body: true },
            "timed out, retried at once"
        );
        assert_eq!(
            m.on_timer(200, 0.0),
            Action::Fetch { timeout_ms: 50, read_body: true },
            "only 50 ms left"
        );
        assert_eq!(m.on_timer(250, 0.0), Action::Fail);
        assert_eq!(reason(&m), Some(Reason::Deadline));
    }

    #[test]
    fn a_cancel_ends_an_attempt_or_a_wait_at_once_and_one_before_the_start_sends_nothing() {
        let mut m = Machine::new(policy(|_| {}));
        m.start(0, 0.0, GET);
        assert_eq!(m.on_abort(1), Action::Fail);
        assert_eq!(reason(&m), Some(Reason::Cancelled));
        let mut m = Machine::new(policy(|_| {}));
        m.start(0, 0.5, GET);
        assert!(matches!(m.on_response(1, 0.5, 500, ok(None), false), Action::Sleep { .. }));
        assert_eq!(m.on_abort(2), Action::Fail);
        assert_eq!(reason(&m), Some(Reason::Cancelled));
        let mut m = Machine::new(policy(|_| {}));
        assert_eq!(m.start(0, 0.0, Request { aborted: true, ..GET }), Action::Fail);
        assert_eq!(m.finished().map(|f| f.report.attempts.len()), Some(0));
    }
}
