//! The engine's results as plain JS objects: states for `subscribe`,
//! reports, outcomes.

use js_sys::Array;
use wasm_bindgen::JsValue;

use super::bind::{ms, Obj};
use crate::policy::report::{AttemptRecord, Report};
use crate::policy::state::{message, Phase};

/// A UI state: `{ state, ... }` with what that state needs.
pub fn phase(p: &Phase) -> JsValue {
    let o = Obj::new();
    o.set("state", p.name());
    match *p {
        Phase::Requesting { attempt, max } => {
            o.set("attempt", attempt).set("maxAttempts", max);
        }
        Phase::Waiting { attempt, until_ms, wait_ms, why } => {
            o.set("attempt", attempt)
                .set("until", ms(until_ms))
                .set("waitMs", ms(wait_ms))
                .set("why", why.name());
        }
        Phase::TryLater { retry_at, reason } => {
            o.set("retryAt", retry_at.map_or(JsValue::NULL, ms))
                .set("reason", reason.name())
                .set("message", message(reason));
        }
        Phase::Failed { reason } => {
            o.set("reason", reason.name()).set("message", message(reason));
        }
        Phase::Idle | Phase::Succeeded | Phase::Cancelled => {}
    }
    o.into_js()
}

fn attempt(a: &AttemptRecord) -> JsValue {
    let o = Obj::new();
    o.set("startMs", ms(a.start_ms)).set("durationMs", ms(a.duration_ms));
    o.opt("status", a.status);
    if let Some(e) = &a.error {
        let err = Obj::new();
        err.set("stage", e.stage.name()).set("code", e.code.as_str()).set("name", e.name.as_str());
        o.set("error", err.into_js());
    }
    o.opt("plannedWaitMs", a.planned_wait_ms.map(ms));
    o.opt("waitKind", a.wait_kind.map(|k| k.name()));
    o.opt("retryAfterMs", a.retry_after_ms.map(ms));
    if a.poll {
        o.set("phase", "poll");
    }
    o.into_js()
}

pub fn report(r: &Report) -> JsValue {
    let o = Obj::new();
    o.set("reason", r.reason.name());
    o.opt("retryAt", r.retry_at.map(ms));
    o.set("elapsedMs", ms(r.elapsed_ms));
    o.set("attempts", r.attempts.iter().map(attempt).collect::<Array>());
    if r.retry_after_hidden {
        o.set("retryAfterHidden", true);
    }
    o.opt("snippet", r.snippet.as_deref());
    o.into_js()
}
