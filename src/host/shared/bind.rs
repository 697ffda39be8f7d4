//! Host globals bound directly (not through `window`), so one build runs in
//! windows, workers, Node, Deno, Bun and workerd; and small helpers for
//! reading plain JS objects.

use alloc::string::String;
use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;

/// Calls a release's `done` (a promise's resolve, which cannot throw):
/// nothing was held, or nothing is left to hold it.
pub fn settled(done: &Function) {
    let _ = done.call0(&JsValue::UNDEFINED);
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    pub fn date_now() -> f64;

    #[wasm_bindgen(js_namespace = Math, js_name = random)]
    pub fn math_random() -> f64;

    /// Every runtime we run in has `globalThis` (`js_sys::global()` would
    /// also probe `self`, `window` and `global`: four imports).
    #[wasm_bindgen(thread_local_v2, js_name = globalThis)]
    static GLOBAL_THIS: JsValue;
}

/// The host's global object.
pub fn global() -> JsValue {
    GLOBAL_THIS.with(JsValue::clone)
}

/// A key from the host's Web Crypto, `crypto.randomUUID()`, called through
/// web-sys's binding of `Crypto`; `None` where the host has none (outside
/// secure contexts: plain http:// pages), checked before the call.
pub fn random_uuid() -> Option<String> {
    let crypto = get(&global(), "crypto");
    let present = get(&crypto, "randomUUID").is_function();
    present.then(|| crypto.unchecked_into::<web_sys::Crypto>().random_uuid())
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
