//! The glue's helpers (core.js `glue`), each one crossing from wasm into JS
//! where reading or building the same thing from here took one crossing per
//! property (BENCHMARKS.md "Crossings"): a response's status, type and the
//! headers the policy reads; the attempt's `fetch` under its signal; the
//! rebuilt `Response`. They only move data: what the values mean, and what
//! to do about them, is decided here and in `policy`.

use alloc::string::String;
use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, AbortSignal, Request, Response};

use super::hops::Chain;

use super::props::Init;
use crate::packed::Fields;
use crate::policy::rate_limit::FloorHeaders;

#[wasm_bindgen]
extern "C" {
    /// The object core.js hands to `Policy`'s constructor.
    pub type Glue;

    /// `facts(response, rateLimit)`: the response's status, type, whether
    /// it has a body, then the headers of core.js `FACT_HEADERS` (or of
    /// `RATE_HEADERS`), packed into one string (read by [`Fields`], in
    /// [`Facts::read`]'s order). Caught: a `fetch` option may answer
    /// something that is not a `Response`.
    #[wasm_bindgen(catch, method, structural)]
    fn facts(this: &Glue, response: &Response, rate_limit: bool) -> Result<String, JsValue>;

    /// `send(fetch, input, init, controller, caller)`: with a controller,
    /// `init.signal` set to its signal (joined with the caller's, where the
    /// host has `AbortSignal.any`); then `fetch(input, init)`, a
    /// non-promise answer (a thenable, a value) adopted as `await` would.
    #[wasm_bindgen(catch, method, structural)]
    pub fn send(
        this: &Glue,
        fetch: &Function,
        input: &JsValue,
        init: &Init,
        controller: Option<AbortController>,
        caller: Option<AbortSignal>,
    ) -> Result<Promise, JsValue>;

    /// `follow(fetch, input, init, controller, caller, chain, again)`: as
    /// `send`, with `redirect: "manual"`, then every redirect the chain
    /// follows (js/src/hops.js); `again`: the `Request` a 307/308 reads the
    /// body again from. Resolves with the final response.
    #[wasm_bindgen(catch, method, structural)]
    pub fn follow(
        this: &Glue,
        fetch: &Function,
        input: &JsValue,
        init: &Init,
        controller: &AbortController,
        caller: Option<AbortSignal>,
        chain: Chain,
        again: Option<&Request>,
    ) -> Result<Promise, JsValue>;

    /// `rebuild(response, body, signal, abort)`: a `Response` around `body`
    /// (bytes or a stream) with `response`'s status, status text, headers,
    /// URL, `redirected` and type; with `abort` 1 or 2, reading its body
    /// once `signal` aborted fails (1: with an `AbortError`, 2: with the
    /// signal's reason; see `policy::runtime::body_abort`).
    #[wasm_bindgen(catch, method, structural)]
    pub fn rebuild(
        this: &Glue,
        response: &Response,
        body: &JsValue,
        signal: Option<AbortSignal>,
        abort: u8,
    ) -> Result<Response, JsValue>;

    /// `prepare(input, own, isRequest, headers, key, fate, fold, url)`
    /// (js/src/request.js): the steps `request::prepare` decided, taken;
    /// answers `[input, init, hasKey, integrity, crossOrigin, refused]`.
    /// Throws what `Headers` throws for a key it refuses.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(catch, method, structural)]
    pub fn prepare(
        this: &Glue,
        input: &JsValue,
        own: &Init,
        is_request: bool,
        headers: u8,
        key: Option<&str>,
        fate: bool,
        fold: bool,
        url: &str,
    ) -> Result<Array, JsValue>;

    /// `abortBefore(input, own, signal, isRequest)` (js/src/request.js):
    /// the Request of a call whose signal had aborted, its body cancelled
    /// with the reason; throws what the Request constructor throws.
    #[wasm_bindgen(catch, method, structural, js_name = abortBefore)]
    pub fn abort_before(
        this: &Glue,
        input: &JsValue,
        own: &Init,
        signal: &AbortSignal,
        is_request: bool,
    ) -> Result<Request, JsValue>;

    /// `callOf(input, init)`: what `request::Given` holds, as an array (a
    /// poll's status request; `execute` gets the same as its arguments).
    #[wasm_bindgen(method, structural, js_name = callOf)]
    pub fn call_of(this: &Glue, input: &JsValue, init: &Init) -> Array;

    /// `readAll(source, max)`: the bytes of a `Response`'s or a `Request`'s
    /// body (an `ArrayBuffer`), or `null` as soon as more than `max` bytes
    /// arrived (js/src/body.js).
    #[wasm_bindgen(method, structural, js_name = readAll)]
    pub fn read_all(this: &Glue, source: &JsValue, max: f64) -> Promise;

    /// `reader(response)`: a reader of the body that keeps the chunks it read.
    #[wasm_bindgen(method, structural)]
    pub fn reader(this: &Glue, response: &Response) -> JsValue;

    /// `chunk(reader)`: the next chunk, kept; resolves to its length in
    /// bytes, or -1 at the end.
    #[wasm_bindgen(method, structural)]
    pub fn chunk(this: &Glue, reader: &JsValue) -> Promise;

    /// `whole(reader)`: the chunks read, as one `ArrayBuffer`.
    #[wasm_bindgen(method, structural)]
    pub fn whole(this: &Glue, reader: &JsValue) -> js_sys::ArrayBuffer;

    /// `handOver(response, reader, signal)`: `response` again around the
    /// chunks read, then the rest of its body, pulled as the caller reads.
    #[wasm_bindgen(catch, method, structural, js_name = handOver)]
    pub fn hand_over(
        this: &Glue,
        response: &Response,
        reader: &JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<Response, JsValue>;

    /// `errorFacts(error)`: what classification reads of a thrown value,
    /// packed: its `name`, `message`, whether it has a `cause` (`1`), its
    /// `code`, then the cause's `code`, `syscall` and `message` (each only
    /// when a string; a getter that throws counts as absent).
    #[wasm_bindgen(method, structural, js_name = errorFacts)]
    pub fn error_facts(this: &Glue, error: &JsValue) -> String;

    /// `exchange(lease, exchange, shared, request, seq, ms, now)`: the
    /// executor calls `exchange` as `shared`'s method with `request` (`now`:
    /// at once, else in a microtask), adopts its answer as `await` would,
    /// and reports to `lease` whichever comes first: how it settled (or the
    /// throw), or a timer of `ms` (js/src/executor.js). Resolves once it
    /// reported.
    #[wasm_bindgen(method, structural)]
    #[allow(clippy::too_many_arguments)]
    pub fn exchange(
        this: &Glue,
        lease: &JsValue,
        exchange: &Function,
        shared: &JsValue,
        request: &JsValue,
        seq: f64,
        ms: f64,
        now: bool,
    ) -> Promise;

    /// `releaseOf(lease)`: a function that calls `lease.release()`, for
    /// `shared.attach`.
    #[wasm_bindgen(method, structural, js_name = releaseOf)]
    pub fn release_of(this: &Glue, lease: &JsValue) -> Function;

    /// `navigator.onLine` when the host has it (a boolean), else nothing.
    #[wasm_bindgen(method, structural, js_name = onLine)]
    pub fn on_line(this: &Glue) -> Option<bool>;
}

/// What one attempt reads of a response, in one crossing.
pub struct Facts {
    pub status: u16,
    /// `Response.type` (`basic`, `cors`, `opaque`, `opaqueredirect`…).
    pub kind: Option<String>,
    pub has_body: bool,
    pub content_length: Option<String>,
    pub content_type: Option<String>,
    pub content_encoding: bool,
    pub floor_headers: FloorHeaders,
}

impl Facts {
    /// Reads `response`; the rate-limit headers only on a throttling status
    /// (every other response pays one crossing, not two). The fields come
    /// as core.js `glue.facts` packs them: status, type, has a body, then
    /// `content-length`, `content-type`, `content-encoding`,
    /// `retry-after`, `retry-after-ms`; or, for the rate limit, the same
    /// three and `ratelimit`, `x-ratelimit-remaining`,
    /// `x-rate-limit-remaining`, `x-ratelimit-reset`,
    /// `x-rate-limit-reset`, `x-ratelimit-reset-after`.
    pub fn read(glue: &Glue, response: &Response) -> Result<Facts, JsValue> {
        let packed = glue.facts(response, false)?;
        let mut f = Fields(&packed);
        let mut next = || f.next().flatten().map(String::from);
        let status = next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let kind = next();
        let has_body = next().as_deref() == Some("1");
        let content_length = next();
        let content_type = next();
        let content_encoding = next().is_some();
        let mut floor_headers =
            FloorHeaders { retry_after: next(), retry_after_ms: next(), ..FloorHeaders::default() };
        if crate::policy::rate_limit::throttling(status) {
            let packed = glue.facts(response, true)?;
            let mut f = Fields(&packed).skip(3);
            let mut next = || f.next().flatten().map(String::from);
            let h = &mut floor_headers;
            h.ratelimit = next();
            let (remaining, other_remaining) = (next(), next());
            h.remaining = remaining.or(other_remaining);
            let (reset, other_reset) = (next(), next());
            h.reset = reset.or(other_reset);
            h.reset_after = next();
        }
        Ok(Facts { status, kind, has_body, content_length, content_type, content_encoding, floor_headers })
    }

    pub fn kind_is(&self, kind: &str) -> bool {
        self.kind.as_deref() == Some(kind)
    }
}
