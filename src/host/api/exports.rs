//! What JavaScript calls: `Policy` (`new`, `execute`, `stats`, `release`).
//!
//! An operation is a machine (`crate::host::operation::machine`) that js/src/executor.js
//! drives; [`start`] polls it once synchronously, inside the export, before
//! handing it over (docs/development.md "The stack").

use alloc::rc::Rc;
use alloc::string::String;
use core::future::Future;
use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;

use crate::host::shared::bind::{get, get_string, global, math_random, settled};
use crate::host::operation::clock::HostClock;
use crate::host::shared::convert;
use crate::host::operation::glue::{self, invoke, shown, Glue, Held};
use crate::host::operation::io::step;
use super::leased::Leased;
use crate::host::operation::machine::{answer_numbers, hand_over, keep, Machine};
use super::options::{self, Hooks};
use crate::host::operation::outcome::Outcome;
use crate::host::attempt::replay;
use crate::host::attempt::request::{prepare, Given, Key, Prepared, Unprepared};
use crate::host::attempt::failure::StepFailure;
use crate::host::attempt::transport::{Attempt, FetchTransport, Received};
use crate::engine::poll::Role;
use crate::engine::{self, race, Budget, Call, Clock, Either, Finished};
use crate::packed::Fields;
use crate::policy::budget::concurrency::Gate;
use crate::policy::budget::{InMemory, SharedState, Stats};
use crate::policy::classify::{Safety, Stage};
use crate::policy::options::Options;
use crate::policy::reason::Reason;
use crate::policy::report::{AttemptRecord, ErrorInfo, Report};
use crate::policy::runtime::{fetch_settles_at_once, Runtime};
use crate::policy::scheme::is_http;
use crate::policy::state::{Phase, WaitWhy};

/// Starts an operation as a machine (`crate::host::operation::machine`), polled once here:
/// `policy.fetch()` hands the first request to `fetch` before it returns
/// (a caller that aborts right after the call, or a test counting requests,
/// sees that one). The answer is the machine's number, which the executor
/// drives (js/src/executor.js); or, when the operation ended in that first
/// poll (its signal had aborted) and the host's `fetch` settles such a
/// call at once, [`AT_ONCE`] with an event's bits: its outcome is handed
/// over (`hand_over`), and the executor settles it in the call.
fn start(runtime: Runtime, call: u32, future: impl Future<Output = Outcome> + 'static) -> u32 {
    let machine = Machine::start(future, call);
    if machine.ended() && fetch_settles_at_once(runtime) {
        return AT_ONCE | hand_over(machine);
    }
    keep(machine)
}

/// See [`start`] (machine numbers stay below 2^31).
const AT_ONCE: u32 = 0x8000_0000;

struct Shared {
    options: Options,
    hooks: Hooks,
    state: Rc<dyn SharedState>,
    /// The shared budget, when `shared` was given (`state` too).
    fleet: Option<Rc<Leased>>,
    gate: Option<Rc<Gate>>,
    stats: Stats,
    runtime: Runtime,
    glue: Glue,
}

/// Which runtime's `fetch` errors we are reading (see `policy::runtime`).
fn detect_runtime() -> Runtime {
    let g = global();
    if !get(&g, "Deno").is_undefined() {
        Runtime::Deno
    } else if !get(&g, "Bun").is_undefined() {
        Runtime::Bun
    } else if get_string(&get(&g, "navigator"), "userAgent").as_deref() == Some("Cloudflare-Workers") {
        Runtime::Workerd
    } else if get(&get(&get(&g, "process"), "versions"), "node").is_string()
        && get(&g, "document").is_undefined()
    {
        Runtime::Node
    } else {
        Runtime::Browser
    }
}

/// A retry policy: options plus the budgets its calls share.
#[wasm_bindgen]
pub struct Policy {
    shared: Rc<Shared>,
}

#[wasm_bindgen]
impl Policy {
    /// Validates the options; throws `TypeError`/`RangeError` naming the field.
    /// `glue` is core.js's helpers (`crate::host::operation::glue`).
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue, glue: Glue) -> Result<Policy, JsValue> {
        // First: the options' functions go to the executor to hold.
        glue::install(&glue);
        let (options, mut hooks) = options::read(&glue, &Options::default(), &Hooks::default(), &options, false)?;
        let fleet = hooks.shared.take().map(|exchange| Rc::new(Leased::new(&options, exchange, &glue)));
        let state: Rc<dyn SharedState> = match &fleet {
            Some(fleet) => fleet.clone(),
            None => Rc::new(InMemory::new(options.quota, options.rate).throttled(options.throttle)),
        };
        let gate = options.concurrency.map(Gate::new);
        let (stats, runtime) = (Stats::default(), detect_runtime());
        let shared = Shared { options, hooks, state, fleet, gate, stats, runtime, glue };
        Ok(Policy { shared: Rc::new(shared) })
    }

    /// The runtime whose error rules apply, by its code (`Runtime`'s
    /// order; js/src/shape.js names it).
    #[wasm_bindgen(getter)]
    pub fn runtime(&self) -> u8 {
        self.shared.runtime as u8
    }

    /// The whole-operation bound (`totalMs`): how long one call may take
    /// at most (an outbox's write-ahead holds its entry that long).
    #[wasm_bindgen(getter, js_name = totalMs)]
    pub fn total_ms(&self) -> f64 {
        self.shared.options.limits.total_ms as f64
    }

    /// Counters over every call of this policy so far, as numbers
    /// (`convert::stats`, js/src/shape.js), the last the shared budget's
    /// client when there is one, whose stats the glue reads from it
    /// (js/src/lease.js `sharedStats`: data shaping only), with the
    /// budget's scope, answered here. No export of ours answers a lone JS
    /// value (a wasm `externref` result): V8 11.3 (Node 20) inlines such a
    /// call into optimized JS and, if that code is deoptimized while the
    /// call runs (an object built inside it changed a field's type, as
    /// `reason` appearing in `shared` did), aborts the process (`Fatal
    /// error … unreachable code` in
    /// `Deoptimizer::DoComputeBuiltinContinuation`, issue 38; the
    /// `crash-node` tier checks every export of every shipped module).
    pub fn stats(&self) -> Option<String> {
        let fleet = self.shared.fleet.as_deref();
        let quota_level = self.shared.state.quota_level();
        answer_numbers(|n| convert::stats(&self.shared.stats, quota_level, fleet.map(Leased::handle), n));
        fleet.and_then(Leased::scope).map(String::from)
    }

    /// Gives the shared budget's held tokens back to its authority (a tab
    /// closing, a Worker shutting down), and calls `done` when it answered
    /// or gave up; without a shared budget, at once. (A callback, not a
    /// promise: no export answers a lone JS value, see [`Policy::stats`].)
    pub fn release(&self, done: &Function) {
        match &self.shared.fleet {
            Some(fleet) => fleet.release(done),
            None => settled(done),
        }
    }

    /// Starts one logical operation. Throws (synchronously) on bad options
    /// or a request `fetch` would refuse; otherwise answers the `Outcome`,
    /// or a promise of it that never rejects. The request comes as the
    /// glue's `callOf(input, init)` read it (`request::Given`: `retry` is
    /// our options, when `init.retry` was an object; `strings` the method,
    /// the redirect, the mode and the `Request`'s own method, packed
    /// (`crate::packed`), absent when all four are). `observe` (0: none)
    /// names the subscriber the executor holds, told every state. The
    /// `fetch` is the policy's `fetch` option, else the one core.js
    /// resolved for the call. A URL that is not HTTP(S) goes to `fetch`
    /// once, untouched (`policy::scheme`). `role` and `left_ms`: what the
    /// operation is to a poll (`engine::poll::Role::of`; 0 and absent for
    /// a plain call): its submit, or a status query — never passed
    /// through, and a request that cannot be made throws.
    #[allow(clippy::too_many_arguments)]
    pub fn execute(
        &self,
        call: u32,
        retry: Option<Object>,
        url: String,
        strings: Option<String>,
        flags: u32,
        observe: u32,
        role: u32,
        left_ms: Option<f64>,
    ) -> Result<u32, JsValue> {
        // The call's and the subscriber's owners: the operation's until it ends.
        let (owner, observe) = (Held::new(call), subscriber(observe));
        let shared = self.shared.clone();
        let mut packed = Fields(strings.as_deref().unwrap_or_default());
        let (method, redirect, mode, request_method) = (packed.string(), packed.string(), packed.string(), packed.string());
        let given = Given { call, url, method, request_method, redirect, mode, flags };
        let role = Role::of(role, left_ms.map_or(0, |ms| ms as u64));
        let (mut options, mut hooks) = per_call(&shared, retry)?;
        if let Some(one) = role.options(&options) {
            // A status query: no key, no carried-over Retry-After.
            (options, hooks.idempotency_key, hooks.not_before) = (one, Key::None, None);
        }
        // Straight to `fetch`, once: a URL that is not HTTP(S), or a
        // request whose Request the constructor refused (`fetch` says why).
        if role != Role::Plain || is_http(&given.url) {
            match prepare(&shared.glue, given, &hooks.idempotency_key) {
                Ok(prepared) => {
                    let listened = prepared.listened();
                    return Ok(start(shared.runtime, listened, async move {
                        let ctx = Ctx::new(&shared, &options, &hooks, observe, listened);
                        // The request run here, not in a future of its own
                        // (one generator fewer around the engine's).
                        let mut prepared = prepared;
                        // Before the first attempt, under its timer and the caller's cancel;
                        // a body that is not there by then is a stream: sent once.
                        if replay::bound(&prepared) {
                            let read = match race(step(prepared.call), ctx.clock.sleep(options.limits.attempt_ms)).await {
                                Either::Left(read) => Some(read),
                                Either::Right(_) => None,
                            };
                            replay::kept(&mut prepared, &shared.glue, read);
                        }
                        let (call, transport, budget) = ctx.call(prepared, role);
                        let mut random = || ctx.random();
                        let mut shown = |p: Phase| {
                            if let Some(p) = role.shown(p) {
                                ctx.observe(p)
                            }
                        };
                        let finished = engine::run(call, &transport, &ctx.clock, budget, &mut random, &mut shown).await;
                        let outcome = ctx.outcome(finished);
                        drop(owner);
                        outcome
                    }));
                }
                Err(Unprepared { to_host: true, .. }) if role == Role::Plain => {}
                Err(Unprepared { error, .. }) => return Err(error),
            }
        }
        // `fetch` follows the caller's signal itself: nothing to listen to.
        Ok(start(shared.runtime, 0, async move {
            let ctx = Ctx::new(&shared, &options, &hooks, observe, 0);
            ctx.pass_through(owner).await
        }))
    }
}

/// The options of one call: the policy's, with the call's own `retry`
/// options over them.
fn per_call(shared: &Shared, retry: Option<Object>) -> Result<(Options, Hooks), JsValue> {
    match retry {
        Some(retry) => options::read(&shared.glue, &shared.options, &shared.hooks, &retry, true),
        None => Ok((shared.options.clone(), shared.hooks.clone())),
    }
}

/// The subscriber the executor holds as `id` (0: none), from here on the
/// operation's.
fn subscriber(id: u32) -> Option<Held> {
    (id != 0).then(|| Held::new(id))
}

/// One operation's host side: its clock, random source and observer.
struct Ctx<'a> {
    shared: &'a Shared,
    /// The `fetch` option the executor holds (0: the call's own).
    fetch: u32,
    options: &'a Options,
    not_before: Option<u64>,
    clock: HostClock<'a>,
    hooks: &'a Hooks,
    /// The subscriber the executor holds, if any.
    observe: Option<Held>,
}

impl<'a> Ctx<'a> {
    fn new(
        shared: &'a Shared,
        options: &'a Options,
        hooks: &'a Hooks,
        observe: Option<Held>,
        call: u32,
    ) -> Ctx<'a> {
        let clock = HostClock { call, glue: &shared.glue };
        let fetch = hooks.fetch.as_ref().map_or(0, |f| f.id());
        Ctx { shared, fetch, options, not_before: hooks.not_before, clock, hooks, observe }
    }

    /// A draw of the `random` option, else of `Math.random`.
    fn random(&self) -> f64 {
        match &self.hooks.random {
            Some(f) => invoke(f.id(), &JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(f64::NAN),
            None => math_random(),
        }
    }

    /// Shows state `p` to the subscriber, and to `onRetry` before a retry.
    fn observe(&self, p: Phase) {
        notify(&p, self.observe.as_ref(), self.hooks.on_retry.as_deref());
    }

    fn budget(&self, role: Role) -> Budget<'a> {
        role.budget(Budget {
            shared: &*self.shared.state,
            gate: self.shared.gate.as_ref(),
            stats: &self.shared.stats,
            quota: self.options.quota.is_some(),
            counted: true,
        })
    }

    fn transport(&self, prepared: Prepared) -> FetchTransport<'a> {
        FetchTransport {
            fetch: self.fetch,
            glue: &self.shared.glue,
            prepared,
            runtime: self.shared.runtime,
            max_body_bytes: self.options.max_body_bytes,
            response_body: self.options.response_body,
        }
    }

    /// What the engine runs the request as: its call, transport and
    /// budget (`role`: a poll's submit and queries have budgets of their
    /// own, `engine::poll::Role::budget`).
    fn call(&self, prepared: Prepared, role: Role) -> (Call<'a>, FetchTransport<'a>, Budget<'a>) {
        let call = Call {
            options: self.options,
            safety: prepared.safety,
            body_replayable: prepared.replayable,
            not_before: self.not_before,
        };
        (call, self.transport(prepared), self.budget(role))
    }

    /// A URL the retry rules do not apply to: `fetch(input, init)` once,
    /// with the caller's own signal, and whatever it answers or throws is
    /// the outcome (a rejection as `refused`, the host's error its cause).
    async fn pass_through(&self, call: Held) -> Outcome {
        let start = self.clock.now_ms();
        // Under no controller of ours, the input as it is.
        let attempt = Attempt::start(call.id(), self.fetch, 0);
        let answer = match step(attempt.id()).await {
            Ok(status) => Ok((attempt.take(), status.number().filter(|s| *s >= 0.0))),
            Err(e) => Err((attempt.kept(), StepFailure::parse(&e.into_text()).name())),
        };
        // The call's objects went to `fetch` (its start read them).
        drop(call);
        let mut report = Report::new();
        let mut record =
            AttemptRecord { duration_ms: self.clock.now_ms().saturating_sub(start), ..Default::default() };
        let (response, cause) = match answer {
            Ok((id, status)) => {
                record.status = status.map(|s| s as u16);
                report.streamed = Some(true);
                report.handed_over_ms = Some(0);
                (Some(id), None)
            }
            Err((held, name)) => {
                record.error = Some(ErrorInfo { stage: Stage::NotSent, code: String::from("refused"), name });
                report.reason = Reason::Refused;
                (None, Some(held))
            }
        };
        report.elapsed_ms = record.duration_ms;
        report.attempts.push(record);
        let phase = Phase::terminal(report.reason, None, Safety::Idempotent, None);
        self.observe(phase);
        Outcome::new(phase, report, response, cause)
    }

    /// The outcome, as `[data, response?, cause?]`: the data as a plain
    /// object, the last response, and the cause (for a cancel, the caller's
    /// own abort reason).
    fn outcome(&self, mut finished: Finished<Received, Held>) -> Outcome {
        let body = finished.response.as_ref().map(|a| &a.body);
        finished.report.streamed = body.map(Received::streamed);
        finished.report.handed_over_ms = body.and_then(Received::handed_over_ms);
        finished.report.budget = self.shared.fleet.as_ref().and_then(|f| f.mode());
        let cause = match (finished.phase, self.clock.call) {
            (Phase::Cancelled, call @ 1..) => Some(Held::new(self.shared.glue.reason(call))),
            _ => finished.cause,
        };
        let response = finished.response.map(|a| a.body.hand_over());
        Outcome::new(finished.phase, finished.report, response, cause)
    }
}

/// Tells the subscriber, and `onRetry` before each retry, both held by
/// the executor (the state's numbers answered for each: a subscriber may
/// have used the list meanwhile). A throwing callback does not disturb
/// the operation.
fn notify(p: &Phase, observe: Option<&Held>, on_retry: Option<&Held>) {
    if let Some(f) = observe {
        answer_numbers(|n| convert::phase(p, n));
        shown(f.id(), false);
    }
    // Only waits before a retry: not rate/queue/offline/poll waits, nor the
    // carried-over Retry-After before the first attempt.
    let retry_wait = |why| matches!(why, WaitWhy::Backoff | WaitWhy::Throttle | WaitWhy::RetryAfter);
    if let (Phase::Waiting { attempt: 2.., why, .. }, Some(f)) = (p, on_retry) {
        if !retry_wait(*why) {
            return;
        }
        answer_numbers(|n| convert::phase(p, n));
        shown(f.id(), true);
    }
}
