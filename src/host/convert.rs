//! The engine's results as JSON text for JavaScript: states for
//! `subscribe`, reports, outcomes.

use alloc::string::String;

use super::json::Json;
use crate::policy::report::{AttemptRecord, Report};
use crate::policy::state::{message, phase_message, Phase};

/// A UI state: `{ state, ... }` with what that state needs.
pub fn phase(p: &Phase) -> String {
    let mut o = Json::object();
    o.str("state", p.name());
    match *p {
        Phase::Requesting { attempt, max } => {
            o.num("attempt", attempt.into()).num("maxAttempts", max.into());
        }
        Phase::Waiting { attempt, until_ms, wait_ms, why } => {
            o.num("attempt", attempt.into())
                .num("until", until_ms)
                .num("waitMs", wait_ms)
                .str("why", why.name());
        }
        Phase::TryLater { retry_at, reason } => {
            o.num_or_null("retryAt", retry_at);
            o.str("reason", reason.name()).str("message", message(reason));
        }
        Phase::Failed { reason, .. } => {
            o.str("reason", reason.name()).str("message", phase_message(p, reason));
        }
        Phase::Idle | Phase::Succeeded | Phase::Cancelled => {}
    }
    o.end()
}

fn attempt(a: &AttemptRecord) -> String {
    let mut o = Json::object();
    o.num("startMs", a.start_ms).num("durationMs", a.duration_ms).opt_num("status", a.status.map(u64::from));
    if let Some(e) = &a.error {
        let err = Json::object().str("stage", e.stage.name()).str("code", &e.code).str("name", &e.name).end();
        o.raw("error", &err);
    }
    o.opt_num("plannedWaitMs", a.planned_wait_ms);
    if let Some(kind) = a.wait_kind {
        o.str("waitKind", kind.name());
    }
    o.opt_num("retryAfterMs", a.retry_after_ms);
    if let Some(header) = a.floor_header {
        o.str("floorHeader", header.name());
    }
    if a.poll {
        o.str("phase", "poll");
    }
    o.end()
}

pub fn report(r: &Report) -> String {
    let mut o = Json::object();
    o.str("reason", r.reason.name()).opt_num("retryAt", r.retry_at).num("elapsedMs", r.elapsed_ms);
    o.raw("attempts", &Json::array(r.attempts.iter().map(attempt)));
    if let Some(streamed) = r.streamed {
        o.str("responseBody", if streamed { "stream" } else { "buffer" });
    }
    if r.retry_after_hidden {
        o.flag("retryAfterHidden");
    }
    if let Some(s) = &r.snippet {
        o.str("snippet", s);
    }
    o.end()
}

/// The outcome's data: `{ kind, reason, message, retryAt?, notBefore?, report }`.
pub fn outcome(phase: &Phase, r: &Report) -> String {
    let mut o = Json::object();
    o.str("kind", phase.name()).str("reason", r.reason.name()).str("message", phase_message(phase, r.reason));
    o.opt_num("retryAt", r.retry_at).opt_num("notBefore", r.not_before).raw("report", &report(r));
    o.end()
}
