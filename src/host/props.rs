//! Direct property accessors for the hot path (`init.signal = …` in the
//! glue) rather than `Reflect` with a key string decoded on every call, and
//! the names we look up made into JS strings once: a successful call crosses
//! into JS about half as often this way.

use alloc::string::String;
use js_sys::{JsString, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsThreadLocal as ThreadLocal;

use crate::policy::rate_limit::{throttling, FloorHeaders};

#[wasm_bindgen]
extern "C" {
    /// A plain object of our own (the copy of the caller's `init`): its data
    /// properties are plain values, so reading them cannot throw.
    #[wasm_bindgen(extends = Object)]
    pub type Init;
    #[wasm_bindgen(method, getter)]
    pub fn retry(this: &Init) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn signal(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_signal(this: &Init, signal: &JsValue);
    #[wasm_bindgen(method, getter)]
    pub fn body(this: &Init) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn headers(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_headers(this: &Init, headers: &JsValue);
    #[wasm_bindgen(method, getter)]
    pub fn method(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_method(this: &Init, method: &str);
    #[wasm_bindgen(method, setter)]
    pub fn set_redirect(this: &Init, redirect: &str);
    #[wasm_bindgen(method, getter)]
    pub fn redirect(this: &Init) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn mode(this: &Init) -> JsValue;
    #[wasm_bindgen(method, setter)]
    pub fn set_body(this: &Init, body: &JsValue);

    /// A host `Headers`, read with header names made into JS strings once.
    pub type HeaderMap;
    #[wasm_bindgen(method, js_name = get)]
    pub fn get(this: &HeaderMap, name: &JsString) -> Option<String>;
    #[wasm_bindgen(method, js_name = has)]
    pub fn has(this: &HeaderMap, name: &JsString) -> bool;

    /// A host `Response`'s strings as JS strings (not copied through Rust).
    pub type Fetched;
    #[wasm_bindgen(method, getter)]
    pub fn url(this: &Fetched) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = statusText)]
    pub fn status_text(this: &Fetched) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = type)]
    pub fn kind(this: &Fetched) -> JsValue;

    /// What a stream reader's `read()` resolves to.
    pub type ReadResult;
    #[wasm_bindgen(method, getter)]
    pub fn done(this: &ReadResult) -> bool;
    #[wasm_bindgen(method, getter)]
    pub fn value(this: &ReadResult) -> JsValue;

    /// `AbortSignal.any` (missing in older hosts: caught).
    #[wasm_bindgen(catch, js_namespace = AbortSignal, js_name = any)]
    pub fn abort_signal_any(signals: &js_sys::Array) -> Result<web_sys::AbortSignal, JsValue>;

    /// A `ResponseInit` of our own.
    #[wasm_bindgen(extends = Object)]
    pub type Rebuild;
    #[wasm_bindgen(method, setter)]
    pub fn set_status(this: &Rebuild, status: u16);
    #[wasm_bindgen(method, setter, js_name = statusText)]
    pub fn set_status_text(this: &Rebuild, text: &JsValue);
    #[wasm_bindgen(method, setter)]
    pub fn set_headers(this: &Rebuild, headers: &web_sys::Headers);

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

    /// The global object, for the globals that may be missing.
    pub type Global;
    #[wasm_bindgen(method, getter)]
    pub fn navigator(this: &Global) -> JsValue;

    pub type Navigator;
    #[wasm_bindgen(method, getter, js_name = onLine)]
    pub fn on_line(this: &Navigator) -> JsValue;
}

// Property and header names made into JS strings once, on first use.
// (rustfmt would drop the initialisers: not Rust syntax, but the macro's.)
#[rustfmt::skip]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static RETRY_AFTER: JsString = "retry-after";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static RETRY_AFTER_MS: JsString = "retry-after-ms";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static RATELIMIT: JsString = "ratelimit";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static X_RATELIMIT_REMAINING: JsString = "x-ratelimit-remaining";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static X_RATE_LIMIT_REMAINING: JsString = "x-rate-limit-remaining";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static X_RATELIMIT_RESET: JsString = "x-ratelimit-reset";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static X_RATE_LIMIT_RESET: JsString = "x-rate-limit-reset";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static X_RATELIMIT_RESET_AFTER: JsString = "x-ratelimit-reset-after";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static CONTENT_LENGTH: JsString = "content-length";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static CONTENT_ENCODING: JsString = "content-encoding";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static CONTENT_TYPE: JsString = "content-type";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static REDIRECTED: JsString = "redirected";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static TYPE: JsString = "type";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static RETRY: JsString = "retry";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static URL: JsString = "url";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static LOCATION: JsString = "location";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static VALUE: JsString = "value";
}

/// The header `name` of `headers`, when present.
pub fn header(headers: &web_sys::Headers, name: &'static ThreadLocal<JsString>) -> Option<String> {
    let map: &HeaderMap = headers.unchecked_ref();
    name.with(|n| map.get(n))
}

/// The headers that can set a wait floor. The rate-limit ones are read only
/// on a throttling status: every other response pays two reads, not eight.
pub fn floor_headers(headers: &web_sys::Headers, status: u16) -> FloorHeaders {
    let mut h = FloorHeaders {
        retry_after: header(headers, &RETRY_AFTER),
        retry_after_ms: header(headers, &RETRY_AFTER_MS),
        ..FloorHeaders::default()
    };
    if throttling(status) {
        h.ratelimit = header(headers, &RATELIMIT);
        h.remaining =
            header(headers, &X_RATELIMIT_REMAINING).or_else(|| header(headers, &X_RATE_LIMIT_REMAINING));
        h.reset = header(headers, &X_RATELIMIT_RESET).or_else(|| header(headers, &X_RATE_LIMIT_RESET));
        h.reset_after = header(headers, &X_RATELIMIT_RESET_AFTER);
    }
    h
}

/// Whether `headers` has the header `name`.
pub fn has_header(headers: &web_sys::Headers, name: &'static ThreadLocal<JsString>) -> bool {
    let map: &HeaderMap = headers.unchecked_ref();
    name.with(|n| map.has(n))
}
