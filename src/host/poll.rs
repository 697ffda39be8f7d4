//! A poll's spec, read for the policy's module: `policy.poll()` checks it
//! at the call (a bad spec throws there, naming the field, and sends
//! nothing), and the poll's own module (`super::poller`, loaded at the
//! first poll) gets it as numbers (`policy::poll::unpack`: the defaults
//! are applied there). The hooks are js/src/poll.js's to call; here only
//! what they are is checked.

use alloc::vec::Vec;
use wasm_bindgen::JsValue;

use super::bind::get;
use super::caller::list;
use crate::policy::limits::MAX_TIMER_MS;
use crate::policy::options::{integer_in, ErrorKind, OptionError};

const fn error(field: &'static str, expected: &'static str, kind: ErrorKind) -> OptionError {
    OptionError { field, expected, kind }
}

const SPEC: OptionError =
    error("poll", "an object { status, verdict?, phases?, budgetMs? }", ErrorKind::Type);
const STATUS_ERROR: OptionError = error(
    "poll.status",
    "a URL, a Request, or a function of the submit's Response returning one",
    ErrorKind::Type,
);
const VERDICT_ERROR: OptionError =
    error("poll.verdict", "a function returning 'done' | 'pending' | 'transient' | 'fatal'", ErrorKind::Type);
const PHASES: OptionError = error(
    "poll.phases",
    "a non-empty array of { everyMs: 1..=2147483647, forMs?: 1..=2147483647 }",
    ErrorKind::Type,
);
const BUDGET: OptionError =
    error("poll.budgetMs", "an integer number of milliseconds in 1..=2147483647", ErrorKind::Range);

fn ms_in_range(v: &JsValue, e: OptionError) -> Result<Option<u64>, OptionError> {
    if v.is_undefined() {
        return Ok(None);
    }
    let n = v.as_f64().ok_or(OptionError { kind: ErrorKind::Type, ..e })?;
    integer_in(n, 1, MAX_TIMER_MS).map(Some).ok_or(OptionError { kind: ErrorKind::Range, ..e })
}

/// Reads the spec `js`, whose `status` and `verdict` js/src/core.js read
/// (in that order, before the rest) for js/src/poll.js, into the numbers
/// the poll's module takes (`policy::poll::unpack`).
pub fn read(js: &JsValue, status: &JsValue, verdict: &JsValue) -> Result<Vec<f64>, OptionError> {
    if !js.is_object() {
        return Err(SPEC);
    }
    if status.is_undefined() || status.is_null() {
        return Err(STATUS_ERROR);
    }
    if !verdict.is_undefined() && !verdict.is_function() {
        return Err(VERDICT_ERROR);
    }
    let ms = |v: Option<u64>| v.map_or(-1.0, |v| v as f64);
    let budget = ms_in_range(&get(js, "budgetMs"), BUDGET)?;
    let hooks = [status.is_function(), !verdict.is_undefined()].map(|b| f64::from(u8::from(b)));
    let mut out = Vec::from(hooks);
    out.push(ms(budget));
    let phases = get(js, "phases");
    if !phases.is_undefined() {
        let items = list(&phases, 100).filter(|a| a.length() > 0).ok_or(PHASES)?;
        let mut until = 0u64;
        for p in items.iter() {
            let every_ms = ms_in_range(&get(&p, "everyMs"), PHASES)?.ok_or(PHASES)?;
            let until_ms = ms_in_range(&get(&p, "forMs"), PHASES)?.map(|f| {
                until = until.saturating_add(f);
                until
            });
            out.extend([every_ms as f64, ms(until_ms)]);
        }
    }
    Ok(out)
}
