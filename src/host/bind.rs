//! Host globals bound directly (not through `window`), so one build runs in
//! windows, workers, Node, Deno, Bun and workerd; and small helpers for
//! reading and writing plain JS objects.

use alloc::string::String;
use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch`.
    #[wasm_bindgen(catch, js_name = fetch)]
    pub fn fetch(input: &JsValue, init: &JsValue) -> Result<Promise, JsValue>;

    /// Returns a number in browsers and workerd, a `Timeout` object in Node.
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(handler: &Function, ms: f64) -> JsValue;

    #[wasm_bindgen(js_name = clearTimeout)]
    pub fn clear_timeout(id: &JsValue);

    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    pub fn date_now() -> f64;

    #[wasm_bindgen(js_namespace = Math, js_name = random)]
    pub fn math_random() -> f64;

    /// Missing outside secure contexts (plain http:// pages): caught.
    #[wasm_bindgen(catch, js_namespace = crypto, js_name = randomUUID)]
    pub fn random_uuid() -> Result<String, JsValue>;
}

/// `obj[key]`, `undefined` when it cannot be read.
pub fn get(obj: &JsValue, key: &str) -> JsValue {
    if !obj.is_object() && !obj.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// `obj[key]` as a string, when it is one.
pub fn get_string(obj: &JsValue, key: &str) -> Option<String> {
    get(obj, key).as_string()
}

/// Builds plain JS objects.
pub struct Obj(pub Object);

impl Obj {
    pub fn new() -> Obj {
        Obj(Object::new())
    }

    pub fn set(&self, key: &str, value: impl Into<JsValue>) -> &Obj {
        // Setting a data property on a fresh plain object cannot fail.
        let _ = Reflect::set(&self.0, &JsValue::from_str(key), &value.into());
        self
    }

    /// Sets `key` only when there is a value.
    pub fn opt<T: Into<JsValue>>(&self, key: &str, value: Option<T>) -> &Obj {
        if let Some(v) = value {
            self.set(key, v);
        }
        self
    }

    pub fn into_js(self) -> JsValue {
        self.0.into()
    }
}

/// Epoch milliseconds as a JS number (exact below 2^53).
pub fn ms(v: u64) -> JsValue {
    JsValue::from_f64(v as f64)
}
