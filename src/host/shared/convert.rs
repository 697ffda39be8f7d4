//! The engine's results as JS values: states for `subscribe`, outcomes
//! (with their reports), stats and `onRetry`'s argument, written as JSON
//! text (`crate::json`) and made objects by the host's `JSON.parse`. The
//! policy's types carry the serde derives; what only the host shows is
//! described here.

use alloc::string::String;
use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::json;
use crate::policy::number::opt_ms;
use crate::policy::reason::Reason;
use crate::policy::report::Report;
use crate::policy::state::{phase_message, Phase};

/// `value` as a plain JS value: `None` is `null` (a `try-later` state's
/// unknown `retryAt`); every other optional field is skipped when absent.
/// The text is ours and always JSON, so parsing it cannot fail; if it ever
/// did, the error itself is what JS receives.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    js_sys::JSON::parse(&json::to_string(value)).unwrap_or_else(|e| e)
}

/// The outcome's data: `{ kind, reason, message, retryAt?, notBefore?, report }`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Outcome<'a> {
    kind: &'static str,
    reason: Reason,
    message: &'static str,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    retry_at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    not_before: Option<u64>,
    report: &'a Report,
}

/// The outcome's data as JSON text, which core.js parses when it is read.
pub fn outcome(phase: &Phase, r: &Report) -> String {
    json::to_string(&Outcome {
        kind: phase.name(),
        reason: r.reason,
        message: phase_message(phase, r.reason),
        retry_at: r.retry_at,
        not_before: r.not_before,
        report: r,
    })
}
