//! One attempt on the host: `fetch` under the attempt's own
//! `AbortController`, the body read (buffered) under the same signal, and
//! a `Response` rebuilt with the original status, status text, headers and
//! URL. Dropping an attempt aborts it: the engine drops the loser of the
//! race against our timers and the caller's signal, so the request and its
//! body read stop at once, whichever fired.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{ArrayBuffer, Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    AbortController, Headers, ReadableStream, ReadableStreamDefaultReader, Response, ResponseType,
};

use super::bind::{fetch, get, get_string};
use super::props::{
    floor_headers, has_header, header, Fetched, ReadResult, Rebuild, CONTENT_ENCODING, CONTENT_LENGTH, URL,
    VALUE,
};
use super::request::Prepared;
use super::task::Settled;
use crate::engine::{Answer, Failed, Transport};
use crate::policy::classify::{Failure, Stage};
use crate::policy::report::{secrets_of, snippet, SNIPPET_READ_BYTES};
use crate::policy::runtime::{fetch_failure_stage, ErrorShape, Runtime, Sent};

pub struct FetchTransport {
    pub prepared: Prepared,
    pub runtime: Runtime,
    pub max_body_bytes: u64,
}

/// A response ready for the caller, and its buffered body.
pub struct Received {
    pub response: Response,
    pub bytes: Option<ArrayBuffer>,
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

fn failed(failure: Failure, code: &str, name: &str, error: Option<JsValue>) -> Failed<JsValue> {
    Failed { failure, code: String::from(code), name: String::from(name), error }
}

/// The fields of a JS error that classification and reports read.
struct ErrorFields {
    name: String,
    code: Option<String>,
    cause_code: Option<String>,
    cause_syscall: Option<String>,
    cause_message: Option<String>,
}

impl ErrorFields {
    fn of(e: &JsValue) -> ErrorFields {
        let cause = get(e, "cause");
        ErrorFields {
            name: get_string(e, "name").unwrap_or_else(|| String::from("Error")),
            code: get_string(e, "code"),
            cause_code: get_string(&cause, "code"),
            cause_syscall: get_string(&cause, "syscall"),
            cause_message: get_string(&cause, "message"),
        }
    }

    fn shape(&self) -> ErrorShape<'_> {
        ErrorShape {
            name: &self.name,
            code: self.code.as_deref(),
            cause_code: self.cause_code.as_deref(),
            cause_syscall: self.cause_syscall.as_deref(),
            cause_message: self.cause_message.as_deref(),
        }
    }

    fn failed(self, stage: Stage, e: JsValue) -> Failed<JsValue> {
        let code = String::from(self.shape().best_code());
        Failed { failure: Failure::Network(stage), code, name: self.name, error: Some(e) }
    }
}

/// A failure after the response started: the request was delivered.
fn delivered(e: JsValue) -> Failed<JsValue> {
    ErrorFields::of(&e).failed(Stage::MaybeDelivered, e)
}

fn too_large() -> Failed<JsValue> {
    failed(Failure::BodyTooLarge, "body-too-large", "RangeError", None)
}

/// Statuses whose responses never have a body.
fn null_body(status: u16) -> bool {
    matches!(status, 101 | 103 | 204 | 205 | 304)
}

impl FetchTransport {
    fn fetch_failed(&self, e: JsValue) -> Failed<JsValue> {
        let fields = ErrorFields::of(&e);
        let url = match self.runtime {
            Runtime::Deno => self.prepared.url(),
            _ => String::new(),
        };
        let sent = Sent { url: &url, body_streamed: self.prepared.streamed };
        let stage = fetch_failure_stage(self.runtime, &fields.shape(), sent);
        fields.failed(stage, e)
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
        let not_sent = |e| failed(Failure::Network(Stage::NotSent), "setup", "TypeError", Some(e));
        let input = self.input_for_attempt().map_err(not_sent)?;
        let init = &self.prepared.init;
        init.set_signal(&controller.signal());
        let promise = fetch(&input, init).map_err(not_sent)?;
        let response: Response =
            Settled::new(promise).await.map_err(|e| self.fetch_failed(e))?.unchecked_into();
        let status = response.status();
        let headers = response.headers();
        let floor_headers = floor_headers(&headers, status);
        let kind = response.type_();
        let cross_origin = kind == ResponseType::Cors;
        let body = match kind {
            // Opaque responses (manual redirects, no-cors) have no readable body.
            ResponseType::Opaqueredirect | ResponseType::Opaque => Received { response, bytes: None },
            _ => self.buffer(response, &headers, status, cross_origin).await?,
        };
        Ok(Answer { status, floor_headers, cross_origin, body })
    }

    async fn buffer(
        &self,
        response: Response,
        headers: &Headers,
        status: u16,
        cors: bool,
    ) -> Result<Received, Failed<JsValue>> {
        let bytes = match response.body() {
            Some(stream) if !null_body(status) => {
                Some(self.read_body(&response, headers, stream, cors).await?)
            }
            _ => None,
        };
        // (Not the response itself as the init: Deno would then take the
        // standard status text instead of the server's.)
        let fetched: &Fetched = response.unchecked_ref();
        let init: Rebuild = Object::new().unchecked_into();
        init.set_status(status);
        init.set_status_text(&fetched.status_text());
        init.set_headers(headers);
        let Ok(rebuilt) =
            Response::new_with_opt_buffer_source_and_init(bytes.as_deref(), init.unchecked_ref())
        else {
            return Ok(Received { response, bytes });
        };
        let url = Object::new();
        let _ = VALUE.with(|key| Reflect::set(&url, key, &fetched.url()));
        let _ = URL.with(|key| Reflect::define_property(&rebuilt, key, &url));
        Ok(Received { response: rebuilt, bytes })
    }

    /// Reads the whole body, refusing more than `maxBodyBytes`: at once from
    /// `Content-Length` when it describes the body, else while streaming. A
    /// cross-origin response hides `Content-Encoding` unless exposed, so its
    /// `Content-Length` may count compressed bytes: it is streamed.
    async fn read_body(
        &self,
        response: &Response,
        headers: &Headers,
        stream: ReadableStream,
        cors: bool,
    ) -> Result<ArrayBuffer, Failed<JsValue>> {
        let max = self.max_body_bytes;
        let encoded = cors || has_header(headers, &CONTENT_ENCODING);
        let declared = header(headers, &CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
        if let (Some(len), false) = (declared, encoded) {
            if len > max {
                return Err(too_large());
            }
            let promise = response.array_buffer().map_err(delivered)?;
            let buffer: ArrayBuffer = Settled::new(promise).await.map_err(delivered)?.unchecked_into();
            let got = u64::from(buffer.byte_length());
            if got < len {
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
        let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
        let mut chunks: Vec<Uint8Array> = Vec::new();
        let mut total: u64 = 0;
        loop {
            let step: ReadResult = Settled::new(reader.read()).await.map_err(delivered)?.unchecked_into();
            if step.done() {
                break;
            }
            let chunk: Uint8Array = step.value().unchecked_into();
            total += u64::from(chunk.length());
            if total > max {
                return Err(too_large());
            }
            chunks.push(chunk);
        }
        let all = Uint8Array::new_with_length(total as u32);
        let mut offset = 0;
        for chunk in &chunks {
            all.set(chunk, offset);
            offset += chunk.length();
        }
        Ok(all.buffer())
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
