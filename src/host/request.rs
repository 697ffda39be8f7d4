//! Turns the caller's `(input, init)` into what every attempt sends. A URL
//! input is sent as `fetch(input, init)` with our own `init` copy (no
//! `Request` is built: each costs an `AbortSignal` and a headers copy); a
//! `Request` input is cloned per attempt. Either way the request carries
//! the idempotency key. Redirects: see `policy::redirect` and
//! `transport::FetchTransport::attempt`.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortSignal, Headers, Request};

use super::bind::{get, get_string, random_uuid};
use super::options::Key;
use super::props::{Init, Url};
use super::replay::has_body;
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

impl Fate {
    /// Read only for the modes whose fate depends on the origin.
    fn read(mode: Option<String>, url: &str, own: &Init, request: Option<&Request>) -> Fate {
        if !matches!(mode.as_deref(), Some("same-origin" | "no-cors")) {
            return Fate::default();
        }
        let integrity = [get(own, "integrity"), request.map_or(JsValue::UNDEFINED, |r| get(r, "integrity"))]
            .iter()
            .find(|v| !v.is_undefined())
            .and_then(JsValue::as_string)
            .is_some_and(|i| !i.is_empty());
        let caller = get_string(&get(&js_sys::global(), "location"), "origin");
        let cross_origin = caller.map(|origin| {
            let target = Url::parse(&JsValue::from_str(url), &JsValue::from_str(&origin));
            target.map_or(true, |t| t.origin() != origin)
        });
        Fate { mode, integrity, cross_origin }
    }
}

pub(super) fn construct_request(input: &JsValue, init: &JsValue) -> Result<Request, JsValue> {
    let ctor: Function = get(&js_sys::global(), "Request").dyn_into()?;
    Reflect::construct(&ctor, &Array::of2(input, init))?.dyn_into()
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
    /// The URL as the caller gave it (a string, a `URL`'s `href`, a
    /// `Request`'s `url`); empty when it is none of these.
    pub url: String,
    /// `init.method` when it is a string, else the `Request`'s own.
    pub method: Option<String>,
    /// `init.redirect`/`mode` when a string, else the `Request`'s own.
    pub redirect: Option<String>,
    pub mode: Option<String>,
    /// [`REQUEST`], [`STREAMED`], [`FAKE_REQUEST`], [`FAKE_SIGNAL`], [`HEADERS`], [`NO_SIGNAL`].
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
        }
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

/// Builds what each attempt sends from our copy of `init`; throws what
/// `fetch` itself would throw for a bad request.
pub fn prepare(given: Given, key: &Key) -> Result<Prepared, Unprepared> {
    let Given { input, mut own, signal, url, method, redirect, mode, flags } = given;
    // A stream body goes as the caller sent it: without `duplex: "half"`
    // `fetch` refuses it, and so do we (the rejection is the host's).
    let streamed = flags & STREAMED != 0;
    let request = (flags & REQUEST != 0).then(|| input.unchecked_ref::<Request>());
    if flags & FAKE_REQUEST != 0 {
        return Err(js_sys::TypeError::new("saferetry: `input` looks like a Request but is not one").into());
    }
    if flags & FAKE_SIGNAL != 0 {
        return Err(
            js_sys::TypeError::new("saferetry: `signal` looks like an AbortSignal but is not one").into()
        );
    }
    // `init.signal: null` drops a Request's own signal, as in `fetch`.
    let signal = match flags & NO_SIGNAL {
        0 => signal.or_else(|| request.map(Request::signal)),
        _ => None,
    };
    if let Some(aborted) = signal.as_ref().filter(|s| s.aborted()) {
        // Nothing is sent: the engine ends the call with the reason.
        let request_input = request;
        let request = built(construct_request(&input, &own), &input, &own)?;
        aborted_before(&request, aborted);
        used_up(request_input);
        let method = String::from(normalize_method(&request.method()));
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
    let given = match key {
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
    let init_headers = (flags & HEADERS != 0).then(|| own.headers());
    let headers = if init_headers.is_some() || given.is_some() {
        let source = init_headers.or_else(|| request.map(|r| r.headers().into()));
        let h = match source {
            Some(source) => Headers::new_with_headers(source.unchecked_ref()),
            None => Headers::new(),
        };
        match (h, &given) {
            (Ok(h), Some(k)) => {
                h.set("Idempotency-Key", k)?;
                own.set_headers(&h);
                Some(h)
            }
            (h, _) => h.ok(),
        }
    } else {
        request.map(Request::headers)
    };
    let has_key = headers.as_ref().is_some_and(|h| h.has("Idempotency-Key").unwrap_or(false));
    // `init.method` wins over a Request's own, as in `fetch(request, init)`.
    let method = String::from(normalize_method(method.as_deref().unwrap_or("GET")));
    let safety = Safety::of(&method, has_key);
    // A URL, method or mode `fetch` refuses is left to `fetch`: its own
    // error ends the call at once (`policy::runtime::refused`), and where a
    // runtime sends what the standard forbids, so do we.
    let same_origin = mode.as_deref() == Some("same-origin");
    let fate = Fate::read(mode, &url, &own, request);
    let input = match request {
        // Fold our changes into the Request once, so attempts only clone it.
        // Its body is taken now, at the call, as `fetch` takes it: the
        // caller's Request is used (a used one throws `fetch`'s TypeError).
        Some(r) if Object::keys(&own).length() > 0 || has_body(r) => {
            keep_referrer(&own, r);
            let r = built(construct_request(r, &own), &input, &own)?;
            used_up(request);
            own = Object::new().unchecked_into();
            r.into()
        }
        _ => input.clone(),
    };
    if let Some(r) = input.dyn_ref::<Request>() {
        keep_referrer(&own, r);
    }
    let is_request = request.is_some();
    Ok(Prepared {
        input,
        is_request,
        init: own,
        safety,
        method,
        replayable: !streamed,
        streamed,
        signal,
        redirect,
        same_origin,
        fate,
    })
}

/// A Request we built, or, when the constructor threw, `fetch` to be
/// asked (see [`Unprepared`]).
fn built(request: Result<Request, JsValue>, input: &JsValue, own: &Init) -> Result<Request, Unprepared> {
    request.map_err(|error| Unprepared { error, to_host: Some((input.clone(), JsValue::from(own).unchecked_into())) })
}

/// A Request sent with an `init` (each attempt's has our signal) loses its
/// referrer and referrer policy (the Request constructor resets both when
/// `init` is not empty): `init` carries the Request's own unless it has
/// its own.
fn keep_referrer(init: &Init, request: &Request) {
    // (workerd's Request has neither.)
    if let Some(referrer) = get_string(request, "referrer").filter(|_| init.referrer().is_undefined()) {
        init.set_referrer(&referrer);
    }
    if let Some(policy) = get_string(request, "referrerPolicy").filter(|_| init.referrer_policy().is_undefined()) {
        init.set_referrer_policy(&policy);
    }
}

/// The caller's Request, once we built ours from it: a runtime whose
/// constructor copies the body (Bun) leaves it unused, so it is used up
/// here, as `fetch` leaves it.
fn used_up(caller: Option<&Request>) {
    if let Some(body) = caller.filter(|c| !c.body_used()).and_then(Request::body) {
        let _ = body.cancel();
    }
}

/// A call whose signal had aborted before it: as `fetch` (the Fetch
/// standard's "abort the fetch() call"), its Request (built first, so an
/// invalid `init` rejects with the constructor's `TypeError`, not the
/// abort; a Request input's body is taken) has its body cancelled at once
/// with the abort's reason.
fn aborted_before(request: &Request, signal: &AbortSignal) {
    if let Some(body) = request.body() {
        let _ = body.cancel_with_reason(&signal.reason());
    }
}

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
