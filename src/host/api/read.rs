//! The option reader's JavaScript side (`policy::schema`): a caller's
//! object is read in one crossing per object — js/src/options.js reads
//! the keys a schema names (through `try`, so a getter that throws reads
//! as absent, and inherited ones too) and lists the object's own keys the
//! schema does not know — and a refusal becomes the `TypeError` or
//! `RangeError` that file's one table words (no message is compiled into a
//! module). The default module and the browser's carry it: a policy's
//! options, a call's, and, through [`check_options`], every other options
//! object (a poll's spec, the outbox's, `redisBudget`'s — their modules
//! take the values checked and carry no reader — and those of the entries
//! that keep no Rust state).

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Array;
use wasm_bindgen::prelude::*;

use crate::host::shared::bind::get;
use crate::host::shared::caller::array_from;
use crate::policy::schema::{self, describe, Class, Failure, Refusal, Schema, Source, Value};

#[wasm_bindgen]
extern "C" {
    /// js/src/options.js's `reader` (core.js's glue has its members too).
    pub type Reader;

    /// `fields(object, names, count, open)`: the values of the first
    /// `count` of `names` (`"a,b,"`) on `object`, then, unless `open`, its
    /// own keys `names` does not list. Throws what listing them threw.
    #[wasm_bindgen(catch, method, structural)]
    fn fields(this: &Reader, object: &JsValue, names: &str, count: u32, open: bool)
        -> Result<Array, JsValue>;

    /// `refusal(class, path, key, kind)`: the error for a refused value
    /// (`class`: 0 an unknown key, 1 a `TypeError`, 2 a `RangeError`;
    /// `kind`: what it accepts, as `schema::describe` writes it).
    #[wasm_bindgen(method, structural)]
    fn refusal(this: &Reader, class: u8, path: &str, key: &str, kind: &str) -> JsValue;
}

impl Source for Reader {
    type Value = JsValue;
    type Thrown = JsValue;
    type Read = Array;

    fn is_undefined(&self, v: &JsValue) -> bool {
        v.is_undefined()
    }

    fn is_null(&self, v: &JsValue) -> bool {
        v.is_null()
    }

    fn number(&self, v: &JsValue) -> Option<f64> {
        v.as_f64()
    }

    fn boolean(&self, v: &JsValue) -> Option<bool> {
        v.as_bool()
    }

    fn text(&self, v: &JsValue) -> Option<String> {
        v.as_string()
    }

    fn is_function(&self, v: &JsValue) -> bool {
        v.is_function()
    }

    fn is_object(&self, v: &JsValue) -> bool {
        v.is_object()
    }

    fn fields(
        &self,
        object: &JsValue,
        names: &'static str,
        count: usize,
        open: bool,
    ) -> Result<Array, JsValue> {
        Reader::fields(self, object, names, u32::try_from(count).unwrap_or(u32::MAX), open)
    }

    fn at(&self, read: &Array, i: usize) -> JsValue {
        read.get(u32::try_from(i).unwrap_or(u32::MAX))
    }

    fn key(&self, read: &Array, i: usize) -> Option<String> {
        self.at(read, i).as_string()
    }

    fn length(&self, v: &JsValue) -> Option<f64> {
        Array::is_array(v).then(|| get(v, "length").as_f64()).flatten()
    }

    fn items(&self, v: &JsValue) -> Option<Array> {
        array_from(v).ok()
    }
}

impl Reader {
    /// The error a refusal is, worded by the glue.
    fn error(&self, r: &Refusal) -> JsValue {
        let mut kind = String::new();
        describe(&r.kind, &mut kind);
        let class = match r.class {
            Class::Unknown => 0,
            Class::Type => 1,
            Class::Range => 2,
        };
        self.refusal(class, &r.path, &r.key, &kind)
    }

    /// What reading failed with, as the caller sees it.
    pub fn failure(&self, f: Failure<JsValue>) -> JsValue {
        match f {
            Failure::Refused(r) => self.error(&r),
            Failure::Thrown(e) => e,
        }
    }

    /// `schema::read`, failing with the error a caller sees.
    pub fn read(
        &self,
        schema: &'static Schema,
        object: &JsValue,
        path: &str,
        per_call: bool,
    ) -> Result<Vec<Value<JsValue>>, JsValue> {
        schema::read(self, schema, object, path, per_call).map_err(|f| self.failure(f))
    }
}

/// A value read as JavaScript has it: a number, a boolean, a word or a
/// text as a string, an object or function as given, `undefined` when
/// absent; a list as an array of its items, each object among them as
/// the array of its fields' values (what was read: none of its getters is
/// read again).
fn to_js(v: &Value<JsValue>) -> JsValue {
    match v {
        Value::Absent => JsValue::UNDEFINED,
        // Every integer option is at most 2^53: exact.
        Value::Int(n) => JsValue::from_f64(*n as f64),
        Value::Num(n) => JsValue::from_f64(*n),
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Word(w) => JsValue::from_str(w),
        Value::Text(s) => JsValue::from_str(s),
        Value::Raw(v) | Value::Object(v, _) => v.clone(),
        Value::List(items) => {
            let out = Array::new();
            for item in items {
                out.push(&item.fields().map_or_else(|| to_js(item), |fields| array(fields).into()));
            }
            out.into()
        }
    }
}

fn array(values: &[Value<JsValue>]) -> Array {
    let out = Array::new();
    for v in values {
        out.push(&to_js(v));
    }
    out
}

/// The options objects `checkOptions` checks, by name: the path their
/// fields' paths start with, their schema, and whether they are a call's:
/// a call's `init.retry` (an outbox checks a send's before it stores
/// anything), a poll's spec (its loop's module carries no reader: the
/// schedule goes there as numbers), the outbox's (nor do its rules': the
/// default module is loaded wherever an outbox is), `redisBudget`'s (nor
/// does the Redis module), and those of the entries that keep no Rust
/// state. The browser's module serves the browsers' (not a server's
/// `redisBudget`, a Worker's `durableBudget` or `OutboxObject`).
fn named(name: &str) -> Option<(&'static str, &'static Schema, bool)> {
    #[cfg(not(feature = "browser"))]
    use crate::policy::outbox::OUTBOX_OBJECT_SEND;
    use crate::policy::outbox::{OUTBOX, OUTBOX_STORE, SEND, SYNC_OUTBOX};
    #[cfg(not(feature = "browser"))]
    use crate::policy::schema::{DURABLE_BUDGET, REDIS_BUDGET};
    use crate::policy::schema::{INSTRUMENT, RETRY_NOW, TAB_BUDGET};
    Some(match name {
        "retry" => ("retry", &crate::policy::options::POLICY, true),
        "poll" => ("poll", &crate::policy::poll::POLL, false),
        "outbox" => ("outbox", &OUTBOX, false),
        "outbox.store" => ("outbox", &OUTBOX_STORE, false),
        "send(init)" => ("send(init)", &SEND, false),
        "tabBudget" => ("tabBudget", &TAB_BUDGET, false),
        "retryNow" => ("retryNow", &RETRY_NOW, false),
        "instrument" => ("instrument", &INSTRUMENT, false),
        "syncOutbox" => ("syncOutbox", &SYNC_OUTBOX, false),
        #[cfg(not(feature = "browser"))]
        "redisBudget" => ("redisBudget", &REDIS_BUDGET, false),
        #[cfg(not(feature = "browser"))]
        "durableBudget" => ("durableBudget", &DURABLE_BUDGET, false),
        #[cfg(not(feature = "browser"))]
        "OutboxObject.send" => ("OutboxObject.send", &OUTBOX_OBJECT_SEND, false),
        _ => return None,
    })
}

/// `checkOptions(name, options, reader)`: the options `name` (`named`)
/// checked, and their values in the schema's order, each default in place
/// of what was left out. Throws the `TypeError` or `RangeError` naming the
/// refused field.
#[wasm_bindgen(js_name = checkOptions)]
pub fn check_options(name: &str, options: &JsValue, reader: &Reader) -> Result<Array, JsValue> {
    let Some((path, schema, per_call)) = named(name) else {
        return Err(js_sys::TypeError::new(name).into());
    };
    Ok(array(&schema::read(reader, schema, options, path, per_call).map_err(|f| reader.failure(f))?))
}
