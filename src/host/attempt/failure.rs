//! How an attempt failed, as a [`Failed`]: a step's failure as
//! js/src/attempts.js packs it ([`StepFailure`]), classified by where it
//! happened and by the runtime's rules (`policy::runtime`). The attempt
//! (`transport.rs`) and its redirect hops (`hops.rs`) both classify with
//! it, so neither imports the other for it.

use alloc::string::String;

use crate::host::operation::glue::Held;
use super::request::Prepared;
use crate::engine::Failed;
use crate::packed::Fields;
use crate::policy::classify::{Failure, Stage};
use crate::policy::runtime::{doomed, fetch_failure, ErrorShape, Runtime, Sent};

pub(in crate::host) fn failed(failure: Failure, code: &str, name: &str, error: Option<Held>) -> Failed<Held> {
    Failed { failure, code: String::from(code), name: String::from(name), error }
}

/// The request could not even be handed to `fetch`.
pub(in crate::host) fn not_sent(e: Held) -> Failed<Held> {
    failed(Failure::Network(Stage::NotSent), "setup", "TypeError", Some(e))
}

/// Where a step failed, first in its failure (js/src/attempts.js):
/// starting the attempt threw (nothing was sent), `fetch` rejected, or
/// reading the response or its body failed.
pub(in crate::host) const THREW: u8 = 0;
pub(in crate::host) const REJECTED: u8 = 1;

/// A step's failure as js/src/attempts.js packs it: where, then the fields
/// of the thrown value that classification and reports read (its `name`,
/// `message`, whether it has a `cause`, its `code`, the cause's `code`,
/// `syscall` and `message`). The value itself stays with the attempt.
pub(in crate::host) struct StepFailure {
    pub at: u8,
    fields: ErrorFields,
}

impl StepFailure {
    pub fn parse(packed: &str) -> StepFailure {
        let mut f = Fields(packed);
        let at = f.next().flatten().and_then(|s| s.parse().ok()).unwrap_or(REJECTED);
        StepFailure { at, fields: ErrorFields::read(f) }
    }

    /// The thrown value's `name`.
    pub fn name(self) -> String {
        self.fields.name
    }
}

/// The fields of a JS error that classification and reports read.
pub(in crate::host) struct ErrorFields {
    pub name: String,
    message: Option<String>,
    has_cause: bool,
    code: Option<String>,
    cause_code: Option<String>,
    cause_syscall: Option<String>,
    cause_message: Option<String>,
}

impl ErrorFields {
    pub fn read(mut f: Fields<'_>) -> ErrorFields {
        ErrorFields {
            name: f.string().unwrap_or_else(|| String::from("Error")),
            message: f.string(),
            has_cause: f.string().is_some(),
            code: f.string(),
            cause_code: f.string(),
            cause_syscall: f.string(),
            cause_message: f.string(),
        }
    }

    fn shape(&self) -> ErrorShape<'_> {
        ErrorShape {
            name: &self.name,
            message: self.message.as_deref(),
            has_cause: self.has_cause,
            code: self.code.as_deref(),
            cause_code: self.cause_code.as_deref(),
            cause_syscall: self.cause_syscall.as_deref(),
            cause_message: self.cause_message.as_deref(),
        }
    }

    fn failed(self, failure: Failure, error: Held) -> Failed<Held> {
        let code = String::from(self.shape().best_code());
        Failed { failure, code, name: self.name, error: Some(error) }
    }
}

/// A failure after the response started: the request was delivered.
pub(in crate::host) fn delivered_by(id: u32, f: StepFailure) -> Failed<Held> {
    f.fields.failed(Failure::Network(Stage::MaybeDelivered), Held::new(id))
}

/// `fetch` rejected: how far the request got, by the runtime's rules.
pub(in crate::host) fn fetch_failed(prepared: &Prepared, runtime: Runtime, id: u32, f: StepFailure) -> Failed<Held> {
    let url = match runtime {
        Runtime::Deno => prepared.url.clone(),
        _ => String::new(),
    };
    let fate = &prepared.fate;
    let doomed = doomed(fate.mode.as_deref(), fate.integrity, fate.cross_origin);
    let sent = Sent { url: &url, body_streamed: prepared.streamed, doomed };
    let failure = fetch_failure(runtime, &f.fields.shape(), sent);
    f.fields.failed(failure, Held::new(id))
}
