//! An operation's end as JS receives it: the response and the cause are
//! handed over by number; the data (`kind`, `reason`, `message`, the
//! report…) as JSON text, which core.js keeps and parses only when someone
//! reads it (`reportOf`, a failure's `RetryError`, a UI store's `result`).

use alloc::string::String;
use wasm_bindgen::prelude::*;

use super::convert;
use super::glue::{end, Held};
use super::machine::{answer_pair, finished};
use crate::policy::report::Report;
use crate::policy::state::Phase;

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

/// Machine `machine`'s outcome, once it ended (the machine is let go): its
/// data as JSON text (`{ kind, reason, message, retryAt?, notBefore?,
/// report }`), with the ids of its last response and its cause (the
/// host's error, a cancel's reason; 0: none) in the work buffer's first
/// two places (js/src/attempts.js `handed`, `thrown`). `undefined` for a
/// machine that has not ended.
#[wasm_bindgen(js_name = outcomeOf)]
pub fn outcome_of(machine: u32) -> Option<String> {
    let mut outcome = finished(machine)?;
    let response = outcome.response.take().unwrap_or(0);
    let cause = outcome.cause.take().map_or(0, Held::take);
    answer_pair(response, cause);
    Some(convert::outcome(&outcome.phase, &outcome.report))
}
