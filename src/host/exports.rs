//! What JavaScript calls: `Policy` (`new`, `execute`, `stats`).

use alloc::rc::Rc;
use alloc::string::String;
use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::bind::{get, get_string, math_random, ms, Obj};
use super::clock::HostClock;
use super::convert;
use super::options::{self, Hooks};
use super::request::prepare;
use super::transport::FetchTransport;
use crate::engine::{self, Budget, Call};
use crate::policy::budget::concurrency::Gate;
use crate::policy::budget::{InMemory, SharedState, Stats};
use crate::policy::options::Options;
use crate::policy::runtime::Runtime;
use crate::policy::state::{message, Phase};

struct Shared {
    options: Options,
    hooks: Hooks,
    state: InMemory,
    gate: Option<Rc<Gate>>,
    stats: Stats,
    runtime: Runtime,
}

/// Which runtime's `fetch` errors we are reading (see `policy::runtime`).
fn detect_runtime() -> Runtime {
    let g = js_sys::global();
    if !get(&g, "Deno").is_undefined() {
        Runtime::Deno
    } else if !get(&g, "Bun").is_undefined() {
        Runtime::Bun
    } else if get_string(&get(&g, "navigator"), "userAgent").as_deref() == Some("Cloudflare-Workers") {
        Runtime::Workerd
    } else if get(&get(&g, "process"), "versions").is_object() && get(&g, "document").is_undefined() {
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
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Policy, JsValue> {
        let (options, hooks) = options::read(&Options::default(), &Hooks::default(), &options, false)?;
        let state = InMemory::new(options.quota, options.rate);
        let gate = options.concurrency.map(Gate::new);
        let (stats, runtime) = (Stats::default(), detect_runtime());
        Ok(Policy { shared: Rc::new(Shared { options, hooks, state, gate, stats, runtime }) })
    }

    /// The runtime whose error rules apply.
    #[wasm_bindgen(getter)]
    pub fn runtime(&self) -> String {
        String::from(self.shared.runtime.name())
    }

    /// Counters over every call of this policy so far.
    pub fn stats(&self) -> JsValue {
        let s = &self.shared;
        let histogram: js_sys::Array = s.stats.attempts_histogram.iter().map(|c| ms(c.get())).collect();
        let o = Obj::new();
        o.set("operations", ms(s.stats.operations.get()))
            .set("attempts", histogram)
            .set("retries", ms(s.stats.retries.get()))
            .set("exhausted", ms(s.stats.exhausted.get()))
            .set("queued", s.stats.queued.get())
            .set("inFlight", s.stats.in_flight.get());
        o.opt("quotaLevel", s.state.quota_level());
        o.into_js()
    }

    /// Starts one logical operation. Throws (synchronously) on bad options
    /// or a request `fetch` would refuse; otherwise the promise resolves to
    /// the outcome and never rejects. `observe` receives every state.
    pub fn execute(
        &self,
        input: JsValue,
        init: JsValue,
        observe: Option<Function>,
    ) -> Result<Promise, JsValue> {
        let shared = self.shared.clone();
        let (options, hooks) = options::read(&shared.options, &shared.hooks, &get(&init, "retry"), true)?;
        let prepared = prepare(&input, &init, &hooks.idempotency_key)?;
        Ok(future_to_promise(async move {
            let clock = HostClock { signal: prepared.signal.clone() };
            let call =
                Call { options: &options, safety: prepared.safety, body_replayable: prepared.replayable };
            let transport =
                FetchTransport { prepared, runtime: shared.runtime, max_body_bytes: options.max_body_bytes };
            let mut random = || match &hooks.random {
                Some(f) => f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(f64::NAN),
                None => math_random(),
            };
            let mut observe = |p: Phase| notify(&p, observe.as_ref(), hooks.on_retry.as_ref());
            let budget = Budget {
                shared: &shared.state,
                gate: shared.gate.as_ref(),
                stats: &shared.stats,
                quota: options.quota.is_some(),
            };
            let finished = engine::run(call, &transport, &clock, budget, &mut random, &mut observe).await;
            // A cancelled operation rejects with the caller's own reason.
            let cause = match (finished.phase, &clock.signal) {
                (Phase::Cancelled, Some(signal)) => Some(signal.reason()),
                _ => finished.cause,
            };
            let outcome = Obj::new();
            outcome.set("kind", finished.phase.name());
            outcome.set("reason", finished.report.reason.name());
            outcome.set("message", message(finished.report.reason));
            outcome.opt("retryAt", finished.report.retry_at.map(ms));
            outcome.set("report", convert::report(&finished.report));
            outcome.opt("response", finished.response.map(|a| a.body.response));
            outcome.opt("cause", cause);
            Ok(outcome.into_js())
        }))
    }
}

/// Tells the subscriber, and `onRetry` before each retry. A throwing
/// callback does not disturb the operation.
fn notify(p: &Phase, observe: Option<&Function>, on_retry: Option<&Function>) {
    if let Some(f) = observe {
        let _ = f.call1(&JsValue::UNDEFINED, &convert::phase(p));
    }
    if let (Phase::Waiting { attempt, wait_ms, why, .. }, Some(f)) = (p, on_retry) {
        let info = Obj::new();
        info.set("attempt", *attempt).set("waitMs", ms(*wait_ms)).set("reason", why.name());
        let _ = f.call1(&JsValue::UNDEFINED, &info.into_js());
    }
}
