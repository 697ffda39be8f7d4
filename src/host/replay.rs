//! A `Request` body kept for a possible re-send is kept only up to
//! [`REPLAY_BYTES`] (DESIGN rule 13).
//!
//! Why: a `Request`'s body is a stream, so keeping it for a second attempt
//! means cloning (teeing) it — and the branch we keep fills up with
//! everything the attempt sends: a large upload doubles memory. So before
//! the first attempt we read a copy up to the bound. A body that ends there
//! is kept as bytes (every attempt sends them); a longer one is sent once,
//! from the caller's own stream, and a retry stops with
//! `body-not-replayable`. A URL input's `init.body` needs none of this: it
//! is the caller's own value (string, buffer, Blob, FormData), which `fetch`
//! reads anew for each attempt.

use js_sys::{Array, ArrayBuffer, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use super::io::awaited;
use web_sys::{ReadableStream, Request};

use super::bind::get;
use crate::policy::limits::REPLAY_BYTES;

use super::request::Prepared;
use super::glue::Glue;

/// A `Request`'s body as the host shows it.
enum Body {
    None,
    Stream,
    /// Firefox's `Request` has no `body` property: only a method that
    /// carries one says there may be a body.
    Hidden,
}

fn body_of(request: &Request) -> Body {
    match get(request, "body") {
        v if v.is_undefined() && !matches!(request.method().as_str(), "GET" | "HEAD") => Body::Hidden,
        v if v.is_instance_of::<ReadableStream>() => Body::Stream,
        _ => Body::None,
    }
}

/// Whether `request` has (or, in Firefox, may have) a body.
fn has_body(request: &Request) -> bool {
    !matches!(body_of(request), Body::None)
}

fn construct_request(input: &JsValue, init: &JsValue) -> Result<Request, JsValue> {
    let ctor: Function = get(&js_sys::global(), "Request").dyn_into()?;
    Reflect::construct(&ctor, &Array::of2(input, init))?.dyn_into()
}

/// Whether `prepared` keeps a `Request` body for a re-send.
pub fn needed(prepared: &Prepared) -> bool {
    prepared.replayable && prepared.request().is_some_and(has_body)
}

/// Bounds what `prepared` keeps for a re-send (see the module docs).
pub async fn bound(prepared: &mut Prepared, glue: &Glue) {
    let Some(request) = prepared.request().filter(|_| needed(prepared)) else {
        return;
    };
    let bytes = match request.clone().map(|copy| (body_of(&copy), copy)) {
        // Read a copy up to the bound (`null`: longer).
        Ok((Body::Stream, copy)) => match awaited(glue.read_all(copy.as_ref(), REPLAY_BYTES as f64)).await {
            Ok(read) => read.dyn_into::<ArrayBuffer>().ok(),
            Err(_) => None,
        },
        // Without streams (Firefox) the whole copy is read, then bounded.
        Ok((Body::Hidden, _)) => match request.clone().and_then(|copy| copy.array_buffer()) {
            Ok(promise) => awaited(promise)
                .await
                .ok()
                .map(ArrayBuffer::unchecked_from_js)
                .filter(|b| u64::from(b.byte_length()) <= REPLAY_BYTES),
            Err(_) => None,
        },
        _ => None,
    };
    let kept = bytes.and_then(|bytes| {
        let init = Object::new();
        let _ = js_sys::Reflect::set(&init, &JsValue::from_str("body"), &bytes);
        construct_request(request.as_ref(), &init).ok()
    });
    match kept {
        Some(with_bytes) => prepared.input = with_bytes.into(),
        None => prepared.replayable = false,
    }
}
