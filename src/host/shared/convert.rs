//! The engine's results as JS values. The default module hands an
//! operation's outcome (with its report), a state for `subscribe`,
//! `onRetry`'s argument and the stats over as numbers — codes, times,
//! counts; `NaN` for an absent value — and the few strings of a report
//! joined in one (their lengths among the numbers), which js/src/shape.js
//! makes into the objects index.d.ts documents, through one table of
//! names and sentences: every value is decided here. The other modules
//! write theirs as JSON text (`crate::json`), made objects by the host's
//! `JSON.parse` ([`to_js`]).

use alloc::string::String;
use alloc::vec::Vec;
#[cfg(any(feature = "authority", feature = "outbox"))]
use {crate::json, serde::Serialize, wasm_bindgen::JsValue};

use crate::policy::budget::{Mode, Stats};
use crate::policy::classify::{Stage, WaitKind};
use crate::policy::rate_limit::FloorHeader;
use crate::policy::reason::Reason;
use crate::policy::report::Report;
use crate::policy::state::{Phase, WaitWhy};

/// `value` as a plain JS value: `None` is `null` (a `try-later` state's
/// unknown `retryAt`); every other optional field is skipped when absent.
/// The text is ours and always JSON, so parsing it cannot fail; if it ever
/// did, the error itself is what JS receives. (The fleet's module and the
/// outbox's: the default module writes numbers.)
#[cfg(any(feature = "authority", feature = "outbox"))]
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    js_sys::JSON::parse(&json::to_string(value)).unwrap_or_else(|e| e)
}

/// An absent number.
const NONE: f64 = f64::NAN;

fn opt(v: Option<u64>) -> f64 {
    v.map_or(NONE, |v| v as f64)
}

fn code(v: Option<u8>) -> f64 {
    v.map_or(NONE, f64::from)
}

/// A string's length as JS counts it (UTF-16 units).
fn units(s: &str) -> f64 {
    s.chars().map(char::len_utf16).sum::<usize>() as f64
}

/// The codes js/src/shape.js's tables are indexed by (its `STATES`,
/// `REASONS`, `MESSAGES`, `WHY`, `STAGES`, `FLOORS`, `MODES`).
fn state(p: &Phase) -> u8 {
    match p {
        Phase::Idle => 0,
        Phase::Requesting { .. } => 1,
        Phase::Waiting { .. } => 2,
        Phase::Succeeded => 3,
        Phase::TryLater { .. } => 4,
        Phase::Failed { .. } => 5,
        Phase::Cancelled => 6,
    }
}

/// A terminal state's sentence: its reason's, or (19) the one for a
/// redirect that was deliberately not followed (`policy::state::phase_message`).
fn message(p: &Phase, r: Reason) -> f64 {
    f64::from(if matches!(p, Phase::Failed { redirect: true, .. }) { 19 } else { r as u8 })
}

fn why(w: WaitWhy) -> f64 {
    f64::from(w as u8)
}

fn wait_kind(k: WaitKind) -> u8 {
    match k {
        WaitKind::Backoff => 0,
        WaitKind::Throttle => 1,
        WaitKind::RetryAfter(_) => 2,
    }
}

fn stage(s: Stage) -> u8 {
    s as u8
}

fn floor(h: FloorHeader) -> u8 {
    h as u8
}

fn mode(m: Mode) -> u8 {
    m as u8
}

/// An outcome: `[state, reason, message, retryAt, notBefore]`, then its
/// report: `[elapsedMs, responseBody (0 buffer, 1 stream), handedOverMs,
/// retryAfterHidden, budget, snippet's length, attempts]` and per attempt
/// `[startMs, durationMs, status, stage, code's length, name's length,
/// plannedWaitMs, waitKind, retryAfterMs, floorHeader, poll]`; the
/// snippet, then each error's code and name, in `text`.
pub fn outcome(p: &Phase, r: &Report, out: &mut Vec<f64>, text: &mut String) {
    let snippet = r.snippet.as_deref();
    out.extend([f64::from(state(p)), f64::from(r.reason as u8), message(p, r.reason), opt(r.retry_at)]);
    out.extend([
        opt(r.not_before),
        r.elapsed_ms as f64,
        code(r.streamed.map(u8::from)),
        opt(r.handed_over_ms),
    ]);
    out.extend([
        f64::from(u8::from(r.retry_after_hidden)),
        code(r.budget.map(mode)),
        snippet.map_or(NONE, units),
    ]);
    out.push(r.attempts.len() as f64);
    text.push_str(snippet.unwrap_or_default());
    for a in &r.attempts {
        let error = a.error.as_ref();
        out.extend([a.start_ms as f64, a.duration_ms as f64, opt(a.status.map(u64::from))]);
        out.extend([code(error.map(|e| stage(e.stage))), error.map_or(NONE, |e| units(&e.code))]);
        out.extend([
            error.map_or(NONE, |e| units(&e.name)),
            opt(a.planned_wait_ms),
            code(a.wait_kind.map(wait_kind)),
        ]);
        out.extend([opt(a.retry_after_ms), code(a.floor_header.map(floor)), f64::from(u8::from(a.poll))]);
        if let Some(e) = error {
            text.push_str(&e.code);
            text.push_str(&e.name);
        }
    }
}

/// A state: `[state, attempt, maxAttempts, until, waitMs, why, retryAt,
/// reason, message]`, each absent where the state has none.
pub fn phase(p: &Phase, out: &mut Vec<f64>) {
    let mut n = [NONE; 9];
    n[0] = f64::from(state(p));
    let reason = match *p {
        Phase::Requesting { attempt, max } => {
            n[1] = f64::from(attempt);
            n[2] = f64::from(max);
            None
        }
        Phase::Waiting { attempt, until_ms, wait_ms, why: w } => {
            n[1] = f64::from(attempt);
            n[3] = until_ms as f64;
            n[4] = wait_ms as f64;
            n[5] = why(w);
            None
        }
        Phase::TryLater { retry_at, reason } => {
            n[6] = opt(retry_at);
            Some(reason)
        }
        Phase::Failed { reason, .. } => Some(reason),
        Phase::Idle | Phase::Succeeded | Phase::Cancelled => None,
    };
    if let Some(r) = reason {
        n[7] = f64::from(r as u8);
        n[8] = message(p, r);
    }
    out.extend(n);
}

/// The counters: `[operations, attempts ×5, retries, exhausted, throttled,
/// queued, inFlight, quotaLevel, client]`; `client`: the relay's number
/// for the shared budget's leased client (`api::leased::Leased::handle`).
pub fn stats(s: &Stats, quota_level: Option<u32>, client: Option<u32>, out: &mut Vec<f64>) {
    out.push(s.operations.get() as f64);
    out.extend(s.attempts_histogram.iter().map(|c| c.get() as f64));
    out.extend([s.retries.get() as f64, s.exhausted.get() as f64, s.throttled.get() as f64]);
    out.extend([f64::from(s.queued.get()), f64::from(s.in_flight.get())]);
    out.push(opt(quota_level.map(u64::from)));
    out.push(opt(client.map(u64::from)));
}
