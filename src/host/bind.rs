//! Host globals bound directly (not through `window`), so one build runs in
//! windows, workers, Node, Deno, Bun and workerd; and small helpers for
//! reading and writing plain JS objects.

use alloc::string::String;
use js_sys::{Array, Function, JsString, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsThreadLocal as ThreadLocal;

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

// Whatever runs the caller's code (getters on `init` or on option arrays, a
// hook's `then`) is imported with `catch`: a JS exception must never unwind
// through wasm frames, which would leak the shadow stack and, after a few
// hundred calls, break the module.
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Object, js_name = assign)]
    pub fn assign(target: &Object, source: &JsValue) -> Result<JsValue, JsValue>;

    /// A copy whose elements are plain values (getters run once, here).
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    fn array_from(items: &JsValue) -> Result<Array, JsValue>;

    /// A host object the caller handed us (a `Request`, an `AbortSignal`),
    /// read once through `catch`: one that only looks like it
    /// (`Object.create(Request.prototype)`, a Proxy) passes `instanceof`
    /// but throws on every getter.
    pub type Branded;
    #[wasm_bindgen(catch, method, getter)]
    pub fn aborted(this: &Branded) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, method, getter)]
    pub fn method(this: &Branded) -> Result<JsValue, JsValue>;

    /// A promise, whose `then` a subclass may override.
    pub type Thenable;
    #[wasm_bindgen(catch, method)]
    pub fn then(
        this: &Thenable,
        ok: &Closure<dyn FnMut(JsValue)>,
        err: &Closure<dyn FnMut(JsValue)>,
    ) -> Result<JsValue, JsValue>;
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

// The hot path reads and writes properties through direct accessors
// (`init.signal = …` in the glue) rather than `Reflect` with a key string
// decoded on every call: a successful call crosses into JS about half as
// often this way.
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
    #[wasm_bindgen(method, setter)]
    pub fn set_duplex(this: &Init, duplex: &str);

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

    /// What a stream reader's `read()` resolves to.
    pub type ReadResult;
    #[wasm_bindgen(method, getter)]
    pub fn done(this: &ReadResult) -> bool;
    #[wasm_bindgen(method, getter)]
    pub fn value(this: &ReadResult) -> JsValue;

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
    pub fn username(this: &Url) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub fn password(this: &Url) -> JsValue;

    /// The global object, for the globals that may be missing.
    pub type Global;
    #[wasm_bindgen(method, getter)]
    pub fn navigator(this: &Global) -> JsValue;
    /// `location` may throw (Deno without `--location`): caught.
    #[wasm_bindgen(method, catch, getter)]
    pub fn location(this: &Global) -> Result<JsValue, JsValue>;

    pub type Navigator;
    #[wasm_bindgen(method, getter, js_name = onLine)]
    pub fn on_line(this: &Navigator) -> JsValue;

    pub type Location;
    #[wasm_bindgen(method, getter)]
    pub fn href(this: &Location) -> JsValue;
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
    pub static CONTENT_LENGTH: JsString = "content-length";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static CONTENT_ENCODING: JsString = "content-encoding";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static RETRY: JsString = "retry";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static URL: JsString = "url";
    #[wasm_bindgen(thread_local_v2, static_string)]
    pub static VALUE: JsString = "value";
}

/// The header `name` of `headers`, when present.
pub fn header(headers: &web_sys::Headers, name: &'static ThreadLocal<JsString>) -> Option<String> {
    let map: &HeaderMap = headers.unchecked_ref();
    name.with(|n| map.get(n))
}

/// Whether `headers` has the header `name`.
pub fn has_header(headers: &web_sys::Headers, name: &'static ThreadLocal<JsString>) -> bool {
    let map: &HeaderMap = headers.unchecked_ref();
    name.with(|n| map.has(n))
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
