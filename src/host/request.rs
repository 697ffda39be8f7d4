//! Turns the caller's `(input, init)` into the request every attempt sends:
//! one `Request`, cloned per attempt, carrying the idempotency key and, for
//! a non-idempotent request, `redirect: 'manual'` (so a 3xx is a response,
//! never a hidden second hop).

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortSignal, ReadableStream, Request};

use super::bind::{get, random_uuid, Obj};
use super::options::Key;
use crate::policy::classify::Safety;
use crate::policy::report::{secrets_of, CREDENTIAL_HEADERS};

pub struct Prepared {
    pub request: Request,
    pub safety: Safety,
    /// The body can be sent again (it is not a one-shot stream).
    pub replayable: bool,
    /// The body is a caller's `ReadableStream`.
    pub streamed: bool,
    pub url: String,
    /// Credential values to scrub from body snippets.
    pub secrets: Vec<String>,
    pub signal: Option<AbortSignal>,
}

fn construct_request(input: &JsValue, init: &JsValue) -> Result<Request, JsValue> {
    let ctor: Function = get(&js_sys::global(), "Request").dyn_into()?;
    let args = Array::of2(input, init);
    Reflect::construct(&ctor, &args)?.dyn_into()
}

/// `init` with extra properties, leaving the caller's object untouched.
fn with(init: &JsValue, extra: &Obj) -> JsValue {
    let copy = Object::assign(&Object::new(), init.unchecked_ref());
    Object::assign(&copy, &extra.0).into()
}

/// Builds the request; throws what `fetch` itself would throw for bad input.
pub fn prepare(input: &JsValue, init: &JsValue, key: &Key) -> Result<Prepared, JsValue> {
    let init = if init.is_object() { init.clone() } else { Object::new().into() };
    let streamed = get(&init, "body").dyn_ref::<ReadableStream>().is_some();
    let half_duplex = Obj::new();
    if streamed {
        half_duplex.set("duplex", "half");
    }
    let mut request = construct_request(input, &with(&init, &half_duplex))?;
    let headers = request.headers();
    let given = match key {
        Key::Given(k) => Some(k.clone()),
        Key::Generate => Some(random_uuid()),
        Key::None => None,
    };
    if let Some(k) = &given {
        headers.set("Idempotency-Key", k)?;
    }
    let has_key = headers.has("Idempotency-Key").unwrap_or(false);
    let safety = Safety::of(&request.method(), has_key);
    if !safety.repeatable() {
        half_duplex.set("redirect", "manual");
        request = construct_request(&request, &half_duplex.0)?;
    }
    let mut secrets = Vec::new();
    for name in CREDENTIAL_HEADERS {
        if let Ok(Some(value)) = request.headers().get(name) {
            secrets_of(&value, &mut secrets);
        }
    }
    let signal = match get(&init, "signal").dyn_into::<AbortSignal>() {
        Ok(s) => Some(s),
        Err(_) => input.dyn_ref::<Request>().map(Request::signal),
    };
    let input_used = input.dyn_ref::<Request>().is_some_and(Request::body_used);
    Ok(Prepared {
        url: request.url(),
        request,
        safety,
        replayable: !streamed && !input_used,
        streamed,
        secrets,
        signal,
    })
}
