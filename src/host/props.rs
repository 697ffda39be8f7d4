//! Direct property accessors (`init.headers = …` in the glue) rather than
//! `Reflect` with a key string decoded on every call. (The hot path reads
//! and builds through the glue's helpers instead, `super::glue`.)

use alloc::string::String;
use js_sys::Object;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// A plain object of our own (the copy of the caller's `init`): its data
    /// properties are plain values, so reading them cannot throw.
    #[wasm_bindgen(extends = Object)]
    pub type Init;
    #[wasm_bindgen(method, setter)]
    pub fn set_signal(this: &Init, signal: &JsValue);
    #[wasm_bindgen(method, getter)]
    pub fn headers(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_headers(this: &Init, headers: &JsValue);
    #[wasm_bindgen(method, setter)]
    pub fn set_method(this: &Init, method: &str);
    #[wasm_bindgen(method, getter)]
    pub fn referrer(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_referrer(this: &Init, referrer: &str);
    #[wasm_bindgen(method, getter, js_name = referrerPolicy)]
    pub fn referrer_policy(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter, js_name = referrerPolicy)]
    pub fn set_referrer_policy(this: &Init, policy: &str);

    /// `URL`, to refuse up front what `fetch` would refuse.
    pub type Url;
    #[wasm_bindgen(catch, constructor, js_class = "URL")]
    pub fn parse(url: &JsValue, base: &JsValue) -> Result<Url, JsValue>;
    #[wasm_bindgen(method, getter)]
    pub fn origin(this: &Url) -> String;
}
