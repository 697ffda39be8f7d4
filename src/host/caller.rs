//! Reading what the caller handed us without ever letting a JS exception
//! unwind through wasm frames: that would leak the shadow stack and, after a
//! few hundred calls, break the module. Whatever can run the caller's code
//! (getters on `init` or on option arrays, a host object that is not what it
//! claims) is imported with `catch`; a hook's or a carrier's promise is
//! adopted by one of the executor's own before anything awaits it
//! (js/src/executor.js).

use alloc::string::String;
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use super::bind::get;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Object, js_name = assign)]
    pub fn assign(target: &Object, source: &JsValue) -> Result<JsValue, JsValue>;

    /// An object's own enumerable keys (a Proxy's `ownKeys` trap may throw).
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    pub fn keys(object: &JsValue) -> Result<Array, JsValue>;

    /// A copy whose elements are plain values (getters run once, here).
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    fn array_from(items: &JsValue) -> Result<Array, JsValue>;
}

/// The elements of a caller's array of at most `max` elements, read once;
/// `None` for anything else (not an array, too long, a throwing element).
pub fn list(v: &JsValue, max: u32) -> Option<Array> {
    let len = Array::is_array(v).then(|| get(v, "length").as_f64())??;
    if len > f64::from(max) {
        return None;
    }
    array_from(v).ok()
}

/// Refuses an own key of `js` that `known` does not accept, with a
/// `TypeError` naming it; a Proxy whose key listing throws rejects with its
/// own error.
pub fn only_known(js: &JsValue, object: &str, known: impl Fn(&str) -> bool) -> Result<(), JsValue> {
    for key in keys(js)?.iter() {
        let key = key.as_string().unwrap_or_default();
        if !known(&key) {
            let mut message = String::from("saferetry: `");
            message.push_str(&key);
            message.push_str("` is not an option of `");
            message.push_str(object);
            message.push_str("` (see the README's option table)");
            return Err(js_sys::TypeError::new(&message).into());
        }
    }
    Ok(())
}
