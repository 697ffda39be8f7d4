//! One attempt on the host: `fetch` under the attempt's own
//! `AbortController`, then the body as `policy::body` decides — read inside
//! the attempt under the same signal and a `Response` rebuilt with the
//! original status, status text, headers, URL and `redirected`; or the
//! host's own `Response` handed over as soon as its headers arrived, its
//! body still streaming. Dropping an attempt aborts it: the engine drops the
//! loser of the race against our timers and the caller's signal, so the
//! request and its body read stop at once, whichever fired. `fetch` gets
//! `AbortSignal.any([ours, caller's])`, so a streamed body keeps following
//! the caller's signal after the hand-over with no listener of ours.
//! What is read of the response, the `fetch` call and the rebuilt
//! `Response` each take one crossing into the glue (`super::glue`).

use alloc::string::String;
use js_sys::{ArrayBuffer, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use super::io::awaited;
use web_sys::{AbortController, ReadableStream, Response};

use super::bind::date_now;
use super::glue::{Facts, Glue};
use crate::packed::Fields;
use super::hops::fetch_following;
use super::props::Init;
use super::request::Prepared;
use crate::engine::{Answer, Failed, Transport};
use crate::policy::body::{handling, Handling, Inside, ResponseBody};
use crate::policy::classify::{Failure, Stage};
use crate::policy::redirect::{follower, Follower};
use crate::policy::report::{secrets_of, snippet, SNIPPET_READ_BYTES};
use crate::policy::runtime::{
    body_abort, doomed, fetch_failure, short_body_is_cut, BodyAbort, ErrorShape, Runtime, Sent,
};

pub struct FetchTransport {
    /// The `fetch` to call: the policy's `fetch` option, else the global
    /// one as the glue resolved it for this call.
    pub fetch: js_sys::Function,
    pub glue: Glue,
    pub prepared: Prepared,
    pub runtime: Runtime,
    pub max_body_bytes: u64,
    pub response_body: ResponseBody,
}

/// A response ready for the caller: rebuilt around its buffered body, or
/// the host's own with its body still streaming.
pub struct Received {
    pub response: Response,
    pub bytes: Option<ArrayBuffer>,
    /// A body nobody has read yet: cancelled (not drained) if this response
    /// is dropped because the operation retries.
    unread: Option<ReadableStream>,
    /// For a streamed body: how long after the headers it was handed over
    /// (0 at the headers; later when `auto` read some of it first).
    after_headers_ms: u64,
}

impl Received {
    fn buffered(response: Response, bytes: Option<ArrayBuffer>) -> Received {
        Received { response, bytes, unread: None, after_headers_ms: 0 }
    }

    fn streaming(response: Response, body: Option<ReadableStream>, after_headers_ms: u64) -> Received {
        Received { response, bytes: None, unread: body, after_headers_ms }
    }

    /// Whether the caller gets the body as it streams.
    pub fn streamed(&self) -> bool {
        self.bytes.is_none() && self.unread.is_some()
    }

    /// For a streamed body, how long after the headers it was handed over.
    pub fn handed_over_ms(&self) -> Option<u64> {
        self.streamed().then_some(self.after_headers_ms)
    }

    /// The response for the caller; its body is theirs from here on.
    pub fn hand_over(mut self) -> Response {
        self.unread = None;
        Clone::clone(&self.response)
    }
}

impl Drop for Received {
    fn drop(&mut self) {
        // A stream someone is reading (a poll hook) is locked: leave it.
        if let Some(body) = self.unread.take().filter(|b| !b.locked()) {
            let _ = body.cancel();
        }
    }
}

/// Aborts the attempt unless it completed.
struct AbortOnDrop(Option<AbortController>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.abort();
        }
    }
}

type Outcome = Result<Answer<Received>, Failed<JsValue>>;

pub(super) fn failed(failure: Failure, code: &str, name: &str, error: Option<JsValue>) -> Failed<JsValue> {
    Failed { failure, code: String::from(code), name: String::from(name), error }
}

/// The request could not even be handed to `fetch`.
pub(super) fn not_sent(e: JsValue) -> Failed<JsValue> {
    failed(Failure::Network(Stage::NotSent), "setup", "TypeError", Some(e))
}

/// The fields of a JS error that classification and reports read, as the
/// glue's `errorFacts` packs them (one crossing).
struct ErrorFields {
    name: String,
    message: Option<String>,
    has_cause: bool,
    code: Option<String>,
    cause_code: Option<String>,
    cause_syscall: Option<String>,
    cause_message: Option<String>,
}

impl ErrorFields {
    fn of(glue: &Glue, e: &JsValue) -> ErrorFields {
        let packed = glue.error_facts(e);
        let mut f = Fields(&packed);
        let mut next = || f.next().flatten().map(String::from);
        ErrorFields {
            name: next().unwrap_or_else(|| String::from("Error")),
            message: next(),
            has_cause: next().is_some(),
            code: next(),
            cause_code: next(),
            cause_syscall: next(),
            cause_message: next(),
        }
    }

    fn shape(&self) -> ErrorShape<'_> {
        ErrorShape {
            name: &self.name,
            message: self.message.as_deref(),
            has_cause: self.has_cause,
            code: self.code.as_deref(),
            cause_code: self.cause_code.as_deref(),
            cause_syscall: self.cause_syscall.as_deref(),
            cause_message: self.cause_message.as_deref(),
        }
    }

    fn failed(self, failure: Failure, e: JsValue) -> Failed<JsValue> {
        let code = String::from(self.shape().best_code());
        Failed { failure, code, name: self.name, error: Some(e) }
    }
}

fn too_large() -> Failed<JsValue> {
    failed(Failure::BodyTooLarge, "body-too-large", "RangeError", None)
}

/// Statuses whose responses never have a body.
fn null_body(status: u16) -> bool {
    matches!(status, 101 | 103 | 204 | 205 | 304)
}

impl FetchTransport {
    /// `fetch(input, init)` under `controller`'s signal, joined with the
    /// caller's (the glue's `send`): a streamed body handed over keeps
    /// following the caller's signal, and we keep no listener for it.
    fn dispatch(&self, input: &JsValue, init: &Init, controller: &AbortController) -> Result<js_sys::Promise, JsValue> {
        let caller = self.prepared.signal.clone();
        self.glue.send(&self.fetch, input, init, Some(controller.clone()), caller)
    }

    /// A failure after the response started: the request was delivered.
    pub(super) fn delivered(&self, e: JsValue) -> Failed<JsValue> {
        ErrorFields::of(&self.glue, &e).failed(Failure::Network(Stage::MaybeDelivered), e)
    }

    pub(super) fn fetch_failed(&self, e: JsValue) -> Failed<JsValue> {
        let fields = ErrorFields::of(&self.glue, &e);
        let url = match self.runtime {
            Runtime::Deno => self.prepared.url(),
            _ => String::new(),
        };
        let fate = &self.prepared.fate;
        let doomed = doomed(self.runtime, fate.mode.as_deref(), fate.integrity, fate.cross_origin);
        let sent = Sent { url: &url, body_streamed: self.prepared.streamed, doomed };
        let failure = fetch_failure(self.runtime, &fields.shape(), sent);
        fields.failed(failure, e)
    }

    /// The input for one attempt: a clone of a `Request` while its body may
    /// be needed again; otherwise the input itself (a URL, whose `init`
    /// body is replayable, or a one-shot stream sent once).
    fn input_for_attempt(&self) -> Result<JsValue, JsValue> {
        match self.prepared.request() {
            // Cloned whenever it may be needed again, without asking
            // `.body` (Firefox's Request has no such property).
            Some(r) if self.prepared.replayable => r.clone().map(Into::into),
            _ => Ok(self.prepared.input.clone()),
        }
    }

    async fn attempt(&self, controller: &AbortController) -> Outcome {
        let input = self.input_for_attempt().map_err(not_sent)?;
        let response = match follower(self.runtime, self.prepared.redirect.as_deref()) {
            Follower::Us => fetch_following(self, input, controller).await?,
            Follower::Host => {
                let promise = self.dispatch(&input, &self.prepared.init, controller).map_err(not_sent)?;
                awaited(promise).await.map_err(|e| self.fetch_failed(e))?.unchecked_into()
            }
        };
        let facts = Facts::read(&self.glue, &response).map_err(|e| self.delivered(e))?;
        let status = facts.status;
        let cross_origin = facts.kind_is("cors");
        let declared = facts.content_length.as_deref().and_then(|v| v.trim().parse::<u64>().ok());
        let handling = match null_body(status) {
            true => Handling::Stream,
            false => handling(self.response_body, facts.content_type.as_deref(), declared),
        };
        // Opaque responses (manual redirects, no-cors) have no readable body.
        let opaque = facts.kind_is("opaqueredirect") || facts.kind_is("opaque");
        let body = match (opaque || !facts.has_body, handling) {
            (true, _) => Received::buffered(response, None),
            (false, Handling::Stream) => {
                let stream = response.body();
                Received::streaming(response, stream, 0)
            }
            (false, Handling::Buffer) => {
                let encoded = cross_origin || facts.content_encoding;
                let bytes = self.read_body(&response, declared, encoded).await?;
                Received::buffered(self.rebuild(response, &bytes), Some(bytes))
            }
            (false, Handling::BufferUpTo(inside)) => self.read_up_to(response, inside).await?,
        };
        Ok(Answer { status, floor_headers: facts.floor_headers, cross_origin, body })
    }

    /// Reads the whole body, refusing more than `maxBodyBytes`: at once from
    /// `Content-Length` when it describes the body, else while streaming. A
    /// cross-origin response hides `Content-Encoding` unless exposed, so its
    /// `Content-Length` may count compressed bytes: it is streamed.
    async fn read_body(
        &self,
        response: &Response,
        declared: Option<u64>,
        encoded: bool,
    ) -> Result<ArrayBuffer, Failed<JsValue>> {
        let max = self.max_body_bytes;
        if let (Some(len), false) = (declared, encoded) {
            if len > max {
                return Err(too_large());
            }
            let promise = response.array_buffer().map_err(|e| self.delivered(e))?;
            let buffer: ArrayBuffer = awaited(promise).await.map_err(|e| self.delivered(e))?.unchecked_into();
            let got = u64::from(buffer.byte_length());
            if got < len && short_body_is_cut(self.runtime) {
                // WebKit resolves a body cut short by a clean close: the
                // connection broke after the request was delivered.
                let short = JsValue::from_str("the body ended before its Content-Length");
                return Err(failed(
                    Failure::Network(Stage::MaybeDelivered),
                    "body-truncated",
                    "TypeError",
                    Some(short),
                ));
            }
            return if got > max { Err(too_large()) } else { Ok(buffer) };
        }
        // Read while streaming (`null`: more than `max` arrived).
        let read = awaited(self.glue.read_all(response.as_ref(), max as f64)).await.map_err(|e| self.delivered(e))?;
        read.dyn_into::<ArrayBuffer>().map_err(|_| too_large())
    }

    /// `auto` for a chunked document: read inside the attempt, a chunk per
    /// event, while it arrives as a document does (`policy::body::Inside`).
    /// A body that ends meanwhile is buffered; one still arriving is handed
    /// over as what was read followed by the rest (js/src/body.js
    /// `joined`): the network is read once, and the chunks read are handed
    /// out as they are (not copied).
    async fn read_up_to(&self, response: Response, inside: Inside) -> Result<Received, Failed<JsValue>> {
        let headers_at = date_now();
        let reader = self.glue.reader(&response);
        let mut total: u64 = 0;
        loop {
            let read = awaited(self.glue.chunk(&reader)).await.map_err(|e| self.delivered(e))?;
            let Some(len) = read.as_f64().filter(|n| *n >= 0.0) else {
                let bytes = self.glue.whole(&reader);
                return Ok(Received::buffered(self.rebuild(response, &bytes), Some(bytes)));
            };
            total = total.saturating_add(len as u64);
            let since = inside.ms.map_or(0, |_| (date_now() - headers_at).max(0.0) as u64);
            if !inside.read_on(total, since) {
                let rebuilt = self.glue.hand_over(&response, &reader, self.prepared.signal.clone());
                let rebuilt = rebuilt.map_err(|e| self.delivered(e))?;
                let body = rebuilt.body();
                return Ok(Received::streaming(rebuilt, body, since));
            }
        }
    }
}

impl FetchTransport {
    /// The host's response again around its buffered `bytes` (the glue's
    /// `rebuild`). With a caller signal, reading that body once the signal
    /// has aborted fails as `fetch`'s body does
    /// (`policy::runtime::body_abort`); it is checked when read, so no
    /// listener outlives the call.
    fn rebuild(&self, response: Response, bytes: &ArrayBuffer) -> Response {
        let signal = self.prepared.signal.clone();
        let abort = match signal.as_ref().map(|_| body_abort(self.runtime, bytes.byte_length() == 0)) {
            Some(BodyAbort::AbortError) => 1,
            Some(BodyAbort::Reason) => 2,
            Some(BodyAbort::Unaffected) | None => 0,
        };
        self.glue.rebuild(&response, bytes, signal, abort).unwrap_or(response)
    }
}

impl Transport for FetchTransport {
    type Body = Received;
    type Error = JsValue;

    async fn send(&self, _attempt: u32) -> Outcome {
        let controller = match AbortController::new() {
            Ok(c) => c,
            Err(e) => return Err(failed(Failure::Network(Stage::NotSent), "setup", "TypeError", Some(e))),
        };
        let mut guard = AbortOnDrop(Some(Clone::clone(&controller)));
        let outcome = self.attempt(&controller).await;
        if outcome.is_ok() {
            guard.0 = None;
        }
        outcome
    }

    fn snippet(&self, body: &Received) -> Option<String> {
        let bytes = body.bytes.as_ref()?;
        let head = Uint8Array::new_with_byte_offset_and_length(
            bytes,
            0,
            bytes.byte_length().min(SNIPPET_READ_BYTES as u32),
        );
        let mut secrets = self.prepared.secrets();
        if let Ok(Some(cookies)) = body.response.headers().get("set-cookie") {
            secrets_of(&cookies, &mut secrets);
        }
        snippet(&head.to_vec(), &secrets)
    }
}
