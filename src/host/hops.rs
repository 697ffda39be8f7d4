//! Following redirects hop by hop inside one attempt, where
//! `policy::redirect` says we follow them: each hop is a `fetch` with
//! `redirect: "manual"`, so a failure knows which hop it happened on.

use alloc::string::String;
use js_sys::Object;
use wasm_bindgen::{JsCast, JsValue};
use super::io::awaited;
use web_sys::{AbortController, Headers, Response};

use super::caller::assign;
use super::glue::Facts;
use super::props::{header, Init, Url, LOCATION, REDIRECTED, TYPE};
use super::referrer::Hops;
use super::request::headers_of;
use super::transport::{define_value, delivered, failed, not_sent, FetchTransport};
use crate::engine::Failed;
use crate::policy::classify::{normalize_method, Failure, Stage};
use crate::policy::redirect::{
    check_hop, is_redirect, next_hop, stage_on_hop, Hop, Unfollowable, BODY_HEADERS, CROSS_ORIGIN_DROPPED,
};
use crate::policy::referrer::location_utf8;
use crate::policy::runtime::cross_origin_redirect_is_cors;

/// `fetch(input, init)`, then every redirect `fetch` would follow, hop by
/// hop; the final response (`redirected` set when there was a hop) and
/// what was read of it. A
/// redirect `fetch` would refuse (see `policy::redirect::check_hop`) is a
/// `TypeError` that repeating cannot change.
pub async fn fetch_following(
    t: &FetchTransport,
    input: JsValue,
    init: &Init,
    controller: &AbortController,
) -> Result<(Response, Facts), Failed<JsValue>> {
    let mut hop = 0u32;
    let first: &JsValue = init.as_ref();
    let (mut input, mut init): (JsValue, Init) = (input, first.clone().unchecked_into());
    let mut origin: Option<String> = None;
    // A hop reached another origin than the first request's.
    let mut crossed = false;
    // The hops' referrer, read at the first redirect.
    let mut referrer: Option<Hops> = None;
    loop {
        let promise = t.dispatch(&input, &init, controller, true).map_err(|e| on_hop(not_sent(e), hop))?;
        let response: Response =
            awaited(promise).await.map_err(|e| on_hop(t.fetch_failed(e), hop))?.unchecked_into();
        let mut facts = Facts::read(&t.glue, &response).map_err(delivered)?;
        // Only a redirect with a `Location` costs more than this one read.
        let location = match is_redirect(facts.status) {
            true => header(&response.headers(), &LOCATION),
            false => None,
        };
        let location = location.map(|l| String::from(location_utf8(&l)));
        let Some(location) = location else {
            if hop > 0 {
                define_value(&response, &REDIRECTED, &JsValue::TRUE);
            }
            if crossed && cross_origin_redirect_is_cors(t.runtime) {
                define_value(&response, &TYPE, &JsValue::from_str("cors"));
                facts.kind = Some(String::from("cors"));
            }
            return Ok((response, facts));
        };
        let here = Url::parse(&JsValue::from_str(&response.url()), &JsValue::UNDEFINED).ok();
        let there = here.as_ref().map(|h| Url::parse(&JsValue::from_str(&location), &h.url_href().into()));
        let first_origin = origin.get_or_insert_with(|| here.as_ref().map(Url::origin).unwrap_or_default());
        let target =
            there.as_ref().and_then(|u| u.as_ref().ok()).map(|u| (u.protocol(), u.origin() == *first_origin));
        let checked =
            check_hop(hop, target.as_ref().map(|(p, same)| (p.as_str(), *same)), t.prepared.same_origin);
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        let (Ok(()), Some(Ok(there)), Some(here)) = (checked, &there, here) else {
            // An unparsable `Location`'s cause is the URL parser's own error.
            let why = checked.err().unwrap_or(Unfollowable::BadLocation);
            let parser = there.and_then(Result::err);
            let f = failed(
                Failure::Refused(Stage::MaybeDelivered),
                "redirect",
                "TypeError",
                Some(network_error(why, parser)),
            );
            return Err(f);
        };
        crossed |= target.is_some_and(|(_, same)| !same);
        let method = method_of(&input, &init);
        let Some(step) = next_hop(facts.status, &method, here.origin() == there.origin()) else {
            return Ok((response, facts));
        };
        hop += 1;
        let (here_origin, there_origin) = (here.origin(), there.origin());
        let referrer = referrer.get_or_insert_with(|| Hops::first(&init, input.dyn_ref(), &here_origin));
        init = next_init(t, &input, &init, &method, step).await?;
        let next_method = if step.to_get { "GET" } else { method.as_str() };
        referrer.follow(&response, &here_origin, &there_origin, next_method, &init);
        input = JsValue::from_str(&there.url_href());
    }
}

/// The error `fetch` gives for a redirect it refuses: a `TypeError` whose
/// `cause` says why (undici's shape), or is the URL parser's own error.
fn network_error(why: Unfollowable, cause: Option<JsValue>) -> JsValue {
    let e = js_sys::TypeError::new("fetch failed");
    let cause = cause.unwrap_or_else(|| js_sys::Error::new(why.message()).into());
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("cause"), &cause);
    e.into()
}

/// A failure on a hop after the first: the request reached a server.
fn on_hop(mut f: Failed<JsValue>, hop: u32) -> Failed<JsValue> {
    f.failure = match f.failure {
        Failure::Network(stage) => Failure::Network(stage_on_hop(stage, hop)),
        Failure::Refused(stage) => Failure::Refused(stage_on_hop(stage, hop)),
        other => other,
    };
    f
}

/// The method this hop was sent with, normalised as `fetch` does.
fn method_of(input: &JsValue, init: &Init) -> String {
    let method = init
        .method()
        .as_string()
        .or_else(|| input.dyn_ref::<web_sys::Request>().map(web_sys::Request::method))
        .unwrap_or_else(|| String::from("GET"));
    String::from(normalize_method(&method))
}

/// The next hop's `init`: this hop's method, headers and body, changed as
/// the Fetch standard's HTTP-redirect fetch says.
async fn next_init(
    t: &FetchTransport,
    input: &JsValue,
    init: &Init,
    method: &str,
    step: Hop,
) -> Result<Init, Failed<JsValue>> {
    let next: Init = Object::new().unchecked_into();
    assign(&next, init).map_err(not_sent)?;
    let request = input.dyn_ref::<web_sys::Request>();
    let headers = match (headers_of(&init.headers()), request) {
        (Some(h), _) => Ok(h),
        (None, Some(r)) => Headers::new_with_headers(&r.headers()),
        (None, None) => Headers::new(),
    }
    .map_err(not_sent)?;
    if step.to_get {
        next.set_method("GET");
        next.set_body(&JsValue::UNDEFINED);
        for name in BODY_HEADERS {
            let _ = headers.delete(name);
        }
    } else {
        next.set_method(method);
        if t.prepared.streamed {
            return Err(body_not_replayable());
        }
        if request.is_some_and(|r| r.body().is_some()) {
            // The body again, from the prepared request (never from the
            // Request this hop consumed).
            let body = t.body_again().await.ok_or_else(body_not_replayable)?;
            next.set_body(&body);
        }
    }
    if step.cross_origin {
        for name in CROSS_ORIGIN_DROPPED {
            let _ = headers.delete(name);
        }
    }
    next.set_headers(&headers);
    Ok(next)
}

/// A hop that must re-send a body that cannot be sent again (`fetch`
/// fails such a redirect too).
fn body_not_replayable() -> Failed<JsValue> {
    let e = js_sys::TypeError::new(
        "saferetry: a 307/308 redirect needs the request body again, and it was a one-shot stream",
    );
    failed(
        Failure::Network(Stage::MaybeDelivered),
        "redirect-body-not-replayable",
        "TypeError",
        Some(e.into()),
    )
}
