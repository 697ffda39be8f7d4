//! Reads a policy's options, or a call's `init.retry`, into policy data:
//! every check is `policy::options::POLICY`'s (`policy::schema`); the
//! JS values among them (functions, the key, `shared`'s members) become
//! the hooks here.

use alloc::rc::Rc;
use alloc::string::String;
use wasm_bindgen::{JsCast, JsValue};

use crate::host::attempt::request::Key;
use crate::host::operation::glue::{Glue, Held};
use super::leased::Exchange;
use super::read::Reader;
use crate::policy::options::{Options, Policy, Shared, POLICY};
use crate::policy::schema::{at, Value};

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

/// `base` and `hooks` overridden by whatever `js` sets, read by the glue
/// (whose `fields` and `refusal` are js/src/options.js's: `super::read`).
/// `per_call`: `js` is a call's `init.retry` (its fields are the call's
/// side of `policy::options::POLICY`).
pub fn read(glue: &Glue, base: &Options, hooks: &Hooks, js: &JsValue, per_call: bool) -> Result<(Options, Hooks), JsValue> {
    let reader: &Reader = glue.unchecked_ref();
    let values = reader.read(&POLICY, js, if per_call { "retry" } else { "" }, per_call)?;
    let mut o = base.clone();
    o.apply(&values);
    let mut h = hooks.clone();
    let value = |f: Policy| at(&values, f);
    for (field, hook) in [(Policy::Random, &mut h.random), (Policy::OnRetry, &mut h.on_retry), (Policy::Fetch, &mut h.fetch)] {
        if let Some(f) = value(field).and_then(Value::raw) {
            *hook = Some(Rc::new(Held::keep(f, &JsValue::UNDEFINED)));
        }
    }
    if let Some(at) = value(Policy::NotBefore).and_then(Value::int) {
        h.not_before = Some(at);
    }
    match value(Policy::IdempotencyKey) {
        Some(Value::Bool(true)) => h.idempotency_key = Key::Generate,
        Some(Value::Bool(false)) => h.idempotency_key = Key::None,
        Some(Value::Text(key)) => h.idempotency_key = Key::Given(key.clone()),
        _ => {}
    }
    if let Some(Value::Object(shared, fields)) = value(Policy::Shared) {
        let member = |f: Shared| at(fields, f).and_then(Value::raw);
        // Held by the executor, each to be called as `shared`'s method.
        let keep = |f: &JsValue| Rc::new(Held::keep(f, shared));
        let scope = at(fields, Shared::Scope).and_then(Value::text).map(String::from);
        if let Some(exchange) = member(Shared::Exchange) {
            h.shared = Some(Exchange { function: keep(exchange), attach: member(Shared::Attach).map(keep), scope });
        }
    }
    Ok((o, h))
}
