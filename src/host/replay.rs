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

use js_sys::Object;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::ReadableStreamDefaultReader;

use super::request::{construct_request, Prepared};
use super::transport::{concat, read_chunks, Chunks};

/// The largest `Request` body kept for a re-send.
pub const REPLAY_BYTES: u64 = 8 << 20;

/// Whether `prepared` keeps a `Request` body for a re-send.
pub fn needed(prepared: &Prepared) -> bool {
    prepared.replayable && prepared.request().is_some_and(|r| r.body().is_some())
}

/// Bounds what `prepared` keeps for a re-send (see the module docs).
pub async fn bound(prepared: &mut Prepared) {
    let Some(request) = prepared.request().filter(|_| needed(prepared)) else {
        return;
    };
    let Some(copy) = request.clone().ok().and_then(|c| c.body()) else {
        prepared.replayable = false;
        return;
    };
    let reader: ReadableStreamDefaultReader = copy.get_reader().unchecked_into();
    let kept = match read_chunks(&reader, REPLAY_BYTES).await {
        Ok(Chunks::Done(chunks, total)) => {
            let init = Object::new();
            let _ = js_sys::Reflect::set(&init, &JsValue::from_str("body"), &concat(&chunks, total));
            construct_request(request.as_ref(), &init).ok()
        }
        _ => {
            let _ = reader.cancel();
            None
        }
    };
    match kept {
        Some(with_bytes) => prepared.input = with_bytes.into(),
        None => prepared.replayable = false,
    }
}
