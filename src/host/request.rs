//! Turns the caller's `(input, init)` into what every attempt sends. A URL
//! input is sent as `fetch(input, init)` with our own `init` copy (no
//! `Request` is built: each costs an `AbortSignal` and a headers copy); a
//! `Request` input is cloned per attempt. Either way the request carries
//! the idempotency key. Redirects: see `policy::redirect` and
//! `transport::FetchTransport::attempt`.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Array, Object};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortSignal, Headers, Request};

use super::bind::{get_string, random_uuid};
use super::glue::Glue;
use super::options::Key;
use super::props::Init;
use crate::policy::classify::{normalize_method, Safety};
use crate::policy::report::{secrets_of, CREDENTIAL_HEADERS};

pub struct Prepared {
    /// A URL (string or `URL`) or a `Request`.
    pub input: JsValue,
    /// `input` is a `Request`.
    pub is_request: bool,
    /// Our copy of the caller's init; each attempt sets its own `signal`.
    pub init: Init,
    pub safety: Safety,
    /// The method, normalised as `fetch` does.
    pub method: String,
    /// The body can be sent again (it is not a one-shot stream).
    pub replayable: bool,
    /// The body is a caller's `ReadableStream`.
    pub streamed: bool,
    pub signal: Option<AbortSignal>,
    /// The caller's `redirect` (`init`'s, else the Request's).
    pub redirect: Option<String>,
    /// `mode: "same-origin"`: a redirect to another origin is refused.
    pub same_origin: bool,
    /// What says whether the request fails whatever the network does
    /// (`policy::runtime::doomed`): its mode, whether it carries integrity
    /// metadata, whether its URL is of another origin than the caller's.
    pub fate: Fate,
}

#[derive(Default)]
pub struct Fate {
    pub mode: Option<String>,
    pub integrity: bool,
    pub cross_origin: Option<bool>,
}

/// Only these modes' fate depends on the origin: only for them are the
/// facts read (the glue's `prepare`).
fn fate_needed(mode: Option<&str>) -> bool {
    matches!(mode, Some("same-origin" | "no-cors"))
}

/// What the glue read of a call's `input` and `init` (core.js `callOf`),
/// in one pass there instead of a crossing per property here. It reads
/// and copies; what is refused, and why, is decided in [`prepare`].
pub struct Given {
    /// A URL (string or `URL`) or a `Request`.
    pub input: JsValue,
    /// Our copy of the caller's `init`, without our `retry` options.
    pub own: Init,
    /// `init.signal`, when it is an `AbortSignal`.
    pub signal: Option<AbortSignal>,
    /// The signal `fetch` would follow: `init.signal`, else the
    /// `Request`'s own (none when `init.signal` is `null`).
    pub followed: Option<AbortSignal>,
    /// The URL as the caller gave it (a string, a `URL`'s `href`, a
    /// `Request`'s `url`); empty when it is none of these.
    pub url: String,
    /// `init.method` when it is a string, else the `Request`'s own.
    pub method: Option<String>,
    /// The `Request`'s own method.
    pub request_method: Option<String>,
    /// `init.redirect`/`mode` when a string, else the `Request`'s own.
    pub redirect: Option<String>,
    pub mode: Option<String>,
    /// [`REQUEST`], [`STREAMED`], [`FAKE_REQUEST`], [`FAKE_SIGNAL`],
    /// [`HEADERS`], [`NO_SIGNAL`], [`ABORTED`], [`OWN_KEYS`],
    /// [`BODY_STREAM`], [`BODY_UNKNOWN`].
    pub flags: u32,
}

/// `input` is a `Request`.
pub const REQUEST: u32 = 1;
/// `init.body` is a `ReadableStream`.
pub const STREAMED: u32 = 2;
/// `input` passes `instanceof Request` but its `method` getter throws or
/// is not a string (`Object.create(Request.prototype)`, a Proxy).
pub const FAKE_REQUEST: u32 = 4;
/// `init.signal` passes `instanceof AbortSignal` but `aborted` throws.
pub const FAKE_SIGNAL: u32 = 8;
/// `init.headers` is not `undefined`.
pub const HEADERS: u32 = 16;
/// `init.signal` is `null`: a `Request` input's own signal is dropped.
pub const NO_SIGNAL: u32 = 32;
/// The signal `fetch` would follow had aborted before the call.
pub const ABORTED: u32 = 64;
/// Our copy of `init` has properties of its own.
pub const OWN_KEYS: u32 = 128;
/// The `Request`'s `body` is a stream.
pub const BODY_STREAM: u32 = 256;
/// The `Request` has no `body` property (Firefox).
pub const BODY_UNKNOWN: u32 = 512;

impl Given {
    /// The glue's `callOf(input, init)` answer, read element by element
    /// (a poll's submit and status request: once each per operation).
    pub fn from_array(a: &Array) -> Given {
        Given {
            input: a.get(0),
            own: a.get(1).unchecked_into(),
            signal: a.get(3).dyn_into().ok(),
            url: a.get(4).as_string().unwrap_or_default(),
            method: a.get(5).as_string(),
            redirect: a.get(6).as_string(),
            mode: a.get(7).as_string(),
            flags: a.get(8).as_f64().map_or(0, |f| f as u32),
            request_method: a.get(9).as_string(),
            followed: a.get(10).dyn_into().ok(),
        }
    }

    /// Whether the `Request` has (or, where the host hides it, may have)
    /// a body.
    fn request_body(&self) -> bool {
        let hidden = self.flags & BODY_UNKNOWN != 0 && !matches!(self.request_method.as_deref(), Some("GET" | "HEAD"));
        self.flags & BODY_STREAM != 0 || hidden
    }
}

/// Why a call has nothing to send: an error of ours (`to_host` `None`),
/// or the Request constructor's, where `fetch` itself must be asked, once,
/// with `to_host` (the input and our `init`): it throws the same error in
/// its own words (a browser names `fetch`, not the constructor).
pub struct Unprepared {
    pub error: JsValue,
    pub to_host: Option<(JsValue, Init)>,
}

impl<E: Into<JsValue>> From<E> for Unprepared {
    fn from(error: E) -> Unprepared {
        Unprepared { error: error.into(), to_host: None }
    }
}

/// Decides what each attempt sends, and has the glue (`prepare`,
/// `abortBefore`: js/src/request.js) take the steps `fetch` itself would:
/// throws what `fetch` would throw for a bad request.
pub fn prepare(glue: &Glue, given: Given, key: &Key) -> Result<Prepared, Unprepared> {
    let is_request = given.flags & REQUEST != 0;
    let has_body = is_request && given.request_body();
    let Given { input, own, url, method, redirect, mode, flags, followed, .. } = given;
    // A stream body goes as the caller sent it: without `duplex: "half"`
    // `fetch` refuses it, and so do we (the rejection is the host's).
    let streamed = flags & STREAMED != 0;
    if flags & FAKE_REQUEST != 0 {
        return Err(js_sys::TypeError::new("saferetry: `input` looks like a Request but is not one").into());
    }
    if flags & FAKE_SIGNAL != 0 {
        return Err(
            js_sys::TypeError::new("saferetry: `signal` looks like an AbortSignal but is not one").into()
        );
    }
    // `init.signal: null` drops a Request's own signal, as in `fetch`.
    let signal = followed.filter(|_| flags & NO_SIGNAL == 0);
    // `init.method` wins over a Request's own, as in `fetch(request, init)`.
    let method = String::from(normalize_method(method.as_deref().unwrap_or("GET")));
    if let Some(aborted) = signal.as_ref().filter(|_| flags & ABORTED != 0) {
        // Nothing is sent: the engine ends the call with the reason.
        let request = glue
            .abort_before(&input, &own, aborted, is_request)
            .map_err(|error| Unprepared { error, to_host: Some((input, own)) })?;
        return Ok(Prepared {
            safety: Safety::of(&method, false),
            method,
            input: request.into(),
            is_request: true,
            init: Object::new().unchecked_into(),
            replayable: false,
            streamed,
            signal,
            redirect,
            same_origin: false,
            fate: Fate::default(),
        });
    }
    let key = match key {
        Key::Given(k) => Some(k.clone()),
        Key::Generate => Some(random_uuid().map_err(|_| {
            js_sys::TypeError::new("saferetry: `idempotencyKey: true` needs crypto.randomUUID (a secure context); pass a string key")
        })?),
        Key::None => None,
    };
    // The caller's headers are read (for a key) as a `Headers`, but sent
    // as the caller gave them (pairs stay pairs) unless a key must be added
    // (never on the caller's own Request object). Headers `fetch` refuses
    // are left to `fetch`: its own error ends the call.
    let headers = match (flags & HEADERS != 0, is_request, key.is_some()) {
        (true, _, _) => COPY_INIT,
        (false, true, true) => COPY_REQUEST,
        (false, false, true) => NEW,
        (false, _, false) => NONE,
    };
    // A URL, method or mode `fetch` refuses is left to `fetch`: its own
    // error ends the call at once (`policy::runtime::refused`), and where a
    // runtime sends what the standard forbids, so do we.
    let same_origin = mode.as_deref() == Some("same-origin");
    let fate = fate_needed(mode.as_deref());
    // Fold our changes into the Request once, so attempts only clone it.
    // Its body is taken now, at the call, as `fetch` takes it: the caller's
    // Request is used (a used one throws `fetch`'s TypeError).
    let fold = is_request && (flags & OWN_KEYS != 0 || key.is_some() || has_body);
    if !is_request && headers == NONE && !fate {
        // Nothing to copy, read or build: the caller's values go as they are.
        let fate = Fate::default();
        let safety = Safety::of(&method, false);
        return Ok(Prepared { input, is_request, init: own, safety, method, replayable: !streamed, streamed, signal, redirect, same_origin, fate });
    }
    let ready = glue.prepare(&input, &own, is_request, headers, key.as_deref(), fate, fold, &url)?;
    let (input, own) = (ready.get(0), ready.get(1).unchecked_into());
    let refused = ready.get(5);
    if !refused.is_undefined() {
        return Err(Unprepared { error: refused, to_host: Some((input, own)) });
    }
    let has_key = ready.get(2).is_truthy();
    let fate = match fate {
        true => Fate { mode, integrity: ready.get(3).is_truthy(), cross_origin: ready.get(4).as_bool() },
        false => Fate::default(),
    };
    Ok(Prepared {
        input,
        is_request,
        init: own,
        safety: Safety::of(&method, has_key),
        method,
        replayable: !streamed,
        streamed,
        signal,
        redirect,
        same_origin,
        fate,
    })
}

/// The glue's `prepare`'s headers step: none, a copy of `init.headers`, a
/// copy of the `Request`'s, new ones.
const NONE: u8 = 0;
const COPY_INIT: u8 = 1;
const COPY_REQUEST: u8 = 2;
const NEW: u8 = 3;

/// `init.headers` in any form `fetch` takes (a `Headers`, a record, pairs)
/// as a fresh `Headers`; `None` when there are none or they are invalid.
pub fn headers_of(init_headers: &JsValue) -> Option<Headers> {
    if init_headers.is_undefined() {
        return None;
    }
    Headers::new_with_headers(init_headers.unchecked_ref()).ok()
}

impl Prepared {
    /// The input, when it is a `Request`.
    pub fn request(&self) -> Option<&Request> {
        self.is_request.then(|| self.input.unchecked_ref())
    }

    /// The request's URL, for matching it inside an error message.
    pub fn url(&self) -> String {
        match self.request() {
            Some(r) => r.url(),
            None => get_string(&self.input, "href").or_else(|| self.input.as_string()).unwrap_or_default(),
        }
    }

    /// The credential values to scrub from a body snippet (computed only
    /// when a snippet is made).
    pub fn secrets(&self) -> Vec<String> {
        let headers = match self.request() {
            Some(r) => Some(r.headers()),
            None => headers_of(&self.init.headers()),
        };
        let mut out = Vec::new();
        for name in CREDENTIAL_HEADERS {
            if let Some(Ok(Some(value))) = headers.as_ref().map(|h| h.get(name)) {
                secrets_of(&value, &mut out);
            }
        }
        out
    }
}
