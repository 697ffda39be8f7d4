//! An operation's end as JS receives it. The response and the cause are
//! handed over at once; the data (`kind`, `reason`, `message`, the report…)
//! stays here and becomes a JS object only when someone reads it
//! (`reportOf`, a failure's `RetryError`, a UI store's `result`): a
//! successful `policy.fetch()` whose report nobody asks for makes no
//! object (it once was a quarter of its crossings).

use wasm_bindgen::prelude::*;

use super::convert;
use super::glue::{end, Held};
use crate::policy::report::Report;
use crate::policy::state::Phase;

#[wasm_bindgen]
pub struct Outcome {
    phase: Phase,
    report: Report,
    /// The attempt whose response the caller gets, as the executor holds it.
    response: Option<u32>,
    cause: Option<Held>,
}

impl Outcome {
    pub fn new(phase: Phase, report: Report, response: Option<u32>, cause: Option<Held>) -> Outcome {
        Outcome { phase, report, response, cause }
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        if let Some(id) = self.response.take() {
            end(id, 0);
        }
    }
}

#[wasm_bindgen]
impl Outcome {
    /// The last response, handed over once, as the id the executor holds
    /// it by (js/src/attempts.js `handed`; 0: none): kept here it would
    /// keep the response alive as long as this outcome (which a `WeakMap`
    /// keyed by that response holds until someone reads its report).
    #[wasm_bindgen(js_name = takeResponse)]
    pub fn take_response(&mut self) -> u32 {
        self.response.take().unwrap_or(0)
    }

    /// The cause (the host's error, a cancel's reason), handed over once,
    /// as its id (js/src/attempts.js `thrown`; 0: none).
    #[wasm_bindgen(js_name = takeCause)]
    pub fn take_cause(&mut self) -> u32 {
        self.cause.take().map_or(0, Held::take)
    }

    /// `{ kind, reason, message, retryAt?, notBefore?, report }`, built now.
    pub fn data(&self) -> JsValue {
        convert::outcome(&self.phase, &self.report)
    }
}
