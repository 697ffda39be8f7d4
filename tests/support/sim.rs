//! Virtual time for the engine: a clock whose `now` only moves when every
//! task is blocked on a timer, then jumps to the earliest one. Runs are exact
//! and instant: a test that waits 60 virtual seconds takes microseconds.
#![allow(dead_code)] // each test binary uses a different part

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use saferetry::engine::{Answer, Clock, Failed, Slept, Transport};
use saferetry::policy::classify::{Failure, Stage};
use saferetry::policy::rate_limit::FloorHeaders;

/// Virtual Unix time at which every simulation starts (2026-11-30T00:00Z).
pub const EPOCH_MS: u64 = 1_795_996_800_000;

#[derive(Default)]
pub struct Sim {
    now: Cell<u64>,
    timers: RefCell<BinaryHeap<Reverse<u64>>>,
}

impl Sim {
    pub fn new() -> Rc<Sim> {
        let sim = Sim::default();
        sim.now.set(EPOCH_MS);
        Rc::new(sim)
    }

    pub fn now(&self) -> u64 {
        self.now.get()
    }

    /// Milliseconds since the simulation started.
    pub fn elapsed(&self) -> u64 {
        self.now() - EPOCH_MS
    }

    fn wake_at(&self, at: u64) {
        self.timers.borrow_mut().push(Reverse(at));
    }

    /// A plain timer, deaf to cancellation.
    pub fn delay(self: &Rc<Self>, ms: u64) -> Delay {
        Delay { sim: self.clone(), at: self.now().saturating_add(ms), armed: false }
    }

    /// Drives every task to completion on virtual time. Panics if a task
    /// can never finish (pending with no timer left) or time runs past
    /// `limit_ms` of virtual time.
    pub fn run_all<F: Future>(&self, tasks: Vec<F>, limit_ms: u64) -> Vec<F::Output> {
        let mut tasks: Vec<Pin<Box<F>>> = tasks.into_iter().map(Box::pin).collect();
        let mut outputs: Vec<Option<F::Output>> = tasks.iter().map(|_| None).collect();
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            for (task, out) in tasks.iter_mut().zip(outputs.iter_mut()) {
                if out.is_none() {
                    if let Poll::Ready(v) = task.as_mut().poll(&mut cx) {
                        *out = Some(v);
                    }
                }
            }
            if outputs.iter().all(Option::is_some) {
                return outputs.into_iter().map(Option::unwrap).collect();
            }
            let next = loop {
                match self.timers.borrow_mut().pop() {
                    Some(Reverse(at)) if at < self.now() => continue,
                    Some(Reverse(at)) => break at,
                    None => panic!("a task is pending with no timer to wake it"),
                }
            };
            assert!(next - EPOCH_MS <= limit_ms, "virtual time ran past {limit_ms} ms");
            self.now.set(next);
        }
    }

    pub fn run<F: Future>(&self, task: F) -> F::Output {
        self.run_all(vec![task], 24 * 3_600_000).pop().unwrap()
    }
}

pub struct Delay {
    sim: Rc<Sim>,
    at: u64,
    armed: bool,
}

impl Future for Delay {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.sim.now() >= self.at {
            return Poll::Ready(());
        }
        if !self.armed {
            self.armed = true;
            self.sim.wake_at(self.at);
        }
        Poll::Pending
    }
}

/// One operation's clock: virtual time plus an optional cancel instant.
pub struct SimClock {
    pub sim: Rc<Sim>,
    cancel_at: Cell<Option<u64>>,
    offline_until: Cell<Option<u64>>,
    stalled: Cell<Option<(u64, u64)>>,
}

impl SimClock {
    pub fn new(sim: &Rc<Sim>) -> SimClock {
        SimClock {
            sim: sim.clone(),
            cancel_at: Cell::new(None),
            offline_until: Cell::new(None),
            stalled: Cell::new(None),
        }
    }

    /// The process stalls in `[from, until)`: a sleep due then ends at
    /// `until` (a timer that fires late).
    pub fn stall(&self, from: u64, until: u64) {
        self.stalled.set(Some((from, until)));
    }

    /// The host reports itself offline from now until `for_ms` from now
    /// (`u64::MAX`: for good).
    pub fn offline_for(&self, for_ms: u64) {
        let until = self.sim.now().saturating_add(for_ms);
        self.offline_until.set(Some(until));
        self.sim.wake_at(until);
    }

    /// Cancels the operation `after_ms` from now (0: now).
    pub fn cancel_after(&self, after_ms: u64) {
        let at = self.sim.now() + after_ms;
        self.cancel_at.set(Some(at));
        self.sim.wake_at(at);
    }
}

impl Clock for SimClock {
    fn now_ms(&self) -> u64 {
        self.sim.now()
    }

    fn cancelled(&self) -> bool {
        self.cancel_at.get().is_some_and(|at| self.sim.now() >= at)
    }

    fn online(&self) -> bool {
        self.offline_until.get().is_none_or(|until| self.sim.now() >= until)
    }

    fn until_online(&self, ms: u64) -> impl Future<Output = Slept> {
        let back = self.offline_until.get().map_or(0, |until| until.saturating_sub(self.sim.now()));
        self.sleep(ms.min(back))
    }

    fn sleep(&self, ms: u64) -> impl Future<Output = Slept> {
        let due = self.sim.now().saturating_add(ms);
        let late =
            self.stalled.get().filter(|&(from, until)| (from..until).contains(&due)).map(|(_, until)| until);
        let delay = self.sim.delay(late.map_or(ms, |until| until - self.sim.now()));
        let mut delay = Box::pin(delay);
        std::future::poll_fn(move |cx| {
            if self.cancelled() {
                return Poll::Ready(Slept::Cancelled);
            }
            delay.as_mut().poll(cx).map(|()| Slept::Elapsed)
        })
    }
}

/// What the scripted server does for one request.
#[derive(Clone, Debug)]
pub struct Step {
    pub status: u16,
    pub retry_after: Option<&'static str>,
    /// Time until the response headers arrive.
    pub headers_ms: u64,
    /// Time from the headers until the body has been read.
    pub body_ms: u64,
    /// Fail instead of answering.
    pub fail: Option<Stage>,
    pub cross_origin: bool,
}

impl Step {
    pub fn status(status: u16) -> Step {
        Step { status, retry_after: None, headers_ms: 0, body_ms: 0, fail: None, cross_origin: false }
    }
    pub fn retry_after(mut self, value: &'static str) -> Step {
        self.retry_after = Some(value);
        self
    }
    pub fn headers_after(mut self, ms: u64) -> Step {
        self.headers_ms = ms;
        self
    }
    pub fn body_takes(mut self, ms: u64) -> Step {
        self.body_ms = ms;
        self
    }
    pub fn fails(stage: Stage) -> Step {
        Step { fail: Some(stage), ..Step::status(0) }
    }
    pub fn cross_origin(mut self) -> Step {
        self.cross_origin = true;
        self
    }
}

/// A server that plays its steps in order, repeating the last, and
/// counts the requests that reached it and when they started.
pub struct Script {
    sim: Rc<Sim>,
    steps: Vec<Step>,
    pub starts: RefCell<Vec<u64>>,
    pub in_flight: Cell<u32>,
    pub max_in_flight: Cell<u32>,
}

impl Script {
    pub fn new(sim: &Rc<Sim>, steps: Vec<Step>) -> Script {
        Script {
            sim: sim.clone(),
            steps,
            starts: RefCell::new(Vec::new()),
            in_flight: Cell::new(0),
            max_in_flight: Cell::new(0),
        }
    }

    pub fn requests(&self) -> usize {
        self.starts.borrow().len()
    }
}

struct InFlight<'a>(&'a Script);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.set(self.0.in_flight.get() - 1);
    }
}

impl Transport for Script {
    type Body = u16;
    type Error = &'static str;

    fn send(&self, attempt: u32) -> impl Future<Output = Result<Answer<u16>, Failed<&'static str>>> {
        let n = self.requests();
        let step = self.steps[n.min(self.steps.len() - 1)].clone();
        let _ = attempt;
        self.starts.borrow_mut().push(self.sim.elapsed());
        self.in_flight.set(self.in_flight.get() + 1);
        self.max_in_flight.set(self.max_in_flight.get().max(self.in_flight.get()));
        let guard = InFlight(self);
        let sim = self.sim.clone();
        async move {
            sim.delay(step.headers_ms).await;
            sim.delay(step.body_ms).await;
            drop(guard);
            match step.fail {
                Some(stage) => Err(Failed {
                    failure: Failure::Network(stage),
                    code: String::from(stage.name()),
                    name: String::from("TypeError"),
                    error: Some("scripted network failure"),
                }),
                None => Ok(Answer {
                    status: step.status,
                    floor_headers: FloorHeaders {
                        retry_after: step.retry_after.map(String::from),
                        ..FloorHeaders::default()
                    },
                    cross_origin: step.cross_origin,
                    body: step.status,
                }),
            }
        }
    }

    fn snippet(&self, body: &u16) -> Option<String> {
        Some(format!("status {body}"))
    }
}

/// A small deterministic random source for scenarios (xorshift).
pub struct Draws(pub u64);

impl Draws {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What one policy's calls share, as the host keeps it.
pub struct Shared {
    pub state: saferetry::policy::budget::InMemory,
    pub gate: Option<Rc<saferetry::policy::budget::concurrency::Gate>>,
    pub stats: saferetry::policy::budget::Stats,
}

impl Shared {
    pub fn new(options: &saferetry::policy::options::Options) -> Shared {
        Shared {
            state: saferetry::policy::budget::InMemory::new(options.quota, options.rate)
                .throttled(options.throttle),
            gate: options.concurrency.map(saferetry::policy::budget::concurrency::Gate::new),
            stats: Default::default(),
        }
    }

    pub fn budget(&self) -> saferetry::engine::Budget<'_> {
        saferetry::engine::Budget {
            shared: &self.state,
            gate: self.gate.as_ref(),
            stats: &self.stats,
            quota: true,
            counted: true,
        }
    }
}
