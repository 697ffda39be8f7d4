//! Submit-then-poll's loop as js/src/poll.js drives it (`Poller`), in a
//! wasm module of its own (`--features poll`), loaded at a first
//! `policy.poll()`: a page that never polls pays for none of it.
//!
//! The submit and each status query are ordinary operations of the
//! policy's module (`Policy.execute` with their `engine::poll::Role`); the
//! glue reports how each ended, what a hook answered, a timer, the
//! caller's cancel, and performs what the answer says — every decision is
//! `policy::poll::Poll`'s. Each event answers one step as JSON text: the
//! states to show the subscriber, in order, and what to do next.

use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::host::shared::bind::date_now;
use crate::host::shared::convert;
use crate::json;
use crate::policy::number::{floor_in, opt_ms};
use crate::policy::poll::{Cause, Ending, Next, Poll, PollSchedule, PollVerdict, Queried, STATUS_METHOD};
use crate::policy::report::Report;
use crate::policy::state::Phase;

/// The largest epoch millisecond (or duration) a JS number holds exactly.
const MAX_MS: u64 = (1 << 53) - 1;

fn ms(v: f64) -> Option<u64> {
    floor_in(v, 0, MAX_MS)
}

/// The time now, as the engine's clock reads it on the host.
fn now() -> u64 {
    ms(date_now()).unwrap_or(0)
}

/// One answer: `shown`, the subscriber's states in order; `do`, the work —
/// `wait` (for the submit or the query in progress), `submit` (its
/// outcome is the operation's), `find` (call `status`), `sleep`, `query`,
/// `judge` (call `verdict`), `end` (then `outcome()`) — with what it needs.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct Step {
    shown: Vec<Phase>,
    #[serde(rename = "do")]
    work: &'static str,
    /// A timer to set (`find`, `sleep`, `judge`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    ms: Option<u64>,
    /// `query`: its number, its method, the budget left for it, where its
    /// attempts start in the report.
    #[serde(skip_serializing_if = "Option::is_none")]
    poll: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    left_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    offset_ms: Option<u64>,
    /// `end`: the last query's response is the outcome's.
    #[serde(skip_serializing_if = "core::ops::Not::not")]
    response: bool,
    /// `end`: the outcome's cause — `error` (what the status hook threw or
    /// rejected with, or what the query threw), `abort` (the caller's
    /// abort reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<&'static str>,
}

/// A submitted task's poll loop, one per operation.
#[wasm_bindgen]
pub struct Poller {
    poll: Poll,
    ending: Option<Ending>,
}

#[wasm_bindgen]
impl Poller {
    /// `spec`: the schedule's numbers (`policy::poll::schedule`); `status`
    /// and `verdict`: the spec's hooks, as the policy's module checked them
    /// (`checkOptions("poll")`, js/src/core.js).
    #[wasm_bindgen(constructor)]
    pub fn new(spec: &[f64], status: &JsValue, verdict: &JsValue) -> Result<Poller, JsValue> {
        let schedule = PollSchedule::of(spec)
            .ok_or_else(|| js_sys::TypeError::new("saferetry: a poll spec checkOptions did not check"))?;
        // A `status` function is called to find the status request; a
        // `verdict` judges each query's response.
        Ok(Poller { poll: Poll::new(schedule, status.is_function(), !verdict.is_undefined()), ending: None })
    }

    /// The submit's outcome: its `kind`, `report.elapsedMs`, `notBefore`
    /// and its last attempt's status.
    pub fn submitted(
        &mut self,
        kind: &str,
        elapsed_ms: f64,
        not_before: Option<f64>,
        status: Option<u16>,
    ) -> String {
        let elapsed = ms(elapsed_ms).unwrap_or(0);
        let next = self.poll.submitted(kind == "succeeded", elapsed, not_before.and_then(ms), status, now());
        self.step(next)
    }

    /// The `status` hook answered (`ok`: a status request, as it is or as
    /// its promise resolved), or threw or rejected.
    pub fn found(&mut self, ok: bool) -> String {
        let next = self.poll.found(ok, now());
        self.step(next)
    }

    pub fn timer(&mut self) -> String {
        let next = self.poll.timer(now());
        self.step(next)
    }

    /// The caller's signal aborted.
    pub fn cancel(&mut self) -> String {
        let next = self.poll.cancel(now());
        self.step(next)
    }

    /// The status query ended: its response's `status` (none without one),
    /// its `kind` and `notBefore`, how many attempts its report has and
    /// the last one's status.
    pub fn queried(
        &mut self,
        status: Option<u16>,
        kind: &str,
        not_before: Option<f64>,
        attempts: u32,
        last: Option<u16>,
    ) -> String {
        let q = Queried {
            status,
            cancelled: kind == "cancelled",
            not_before: not_before.and_then(ms),
            record: (attempts > 0).then_some(last),
        };
        let next = self.poll.queried(q, now());
        self.step(next)
    }

    /// The status query could not be made: it threw.
    pub fn refused(&mut self) -> String {
        let next = self.poll.refused(now());
        self.step(next)
    }

    /// The `verdict` hook returned `word` (`ok`; awaited when a
    /// `Promise`), or threw or rejected.
    pub fn judged(&mut self, ok: bool, word: JsValue) -> String {
        let verdict = word.as_string().filter(|_| ok).and_then(|w| PollVerdict::parse(&w));
        let next = self.poll.judged(verdict, now());
        self.step(next)
    }

    /// The outcome's data once the poll ended, as numbers (`{ kind,
    /// reason, message, retryAt?, notBefore?, report }` as
    /// `convert::outcome` writes it, js/src/shape.js; the report with no
    /// attempts: the glue adds the submit's and each query's).
    pub fn outcome(&self) -> Option<Vec<f64>> {
        let e = self.ending?;
        let mut report = Report::new();
        (report.reason, report.retry_at, report.elapsed_ms, report.not_before) =
            (e.reason, e.retry_at, e.elapsed_ms, e.not_before);
        let mut numbers = Vec::new();
        convert::outcome(&e.phase, &report, &mut numbers, &mut String::new());
        Some(numbers)
    }
}

impl Poller {
    fn step(&mut self, next: Next) -> String {
        let mut step = Step { shown: self.poll.shown(), ..Step::default() };
        step.work = match next {
            Next::Wait => "wait",
            Next::SubmitEnds => "submit",
            Next::Find { ms } => {
                step.ms = Some(ms);
                "find"
            }
            Next::Sleep { ms } => {
                step.ms = Some(ms);
                "sleep"
            }
            Next::Query { poll, left_ms, offset_ms } => {
                (step.poll, step.method) = (Some(poll), Some(STATUS_METHOD));
                (step.left_ms, step.offset_ms) = (Some(left_ms), Some(offset_ms));
                "query"
            }
            Next::Judge { ms } => {
                step.ms = Some(ms);
                "judge"
            }
            Next::End(ending) => {
                self.ending = Some(ending);
                step.response = ending.response;
                step.cause = match ending.cause {
                    Cause::None => None,
                    Cause::Error => Some("error"),
                    Cause::Abort => Some("abort"),
                };
                "end"
            }
        };
        json::to_string(&step)
    }
}
