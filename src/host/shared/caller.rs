//! Reading what the caller handed us without ever letting a JS exception
//! unwind through wasm frames: that would leak the shadow stack and, after a
//! few hundred calls, break the module. Whatever can run the caller's code
//! (getters on `init` or on option arrays, a host object that is not what it
//! claims) is imported with `catch`; a hook's or a carrier's promise is
//! adopted by one of the executor's own before anything awaits it
//! (js/src/executor.js).

use js_sys::Array;
use wasm_bindgen::prelude::*;

#[cfg(any(feature = "authority", feature = "outbox"))]
use super::bind::get;

#[wasm_bindgen]
extern "C" {
    /// A copy whose elements are plain values (getters run once, here).
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    pub fn array_from(items: &JsValue) -> Result<Array, JsValue>;
}

/// The elements of a caller's array of at most `max` elements, read once;
/// `None` for anything else (not an array, too long, a throwing element).
#[cfg(any(feature = "authority", feature = "outbox"))]
pub fn list(v: &JsValue, max: u32) -> Option<Array> {
    let len = Array::is_array(v).then(|| get(v, "length").as_f64())??;
    if len > f64::from(max) {
        return None;
    }
    array_from(v).ok()
}
