//! What the spike's executor calls: `SpikePolicy` (options, shared budgets)
//! and `Machine` (one operation). Every event answers the next action as
//! one number, `ms * 8 + kind`, so the success path crosses with numbers
//! and short strings only and no JS object is built unless someone reads
//! the outcome or the report.

use alloc::rc::Rc;
use alloc::string::String;
use wasm_bindgen::prelude::*;

use super::convert::{outcome, to_js};
use super::machine::{self, Action, Policy, Rejected, Request};
use crate::policy::body::ResponseBody;
use crate::policy::options::{ErrorKind, Numeric, OptionError, Options};
use crate::policy::rate_limit::FloorHeaders;
use crate::policy::runtime::{ErrorShape, Runtime, Sent};

const RESPONSE_BODY: OptionError = OptionError {
    field: "responseBody",
    expected: "\"auto\", \"buffer\" or \"stream\"",
    kind: ErrorKind::Type,
};

const RUNTIMES: [Runtime; 5] =
    [Runtime::Node, Runtime::Bun, Runtime::Deno, Runtime::Workerd, Runtime::Browser];

/// A JS time (epoch ms) as the engine's; `as` saturates, never traps.
fn ms(now: f64) -> u64 {
    now.max(0.0) as u64
}

/// `ms * 8 + kind`: 0 fetch and read the body (ms: its timer), 1 rate-limit
/// headers, 2 sleep (ms), 3 done, 4 fail, 5 idle, 6 fetch and hand the body
/// over (ms: its timer). Exact: `ms` ≤ 2^31 − 1.
fn encode(action: Action) -> f64 {
    let (ms, kind) = match action {
        Action::Fetch { timeout_ms, read_body: true } => (timeout_ms, 0),
        Action::Fetch { timeout_ms, read_body: false } => (timeout_ms, 6),
        Action::RateLimitHeaders => (0, 1),
        Action::Sleep { ms } => (ms, 2),
        Action::Done => (0, 3),
        Action::Fail => (0, 4),
        Action::Idle => (0, 5),
    };
    (ms * 8 + kind) as f64
}

/// A retry policy: options plus the budgets its calls share.
#[wasm_bindgen]
pub struct SpikePolicy(Rc<Policy>);

#[wasm_bindgen]
impl SpikePolicy {
    /// Throws `TypeError`/`RangeError` naming the field and its range.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::too_many_arguments)] // the options as plain values: no getter runs inside wasm
    pub fn new(
        runtime: &str,
        max_attempts: Option<f64>,
        total_ms: Option<f64>,
        attempt_ms: Option<f64>,
        base_ms: Option<f64>,
        cap_ms: Option<f64>,
        throttle_base_ms: Option<f64>,
        response_body: Option<String>,
    ) -> Result<SpikePolicy, JsValue> {
        let mut options = Options::default();
        if let Some(mode) = response_body {
            options.response_body = ResponseBody::parse(&mode).ok_or(RESPONSE_BODY)?;
        }
        let given = [
            (Numeric::MaxAttempts, max_attempts),
            (Numeric::TotalMs, total_ms),
            (Numeric::AttemptMs, attempt_ms),
            (Numeric::BaseMs, base_ms),
            (Numeric::CapMs, cap_ms),
            (Numeric::ThrottleBaseMs, throttle_base_ms),
        ];
        for (field, value) in given {
            if let Some(v) = value {
                options.set(field, v)?;
            }
        }
        let runtime = RUNTIMES.into_iter().find(|r| r.name() == runtime).unwrap_or(Runtime::Browser);
        Ok(SpikePolicy(Rc::new(Policy::new(options, runtime))))
    }

    /// A machine for one operation of this policy.
    pub fn machine(&self) -> Machine {
        Machine(machine::Machine::new(self.0.clone()))
    }
}

/// One logical operation.
#[wasm_bindgen]
pub struct Machine(machine::Machine);

#[wasm_bindgen]
impl Machine {
    pub fn start(
        &mut self,
        now: f64,
        random: f64,
        method: &str,
        has_key: bool,
        body_replayable: bool,
        aborted: bool,
    ) -> f64 {
        let request = Request { method, has_key, body_replayable, aborted };
        encode(self.0.start(ms(now), random, request))
    }

    /// Status, `Retry-After`, `Retry-After-Ms`, `type === "cors"`; the body
    /// has been read.
    #[wasm_bindgen(js_name = onResponse)]
    pub fn on_response(
        &mut self,
        now: f64,
        random: f64,
        status: u16,
        retry_after: Option<String>,
        retry_after_ms: Option<String>,
        cross_origin: bool,
    ) -> f64 {
        let headers = FloorHeaders { retry_after, retry_after_ms, ..FloorHeaders::default() };
        encode(self.0.on_response(ms(now), random, status, headers, cross_origin))
    }

    /// `RateLimit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`,
    /// `X-RateLimit-Reset-After` (the `X-Rate-Limit-*` spellings folded in).
    #[wasm_bindgen(js_name = onRateLimitHeaders)]
    pub fn on_rate_limit_headers(
        &mut self,
        ratelimit: Option<String>,
        remaining: Option<String>,
        reset: Option<String>,
        reset_after: Option<String>,
    ) -> f64 {
        encode(self.0.on_rate_limit_headers(ratelimit, remaining, reset, reset_after))
    }

    /// The fields of the rejection that the runtime rules read.
    #[wasm_bindgen(js_name = onError)]
    #[allow(clippy::too_many_arguments)] // one crossing, the error's fields as plain values
    pub fn on_error(
        &mut self,
        now: f64,
        random: f64,
        during_body: bool,
        name: &str,
        message: Option<String>,
        has_cause: bool,
        code: Option<String>,
        cause_code: Option<String>,
        cause_syscall: Option<String>,
        cause_message: Option<String>,
        url: &str,
        body_streamed: bool,
    ) -> f64 {
        let shape = ErrorShape {
            name,
            message: message.as_deref(),
            has_cause,
            code: code.as_deref(),
            cause_code: cause_code.as_deref(),
            cause_syscall: cause_syscall.as_deref(),
            cause_message: cause_message.as_deref(),
        };
        let rejected = Rejected { shape, during_body, sent: Sent { url, body_streamed, doomed: false } };
        encode(self.0.on_error(ms(now), random, &rejected))
    }

    #[wasm_bindgen(js_name = onTimer)]
    pub fn on_timer(&mut self, now: f64, random: f64) -> f64 {
        encode(self.0.on_timer(ms(now), random))
    }

    #[wasm_bindgen(js_name = onAbort)]
    pub fn on_abort(&mut self, now: f64) -> f64 {
        encode(self.0.on_abort(ms(now)))
    }

    /// `{ kind, reason, message, retryAt?, notBefore?, report }` once
    /// finished, else `undefined`.
    pub fn outcome(&self) -> JsValue {
        self.0.finished().map_or(JsValue::UNDEFINED, |f| outcome(&f.phase, &f.report))
    }

    /// The report, once finished (built only when asked).
    pub fn report(&self) -> JsValue {
        self.0.finished().map_or(JsValue::UNDEFINED, |f| to_js(&f.report))
    }
}
