//! An operation's end as JS receives it: the response and the cause are
//! handed over by number; the data (`kind`, `reason`, `message`, the
//! report…) as numbers and the report's strings, which core.js keeps and
//! js/src/shape.js makes an object only when someone reads it (`reportOf`,
//! a failure's `RetryError`, a UI store's `result`).

use alloc::string::String;
use alloc::vec::Vec;

use crate::host::shared::convert;
use super::glue::{end, Held};
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

    /// Hands the response and the cause over (their ids; 0: none),
    /// writing the data's numbers and the report's strings
    /// (src/host/operation/machine.rs `hand_over`).
    pub fn hand_over(mut self, numbers: &mut Vec<f64>, text: &mut String) -> (u32, u32) {
        let response = self.response.take().unwrap_or(0);
        let cause = self.cause.take().map_or(0, Held::take);
        convert::outcome(&self.phase, &self.report, numbers, text);
        (response, cause)
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        if let Some(id) = self.response.take() {
            end(id, 0);
        }
    }
}
