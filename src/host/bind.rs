//! Host globals bound directly (not through `window`), so one build runs in
//! windows, workers, Node, Deno, Bun and workerd; and small helpers for
//! reading plain JS objects.

use alloc::string::String;
use js_sys::Reflect;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
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
