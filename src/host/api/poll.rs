//! A poll's spec, read for the policy's module: `policy.poll()` checks it
//! at the call (a bad spec throws there, naming the field, and sends
//! nothing), and the poll's own module (`crate::host::extra::poller`, loaded at the
//! first poll) gets it as numbers (`policy::poll::unpack`: the defaults
//! are applied there). The hooks are js/src/poll.js's to call; here only
//! what they are is checked, by `policy::poll::POLL` as every other
//! options object is (`super::read`).

use alloc::vec::Vec;
use wasm_bindgen::{JsCast, JsValue};

use crate::host::operation::glue::Glue;
use super::read::Reader;
use crate::policy::poll::{pack, Spec, POLL};

/// Reads the spec `js`, whose `status` and `verdict` js/src/core.js read
/// (once, in that order, before the rest) for js/src/poll.js, into the
/// numbers the poll's module takes (`policy::poll::unpack`).
pub fn read(glue: &Glue, js: &JsValue, status: JsValue, verdict: JsValue) -> Result<Vec<f64>, JsValue> {
    let reader: &Reader = glue.unchecked_ref();
    let values = reader.read(&POLL, js, "poll", false)?;
    let status = reader.given(&POLL, Spec::Status.into(), status, "poll")?;
    let verdict = reader.given(&POLL, Spec::Verdict.into(), verdict, "poll")?;
    let find = status.raw().is_some_and(JsValue::is_function);
    Ok(pack(&values, find, verdict.raw().is_some()))
}
