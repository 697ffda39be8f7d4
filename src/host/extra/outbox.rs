//! The outbox's rules as JavaScript calls them (`OutboxRules`): the glue in
//! js/src/outbox.js stores, sends and schedules; every decision it acts on
//! comes from here (`policy::outbox`). Values from a store are read
//! defensively: a corrupt entry is a `TypeError` naming its field, never a
//! trap.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Array;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::host::shared::bind::{get, get_string, math_random};
use crate::host::shared::caller::list;
use crate::host::shared::convert::to_js;
use crate::policy::classify::Stage;
use crate::policy::limits::{timer_ms, MAX_TIMER_MS, REPLAY_BYTES};
use crate::policy::number::{floor_in, integer_in, opt_ms};
use crate::policy::options::OptionError;
use crate::policy::outbox::{self, Config, Durable, Ended, Entry, Next, Outcome, Progress, Write};
use crate::policy::outbox::{DEFAULT_TTL_MS, MAX_TTL_MS};
use crate::policy::reason::Reason;

/// The largest epoch millisecond a JS number holds exactly.
const MAX_MS: u64 = (1 << 53) - 1;
/// Header names read from one request, at most.
const MAX_HEADERS: u32 = 1_000;

const KIND: OptionError =
    OptionError::type_error("outcome.kind", "\"succeeded\", \"try-later\", \"failed\" or \"cancelled\"");
const HEADERS: OptionError =
    OptionError::type_error("request.headers", "an array of at most 1000 header names");
const METHOD: OptionError = OptionError::type_error("request.method", "a string");
const URL: OptionError = OptionError::type_error("request.url", "a string");
const BODY_BYTES: OptionError =
    OptionError::type_error("request.bodyBytes", "null or an integer in 0..=2^53-1");
const RETRY_AT: OptionError =
    OptionError::type_error("entry.retryAt", "an epoch time in milliseconds (0..=2^53-1)");
const EXPIRES_AT: OptionError =
    OptionError::type_error("entry.expiresAt", "an epoch time in milliseconds (0..=2^53-1)");
const SENDS: OptionError = OptionError::type_error("entry.sends", "an integer in 0..=4294967295");
const ENTRIES: OptionError = OptionError::type_error("entries", "an array of at most 100000 entries");
const NOW: OptionError = OptionError::type_error("now", "an epoch time in milliseconds (0..=2^53-1)");

fn integer(v: &JsValue, max: u64, error: OptionError) -> Result<u64, OptionError> {
    v.as_f64().and_then(|n| integer_in(n, 0, max)).ok_or(error)
}

/// An optional epoch time of an outcome (absent when unknown).
fn opt_time(v: &JsValue) -> Option<u64> {
    v.as_f64().and_then(|n| floor_in(n, 0, MAX_MS))
}

fn time(v: f64, error: OptionError) -> Result<u64, OptionError> {
    floor_in(v, 0, MAX_MS).ok_or(error)
}

/// An outcome as `policy.run` resolves it: `{ kind, reason, retryAt?, notBefore?, report }`.
fn outcome_of(js: &JsValue) -> Result<Outcome, OptionError> {
    let ended = get_string(js, "kind").as_deref().and_then(Ended::parse).ok_or(KIND)?;
    let attempts = get(&get(js, "report"), "attempts");
    let last = Array::is_array(&attempts)
        .then(|| get(&attempts, "length").as_f64())
        .flatten()
        .filter(|&n| n >= 1.0)
        .map_or(JsValue::UNDEFINED, |n| Array::from(&attempts).at(n as i32 - 1));
    let status = get(&last, "status").as_f64().and_then(|s| integer_in(s, 0, 999)).map(|s| s as u16);
    let stage = match get_string(&get(&last, "error"), "stage") {
        Some(s) if s == Stage::NotSent.name() => Some(Stage::NotSent),
        Some(_) => Some(Stage::MaybeDelivered),
        None => None,
    };
    Ok(Outcome {
        ended,
        progress: Progress::of(status, stage),
        retry_at: opt_time(&get(js, "retryAt")),
        not_before: opt_time(&get(js, "notBefore")),
        body_refused: get_string(js, "reason").as_deref() == Some(Reason::BodyNotReplayable.name()),
    })
}

/// `{ method, url, headers: [names], bodyBytes: number | null }`.
fn write_of(js: &JsValue) -> Result<Write, OptionError> {
    let method = get_string(js, "method").ok_or(METHOD)?;
    let url = get_string(js, "url").ok_or(URL)?;
    let names: Vec<String> = list(&get(js, "headers"), MAX_HEADERS)
        .ok_or(HEADERS)?
        .iter()
        .map(|v| v.as_string().ok_or(HEADERS))
        .collect::<Result<_, _>>()?;
    let body = get(js, "bodyBytes");
    let body_bytes = if body.is_null() { None } else { Some(integer(&body, MAX_MS, BODY_BYTES)?) };
    Ok(Write::of(&method, names.iter().map(String::as_str), &url, body_bytes))
}

/// How long one operation may take: a call's own valid `totalMs`, else
/// its policy's (a bad call option is refused before: js/src/outbox.js).
fn hold_of(policy_total: &JsValue, call_total: &JsValue) -> u64 {
    let valid = |v: &JsValue| v.as_f64().and_then(|n| integer_in(n, 1, MAX_TIMER_MS));
    valid(call_total).or_else(|| valid(policy_total)).unwrap_or(MAX_TIMER_MS)
}

fn entry_of(js: &JsValue) -> Result<Entry, OptionError> {
    Ok(Entry {
        retry_at: integer(&get(js, "retryAt"), MAX_MS, RETRY_AT)?,
        expires_at: integer(&get(js, "expiresAt"), MAX_MS, EXPIRES_AT)?,
        sends: u32::try_from(integer(&get(js, "sends"), u64::from(u32::MAX), SENDS)?).map_err(|_| SENDS)?,
    })
}

/// An entry's schedule as the glue stores it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Schedule {
    #[serde(serialize_with = "crate::policy::number::ms")]
    retry_at: u64,
    #[serde(serialize_with = "crate::policy::number::ms")]
    expires_at: u64,
    sends: u32,
}

impl From<Entry> for Schedule {
    fn from(e: Entry) -> Schedule {
        Schedule { retry_at: e.retry_at, expires_at: e.expires_at, sends: e.sends }
    }
}

/// `keep`'s answer: `{ kept: true, entry }` or `{ kept: false, notKept }`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Kept {
    kept: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<Schedule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_kept: Option<&'static str>,
}

/// `plan`'s answer: indices into the entries given (`u32`: a `usize`
/// goes through serde's `u64`, whose range check formats an error).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Plan {
    #[serde(serialize_with = "opt_index")]
    next: Option<u32>,
    expired: Vec<u32>,
    corrupt: Vec<u32>,
    #[serde(serialize_with = "opt_ms")]
    wake_at: Option<u64>,
    /// The timer's delay to `wake_at`, as a host timer takes it.
    #[serde(serialize_with = "opt_ms")]
    wake_in_ms: Option<u64>,
}

/// `null` when there is none (not skipped: the glue reads `next === null`).
fn opt_index<S: serde::Serializer>(v: &Option<u32>, s: S) -> Result<S::Ok, S::Error> {
    v.serialize(s)
}

/// `ahead`'s answer: `{ entry }` to write before the first send,
/// `{ notKept }` when the write does not qualify, `{}` when not asked.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ahead {
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<Schedule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_kept: Option<&'static str>,
}

/// `after`'s answer: `{ state, entry? }` (`entry` when kept).
#[derive(Serialize)]
struct After {
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<Schedule>,
}

/// An outbox's rules, under its options.
#[wasm_bindgen]
pub struct OutboxRules {
    config: Config,
}

#[wasm_bindgen]
impl OutboxRules {
    /// The options of `outbox()`, as the default module's reader checked
    /// them (`policy::outbox::OUTBOX`, each default in place: js/src/outbox.js):
    /// `ttl` in ms; `credentials`: the caller's opt-in to writing
    /// credentials to storage; `durable`: when a write goes into the store,
    /// unless a send says otherwise.
    #[wasm_bindgen(constructor)]
    pub fn new(ttl: f64, credentials: bool, durable: &str) -> OutboxRules {
        let ttl = floor_in(ttl, 1, MAX_TTL_MS).unwrap_or(DEFAULT_TTL_MS);
        OutboxRules { config: Config::of(ttl, credentials, durable) }
    }

    /// Whether `request` is written to the store before its first send,
    /// and its schedule: `durable` is the send's own, checked (or none);
    /// `policyTotalMs` and `callTotalMs` the operation's bound, as the
    /// policy and the call (`retry.totalMs`) give it.
    pub fn ahead(
        &self,
        request: JsValue,
        durable: Option<String>,
        now: f64,
        policy_total_ms: JsValue,
        call_total_ms: JsValue,
    ) -> Result<JsValue, JsValue> {
        let durable = durable.as_deref().and_then(Durable::parse);
        let hold = hold_of(&policy_total_ms, &call_total_ms);
        let answer = match outbox::ahead(&self.config, durable, &write_of(&request)?, time(now, NOW)?, hold) {
            Ok(entry) => Ahead { entry: entry.map(Schedule::from), not_kept: None },
            Err(why) => Ahead { entry: None, not_kept: Some(why.name()) },
        };
        Ok(to_js(&answer))
    }

    /// Whether a finished operation (`outcome`) of `request` is kept, and
    /// its schedule.
    pub fn keep(&self, request: JsValue, outcome: JsValue, now: f64) -> Result<JsValue, JsValue> {
        let (write, outcome) = (write_of(&request)?, outcome_of(&outcome)?);
        let answer = match outbox::keep(&self.config, &write, &outcome, time(now, NOW)?, math_random()) {
            Ok(entry) => Kept { kept: true, entry: Some(entry.into()), not_kept: None },
            Err(why) => Kept { kept: false, entry: None, not_kept: Some(why.name()) },
        };
        Ok(to_js(&answer))
    }

    /// The largest body kept, in bytes (the glue reads no further).
    #[wasm_bindgen(getter, js_name = bodyLimit)]
    pub fn body_limit(&self) -> f64 {
        REPLAY_BYTES as f64
    }

    /// The name a write not kept because the store failed is reported with.
    #[wasm_bindgen(getter, js_name = storageFailed)]
    pub fn storage_failed(&self) -> String {
        String::from(outbox::NotKept::Storage.name())
    }

    /// What a drain does now over `entries` (their schedules). An entry
    /// whose schedule cannot be read (a store written by something else)
    /// is listed in `corrupt`, and the plan covers the others.
    pub fn plan(&self, entries: JsValue, now: f64, online: bool) -> Result<JsValue, JsValue> {
        let (mut good, mut at, mut corrupt) = (Vec::new(), Vec::new(), Vec::new());
        for (i, e) in list(&entries, 100_000).ok_or(ENTRIES)?.iter().enumerate() {
            match entry_of(&e) {
                Ok(entry) => {
                    good.push(entry);
                    at.push(i as u32);
                }
                Err(_) => corrupt.push(i as u32),
            }
        }
        let now = time(now, NOW)?;
        let p = outbox::plan(&good, now, online);
        let wake_in_ms = p.wake_at.map(|at| timer_ms(at.saturating_sub(now)));
        // Indices into `good`, mapped back to the caller's (at most 100000: they fit in u32).
        let index = |i: usize| at.get(i).copied().unwrap_or(0);
        let expired = p.expired.into_iter().map(index).collect();
        Ok(to_js(&Plan { next: p.next.map(index), expired, corrupt, wake_at: p.wake_at, wake_in_ms }))
    }

    /// The entry's schedule as claimed for one more send.
    pub fn claim(&self, entry: JsValue) -> Result<JsValue, JsValue> {
        Ok(to_js(&Schedule::from(outbox::claim(&entry_of(&entry)?))))
    }

    /// What the (claimed) entry becomes after a re-send ended in `outcome`.
    pub fn after(&self, entry: JsValue, outcome: JsValue, now: f64) -> Result<JsValue, JsValue> {
        let next = outbox::after(&entry_of(&entry)?, &outcome_of(&outcome)?, time(now, NOW)?, math_random());
        let entry = match next {
            Next::Kept(e) => Some(e.into()),
            _ => None,
        };
        Ok(to_js(&After { state: next.name(), entry }))
    }
}
