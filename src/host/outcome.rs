//! An operation's end as JS receives it. The response and the cause are
//! handed over at once; the data (`kind`, `reason`, `message`, the report…)
//! stays here and becomes a JS object only when someone reads it
//! (`reportOf`, a failure's `RetryError`, a UI store's `result`): a
//! successful `policy.fetch()` whose report nobody asks for makes no
//! serde-wasm-bindgen object, which was a quarter of its crossings.

use wasm_bindgen::prelude::*;

use super::convert;
use crate::policy::report::Report;
use crate::policy::state::Phase;

#[wasm_bindgen]
pub struct Outcome {
    phase: Phase,
    report: Report,
    response: Option<JsValue>,
    cause: Option<JsValue>,
}

impl Outcome {
    pub fn new(phase: Phase, report: Report, response: Option<JsValue>, cause: Option<JsValue>) -> Outcome {
        Outcome { phase, report, response, cause }
    }
}

#[wasm_bindgen]
impl Outcome {
    /// The last response, handed over once: kept here it would keep the
    /// response alive as long as this outcome (which a `WeakMap` keyed by
    /// that response holds until someone reads its report).
    #[wasm_bindgen(js_name = takeResponse)]
    pub fn take_response(&mut self) -> JsValue {
        self.response.take().unwrap_or(JsValue::UNDEFINED)
    }

    /// The cause (the host's error, a cancel's reason), handed over once.
    #[wasm_bindgen(js_name = takeCause)]
    pub fn take_cause(&mut self) -> JsValue {
        self.cause.take().unwrap_or(JsValue::UNDEFINED)
    }

    /// `{ kind, reason, message, retryAt?, notBefore?, report }`, built now.
    pub fn data(&self) -> JsValue {
        convert::outcome(&self.phase, &self.report)
    }
}
