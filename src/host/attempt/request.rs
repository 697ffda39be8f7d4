//! Turns the caller's `(input, init)` into what every attempt sends. A URL
//! input is sent as `fetch(input, init)` with our own `init` copy (no
//! `Request` is built: each costs an `AbortSignal` and a headers copy); a
//! `Request` input is cloned per attempt. Either way the request carries
//! the idempotency key. Redirects: see `policy::redirect` and
//! `transport::FetchTransport::attempt`.

use alloc::string::String;
use alloc::vec::Vec;
use wasm_bindgen::JsValue;

use crate::host::shared::bind::random_uuid;
use crate::host::operation::glue::Glue;
use crate::policy::classify::{normalize_method, Safety};
use crate::policy::report::{secrets_of, CREDENTIAL_HEADERS};

/// The caller's idempotency key (`idempotencyKey`, read by
/// `api::options`): none, one to generate per operation, or the caller's.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Key {
    #[default]
    None,
    Generate,
    Given(String),
}

pub struct Prepared {
    /// The call as the executor holds it (js/src/attempts.js): its input
    /// (a URL or a `Request`), our copy of the caller's init (each attempt
    /// sets its own `signal`), the signal `fetch` follows. Held for the
    /// whole operation by its future ([`Given::call`]'s owner).
    pub call: u32,
    /// The input is a `Request`.
    pub is_request: bool,
    /// The `Request`'s body, as the host shows it.
    pub body: Body,
    /// The URL as the caller gave it.
    pub url: String,
    pub safety: Safety,
    /// The method, normalised as `fetch` does.
    pub method: String,
    /// The body can be sent again (it is not a one-shot stream).
    pub replayable: bool,
    /// The body is a caller's `ReadableStream`.
    pub streamed: bool,
    /// The call has a signal `fetch` follows (the caller's).
    pub signal: bool,
    /// The global `fetch` it goes to is a wrapper ([`WRAPPED`]).
    pub wrapped: bool,
    /// The caller's `redirect` (`init`'s, else the Request's).
    pub redirect: Option<String>,
    /// `mode: "same-origin"`: a redirect to another origin is refused (by
    /// the hops, which the browser's module has not: src/host/attempt/nohops.rs).
    #[cfg_attr(feature = "browser", allow(dead_code))]
    pub same_origin: bool,
    /// What says whether the request fails whatever the network does
    /// (`policy::runtime::doomed`): its mode, whether it carries integrity
    /// metadata, whether its URL is of another origin than the caller's.
    pub fate: Fate,
}

/// A `Request`'s body as the host shows it (js/src/request.js `bodyOf`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Body {
    None,
    Stream,
    /// Firefox's `Request` has no `body` property: only a method that
    /// carries one says there may be a body.
    Hidden,
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
    /// The call as the executor holds it: the input, our copy of the
    /// caller's `init` (without our `retry` options), the signal `fetch`
    /// would follow (`init.signal`, else the `Request`'s own; none when
    /// `init.signal` is `null`). Its owner ([`Held`]) is the operation's.
    pub call: u32,
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
    /// [`HEADERS`], [`ABORTED`], [`OWN_KEYS`],
    /// [`BODY_STREAM`], [`BODY_UNKNOWN`], [`SIGNAL`], [`WRAPPED`].
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
/// The signal `fetch` would follow had aborted before the call.
pub const ABORTED: u32 = 64;
/// Our copy of `init` has properties of its own.
pub const OWN_KEYS: u32 = 128;
/// The `Request`'s `body` is a stream.
pub const BODY_STREAM: u32 = 256;
/// The `Request` has no `body` property (Firefox).
pub const BODY_UNKNOWN: u32 = 512;
/// The call has a signal `fetch` would follow.
pub const SIGNAL: u32 = 1024;
/// The global `fetch` the call goes to is a wrapper installed after the
/// package loaded (js/src/core.js `throughWrapper`: a test tool's, an
/// instrumentation's): it may answer any `Response`.
pub const WRAPPED: u32 = 2048;

impl Given {
    /// Whether the `Request` has (or, where the host hides it, may have)
    /// a body.
    fn request_body(&self) -> bool {
        let hidden = self.flags & BODY_UNKNOWN != 0 && !matches!(self.request_method.as_deref(), Some("GET" | "HEAD"));
        self.flags & BODY_STREAM != 0 || hidden
    }
}

/// Why a call has nothing to send: an error of ours (`to_host` `None`),
/// or the Request constructor's, where `fetch` itself must be asked, once,
/// with the call as the glue left it (`to_host`): it throws the same
/// error in its own words (a browser names `fetch`, not the constructor).
pub struct Unprepared {
    pub error: JsValue,
    pub to_host: bool,
}

impl<E: Into<JsValue>> From<E> for Unprepared {
    fn from(error: E) -> Unprepared {
        Unprepared { error: error.into(), to_host: false }
    }
}

/// Decides what each attempt sends, and has the glue (`prepare`,
/// `abortBefore`: js/src/request.js) take the steps `fetch` itself would:
/// throws what `fetch` would throw for a bad request.
pub fn prepare(glue: &Glue, given: Given, key: &Key) -> Result<Prepared, Unprepared> {
    let is_request = given.flags & REQUEST != 0;
    let has_body = is_request && given.request_body();
    let Given { call, url, method, redirect, mode, flags, .. } = given;
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
    // `init.signal: null` drops a Request's own signal, as in `fetch`
    // (core.js `callOf` holds none then).
    let signal = flags & SIGNAL != 0;
    let wrapped = flags & WRAPPED != 0;
    // `init.method` wins over a Request's own, as in `fetch(request, init)`.
    let method = String::from(normalize_method(method.as_deref().unwrap_or("GET")));
    if signal && flags & ABORTED != 0 {
        // Nothing is sent: the engine ends the call with the reason.
        if let Err(error) = glue.abort_before(call, is_request) {
            return Err(Unprepared { error, to_host: true });
        }
        return Ok(Prepared {
            safety: Safety::of(&method, false),
            method,
            call,
            is_request: true,
            body: Body::None,
            url,
            replayable: false,
            streamed,
            signal,
            wrapped,
            redirect,
            same_origin: false,
            fate: Fate::default(),
        });
    }
    let key = match key {
        Key::Given(k) => Some(k.clone()),
        Key::Generate => Some(random_uuid().ok_or_else(|| {
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
        let (fate, body) = (Fate::default(), Body::None);
        let safety = Safety::of(&method, false);
        return Ok(Prepared { call, is_request, body, url, safety, method, replayable: !streamed, streamed, signal, wrapped, redirect, same_origin, fate });
    }
    let ready = match glue.prepare(call, is_request, headers, key.as_deref(), fate, fold, &url) {
        Ok(ready) => ready,
        Err(error) => return Err(Unprepared { error, to_host: false }),
    };
    let refused = ready.get(3);
    if !refused.is_undefined() {
        return Err(Unprepared { error: refused, to_host: true });
    }
    let has_key = ready.get(0).is_truthy();
    let fate = match fate {
        true => Fate { mode, integrity: ready.get(1).is_truthy(), cross_origin: ready.get(2).as_bool() },
        false => Fate::default(),
    };
    let body = match ready.get(4).as_f64() {
        Some(1.0) => Body::Stream,
        Some(2.0) => Body::Hidden,
        _ => Body::None,
    };
    Ok(Prepared {
        call,
        is_request,
        body,
        url,
        safety: Safety::of(&method, has_key),
        method,
        replayable: !streamed,
        streamed,
        signal,
        wrapped,
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

impl Prepared {
    /// The call whose signal the operation follows (the executor listens
    /// to it), or 0: none.
    pub fn listened(&self) -> u32 {
        if self.signal {
            self.call
        } else {
            0
        }
    }

    /// The credential values to scrub from a body snippet (read only when
    /// a snippet is made): the request's headers the executor reads
    /// (js/src/attempts.js `requestHeader`).
    pub fn secrets(&self, glue: &Glue) -> Vec<String> {
        let mut out = Vec::new();
        for name in CREDENTIAL_HEADERS {
            if let Some(value) = glue.request_header(self.call, self.is_request, name) {
                secrets_of(&value, &mut out);
            }
        }
        out
    }
}
