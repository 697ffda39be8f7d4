//! Direct property accessors (`init.headers = …` in the glue) rather than
//! `Reflect` with a key string decoded on every call, and the names we look
//! up made into JS strings once. (The hot path reads and builds through
//! the glue's helpers instead, `super::glue`.)

use alloc::string::String;
use js_sys::{JsString, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsThreadLocal as ThreadLocal;

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
    #[wasm_bindgen(method, getter)]
    pub fn method(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_method(this: &Init, method: &str);
    #[wasm_bindgen(method, setter)]
    pub fn set_body(this: &Init, body: &JsValue);
    #[wasm_bindgen(method, getter)]
    pub fn referrer(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_referrer(this: &Init, referrer: &str);
    #[wasm_bindgen(method, getter, js_name = referrerPolicy)]
    pub fn referrer_policy(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter, js_name = referrerPolicy)]
    pub fn set_referrer_policy(this: &Init, policy: &str);

    /// A host `Headers`, read with header names made into JS strings once.
    pub type HeaderMap;
    #[wasm_bindgen(method, js_name = get)]
    pub fn get(this: &HeaderMap, name: &JsString) -> Option<String>;

    /// `URL`, to refuse up front what `fetch` would refuse.
    pub type Url;
    #[wasm_bindgen(catch, constructor, js_class = "URL")]
    pub fn parse(url: &JsValue, base: &JsValue) -> Result<Url, JsValue>;
    #[wasm_bindgen(method, getter)]
    pub fn origin(this: &Url) -> String;
    #[wasm_bindgen(method, getter, js_name = href)]
    pub fn url_href(this: &Url) -> String;
    #[wasm_bindgen(method, getter)]
    pub fn protocol(this: &Url) -> String;
    #[wasm_bindgen(method, setter)]
    pub fn set_username(this: &Url, value: &str);
    #[wasm_bindgen(method, setter)]
    pub fn set_password(this: &Url, value: &str);
    #[wasm_bindgen(method, setter)]
    pub fn set_hash(this: &Url, value: &str);
}

// Property and header names made into JS strings once, on first use.
// (rustfmt would drop the initialisers: not Rust syntax, but the macro's.)
#[rustfmt::skip]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static REDIRECTED: JsString = "redirected";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static TYPE: JsString = "type";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static LOCATION: JsString = "location";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static VALUE: JsString = "value";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static REFERRER_POLICY: JsString = "referrer-policy";
}

/// The header `name` of `headers`, when present.
pub fn header(headers: &web_sys::Headers, name: &'static ThreadLocal<JsString>) -> Option<String> {
    let map: &HeaderMap = headers.unchecked_ref();
    name.with(|n| map.get(n))
}
