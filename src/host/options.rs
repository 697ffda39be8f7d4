//! Reads a JS options object into policy data. Types are checked here
//! (`TypeError`); ranges in `policy::options` (`RangeError`).

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Function;
use wasm_bindgen::{JsCast, JsValue};

use super::bind::get;
use super::caller::{list, only_known};
use super::glue::Held;
use super::leased::Exchange;
use crate::policy::body::ResponseBody;
use crate::policy::classify::RetryOn;
use crate::policy::options::{check_status, ErrorKind, Flag, Numeric, OptionError, Options, STATUSES};

/// The options that are JS functions or per-call values. The functions
/// are the executor's to hold and call (js/src/attempts.js `keep`,
/// `invoke`): the policy has their numbers.
#[derive(Clone, Default)]
pub struct Hooks {
    pub random: Option<Rc<Held>>,
    pub on_retry: Option<Rc<Held>>,
    pub idempotency_key: Key,
    /// Per call: epoch ms before which no request may start.
    pub not_before: Option<u64>,
    /// The policy's shared budget (rule 9), taken by the policy.
    pub shared: Option<Exchange>,
    /// `fetch`: the transport to use instead of the global `fetch`.
    pub fetch: Option<Rc<Held>>,
}

#[derive(Clone, Default, PartialEq, Eq)]
pub enum Key {
    #[default]
    None,
    Generate,
    Given(String),
}

const OPTIONS: OptionError = OptionError::type_error("options", "an object");
const RETRY_ON: OptionError =
    OptionError::type_error("retryOn", "an object { statuses, timeouts, networkErrors }");
const QUOTA: OptionError = OptionError::type_error(
    "quota",
    "a boolean or an object { capacity, retryCost, timeoutCost, successRefund }",
);
const QUOTA_PER_CALL: OptionError = OptionError::type_error(
    "retry.quota",
    "false (a call may opt out of the policy's shared quota, not bring its own)",
);
const SHARED_ONLY: OptionError = OptionError::type_error(
    "retry.rate/retry.concurrency",
    "set on the policy (they are shared by its calls), not per call",
);
const RATE: OptionError = OptionError::type_error("rate", "an object { requests, perMs = 1000, burst = 1 }");
const NOT_BEFORE: OptionError =
    OptionError::type_error("retry.notBefore", "per call, an epoch time in milliseconds (0..=2^53-1)");
const SHARED: OptionError = OptionError::type_error(
    "shared",
    "an object { exchange(request) => Promise<grant>, fleetSize?, scope?, attach? }, set on the policy",
);
const SHARED_SCOPE: OptionError = OptionError::type_error("shared.scope", "a string");
const RESPONSE_BODY: OptionError =
    OptionError::type_error("responseBody", "\"auto\", \"buffer\" or \"stream\"");
const RANDOM: OptionError = OptionError::type_error("random", "a function returning a number in [0, 1)");
const ON_RETRY: OptionError = OptionError::type_error("onRetry", "a function");
const FETCH: OptionError = OptionError::type_error("fetch", "a function with fetch's signature");
const KEY: OptionError = OptionError::type_error(
    "idempotencyKey",
    "a non-empty string of visible ASCII, or true (per call; only true on a policy)",
);

/// The keys an options object may have besides the numeric ones, and those
/// of its nested objects. Anything else is refused: a misspelled option
/// would otherwise be ignored and its default used without a word.
const TOP_LEVEL_KEYS: [&str; 12] = [
    "responseBody",
    "retryOn",
    "retryAfterSpread",
    "quota",
    "concurrency",
    "rate",
    "random",
    "onRetry",
    "idempotencyKey",
    "notBefore",
    "shared",
    "fetch",
];
const RETRY_ON_KEYS: [&str; 3] = ["statuses", "timeouts", "networkErrors"];

/// `base` and `hooks` overridden by whatever `js` sets. `per_call` allows a
/// literal idempotency key.
pub fn read(
    base: &Options,
    hooks: &Hooks,
    js: &JsValue,
    per_call: bool,
) -> Result<(Options, Hooks), JsValue> {
    let mut o = base.clone();
    let mut h = hooks.clone();
    if js.is_undefined() || js.is_null() {
        return Ok((o, h));
    }
    if !js.is_object() {
        return Err(OPTIONS.into());
    }
    only_known(js, "options", |k| {
        TOP_LEVEL_KEYS.contains(&k) || Numeric::TOP_LEVEL.iter().any(|n| n.key() == k)
    })?;
    let nested = get(js, "retryOn");
    if nested.is_object() {
        only_known(&nested, "retryOn", |k| RETRY_ON_KEYS.contains(&k))?;
    }
    for (object, fields) in [("quota", &Numeric::QUOTA[..]), ("rate", &Numeric::RATE[..])] {
        let nested = get(js, object);
        if nested.is_object() {
            only_known(&nested, object, |k| fields.iter().any(|n| n.key() == k))?;
        }
    }
    numbers(&mut o, js, &Numeric::TOP_LEVEL)?;
    flag(&mut o, js, Flag::RetryAfterSpread)?;
    retry_on(&mut o, &get(js, "retryOn"))?;
    let q = get(js, "quota");
    if per_call && !q.is_undefined() && q.as_bool() != Some(false) {
        return Err(QUOTA_PER_CALL.into());
    }
    quota(&mut o, &q)?;
    limits(&mut o, js, per_call)?;
    for (key, error, hook) in
        [("random", RANDOM, &mut h.random), ("onRetry", ON_RETRY, &mut h.on_retry), ("fetch", FETCH, &mut h.fetch)]
    {
        if let Some(f) = function(&get(js, key), error)? {
            *hook = Some(Rc::new(Held::keep(&f, &JsValue::UNDEFINED)));
        }
    }
    let not_before = get(js, "notBefore");
    if !not_before.is_undefined() {
        let at = not_before.as_f64().filter(|_| per_call).ok_or(NOT_BEFORE)?;
        let ok = (0.0..=9_007_199_254_740_991.0).contains(&at);
        if !ok {
            return Err(OptionError { kind: ErrorKind::Range, ..NOT_BEFORE }.into());
        }
        h.not_before = Some(at as u64);
    }
    let body = get(js, "responseBody");
    if !body.is_undefined() {
        o.response_body = body.as_string().and_then(|s| ResponseBody::parse(&s)).ok_or(RESPONSE_BODY)?;
    }
    let key = get(js, "idempotencyKey");
    if !key.is_undefined() {
        h.idempotency_key = idempotency_key(&key, per_call)?;
    }
    let shared = get(js, "shared");
    if !shared.is_undefined() {
        if per_call || !shared.is_object() {
            return Err(SHARED.into());
        }
        // An interface, not an options bag: a carrier may have members of
        // its own (state, helpers); only these are read.
        numbers(&mut o, &shared, &[Numeric::FleetSize])?;
        let attach = function(&get(&shared, "attach"), SHARED)?;
        let function = function(&get(&shared, "exchange"), SHARED)?.ok_or(SHARED)?;
        let scope = get(&shared, "scope");
        let scope = if scope.is_undefined() { None } else { Some(scope.as_string().ok_or(SHARED_SCOPE)?) };
        // Held by the executor, each to be called as `shared`'s method.
        let function = Rc::new(Held::keep(&function, &shared));
        let attach = attach.map(|f| Rc::new(Held::keep(&f, &shared)));
        h.shared = Some(Exchange { function, attach, scope });
    }
    Ok((o, h))
}

/// `concurrency` and `rate` belong to the policy: they are what its calls share.
fn limits(o: &mut Options, js: &JsValue, per_call: bool) -> Result<(), OptionError> {
    let rate = get(js, "rate");
    let concurrency = get(js, "concurrency");
    if per_call && !(rate.is_undefined() && concurrency.is_undefined()) {
        return Err(SHARED_ONLY);
    }
    numbers(o, js, &[Numeric::Concurrency])?;
    if rate.is_undefined() {
        return Ok(());
    }
    if !rate.is_object() {
        return Err(RATE);
    }
    if get(&rate, "requests").is_undefined() {
        return Err(Numeric::RateRequests.type_error());
    }
    numbers(o, &rate, &Numeric::RATE)
}

fn numbers(o: &mut Options, js: &JsValue, fields: &[Numeric]) -> Result<(), OptionError> {
    for &field in fields {
        let v = get(js, field.key());
        if v.is_undefined() {
            continue;
        }
        let n = v.as_f64().ok_or(field.type_error())?;
        o.set(field, n)?;
    }
    Ok(())
}

fn flag(o: &mut Options, js: &JsValue, flag: Flag) -> Result<(), OptionError> {
    let v = get(js, flag.key());
    if !v.is_undefined() {
        o.set_flag(flag, v.as_bool().ok_or(flag.type_error())?);
    }
    Ok(())
}

fn retry_on(o: &mut Options, js: &JsValue) -> Result<(), OptionError> {
    if js.is_undefined() {
        return Ok(());
    }
    if !js.is_object() {
        return Err(RETRY_ON);
    }
    let statuses = get(js, "statuses");
    if !statuses.is_undefined() {
        let array = list(&statuses, 1000).ok_or(STATUSES)?;
        let mut list = Vec::new();
        for v in array.iter() {
            list.push(check_status(v.as_f64().ok_or(STATUSES)?)?);
        }
        o.retry_on = RetryOn::new(&list, o.retry_on.timeouts, o.retry_on.network_errors);
    }
    flag(o, js, Flag::RetryOnTimeouts)?;
    flag(o, js, Flag::RetryOnNetworkErrors)
}

fn quota(o: &mut Options, js: &JsValue) -> Result<(), OptionError> {
    if js.is_undefined() {
        return Ok(());
    }
    match js.as_bool() {
        Some(false) => o.quota = None,
        Some(true) => o.quota = Some(o.quota.unwrap_or_default()),
        None if js.is_object() => {
            o.quota = Some(o.quota.unwrap_or_default());
            numbers(o, js, &Numeric::QUOTA)?;
        }
        None => return Err(QUOTA),
    }
    Ok(())
}

fn function(v: &JsValue, error: OptionError) -> Result<Option<Function>, OptionError> {
    if v.is_undefined() {
        return Ok(None);
    }
    v.dyn_ref::<Function>().cloned().map(Some).ok_or(error)
}

fn idempotency_key(v: &JsValue, per_call: bool) -> Result<Key, OptionError> {
    match (v.as_bool(), v.as_string()) {
        (Some(true), _) => Ok(Key::Generate),
        (Some(false), _) => Ok(Key::None),
        (_, Some(s)) if per_call => {
            let visible = !s.is_empty() && s.len() <= 255 && s.bytes().all(|b| (0x21..=0x7e).contains(&b));
            if visible {
                Ok(Key::Given(s))
            } else {
                Err(OptionError { kind: ErrorKind::Range, ..KEY })
            }
        }
        _ => Err(KEY),
    }
}
