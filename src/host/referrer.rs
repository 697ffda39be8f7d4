//! The referrer of the redirect hops we follow (`policy::referrer` says
//! what it is): read once, at the first redirect, from the request, and
//! handed to each hop's `fetch` as exactly the referrer to send.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Headers, Request, Response};

use super::bind::{get, get_string};
use super::props::{header, Init, Url, REFERRER_POLICY};
use crate::policy::redirect::hop_origin;
use crate::policy::referrer::{determine, Policy, Referrer};

/// The referrer and origin state of one request's hops.
pub struct Hops {
    policy: Policy,
    /// The request's referrer now (`None`: no referrer).
    current: Option<Referrer>,
    /// The caller's origin, and the request's response tainting ("cors")
    /// and tainted-origin flag so far (see `policy::redirect::hop_origin`).
    client: Option<String>,
    cors: bool,
    tainted: bool,
}

impl Hops {
    /// The state after the first request (to `first`, an origin), which
    /// the host sent with the caller's `init` (else the Request's own
    /// referrer and policy).
    pub fn first(init: &Init, request: Option<&Request>, first: &str) -> Hops {
        let given = |own: JsValue, name: &str| own.as_string().or_else(|| request.and_then(|r| get_string(r, name)));
        let policy = given(init.referrer_policy(), "referrerPolicy")
            .and_then(|p| Policy::parse(&p))
            .unwrap_or(Policy::DEFAULT);
        let client = client();
        let source = match given(init.referrer(), "referrer").as_deref() {
            Some("") => None,
            None | Some("about:client") => client.clone(),
            Some(url) => stripped(url),
        };
        let current = source.and_then(|s| determine(policy, &s, first));
        let client = client.map(|c| c.origin);
        let cors = client.as_deref().is_some_and(|c| c != first);
        Hops { policy, current, client, cors, tainted: false }
    }

    /// Follows a redirect `response` from origin `here` to a URL of origin
    /// `next` with `method`: its `Referrer-Policy` applies from here on;
    /// `init` (the next hop's) gets the referrer the standard sends, and the
    /// `Origin` the host would not add.
    pub fn follow(&mut self, response: &Response, here: &str, next: &str, method: &str, init: &Init) {
        if let Some(client) = &self.client {
            self.tainted |= here != next && client != here;
            self.cors |= client != next;
            if let Some(origin) = hop_origin(client, method, self.cors, self.tainted) {
                let _ = init.headers().unchecked_into::<Headers>().set("Origin", origin);
            }
        }
        if let Some(policy) = header(&response.headers(), &REFERRER_POLICY).and_then(|v| Policy::from_header(&v)) {
            self.policy = policy;
        }
        self.current = self.current.take().and_then(|r| determine(self.policy, &r, next));
        match &self.current {
            // Sent exactly as it is: `unsafe-url` keeps a stripped URL whole.
            Some(r) => {
                init.set_referrer(&r.url);
                init.set_referrer_policy("unsafe-url");
            }
            None => {
                init.set_referrer("");
                init.set_referrer_policy("no-referrer");
            }
        }
    }
}

/// The caller's environment as referrer source: undici's global origin
/// (Node), else `location` (Deno with `--location`); none elsewhere here.
fn client() -> Option<Referrer> {
    let global = js_sys::global();
    let undici = js_sys::Reflect::get(&global, &js_sys::Symbol::for_("undici.globalOrigin.1").into())
        .unwrap_or(JsValue::UNDEFINED);
    [undici, get(&global, "location")].iter().filter(|v| v.is_object()).find_map(|v| get_string(v, "href")).and_then(|url| stripped(&url))
}

fn parse(url: &str) -> Option<Url> {
    Url::parse(&JsValue::from_str(url), &JsValue::UNDEFINED).ok()
}

fn stripped(url: &str) -> Option<Referrer> {
    parse(url).and_then(|u| strip(&u))
}

/// "Strip url for use as a referrer": no credentials, no fragment; a local
/// scheme is no referrer.
fn strip(url: &Url) -> Option<Referrer> {
    if matches!(url.protocol().as_str(), "about:" | "blob:" | "data:") {
        return None;
    }
    let url = Url::parse(&JsValue::from_str(&url.url_href()), &JsValue::UNDEFINED).ok()?;
    url.set_username("");
    url.set_password("");
    url.set_hash("");
    Some(Referrer { url: url.url_href(), origin: url.origin() })
}
