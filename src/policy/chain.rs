//! One request's redirect chain, where we follow it hop by hop
//! ([`super::redirect::follower`] says `Us`): what each response means for
//! the chain, and the next hop's request as the Fetch standard's
//! HTTP-redirect fetch builds it (its method, body, the headers it loses,
//! its `Referer` and `Origin`). Plain values in and out: the host performs
//! each hop (js/src/hops.js) and reports what it read.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::redirect::{
    check_hop, hop_origin, is_redirect, next_hop, Unfollowable, BODY_HEADERS, CROSS_ORIGIN_DROPPED,
};
use super::referrer::{determine, location_utf8, Policy, Referrer};

/// What the chain knows of its request before the first hop.
pub struct Request {
    /// The method, normalised as `fetch` does.
    pub method: String,
    /// `mode: "same-origin"`: a redirect to another origin is refused.
    pub same_origin_mode: bool,
    /// The body is a one-shot stream: a 307/308 cannot send it again.
    pub streamed: bool,
    /// A `Request` the body can be read again from (for a 307/308 hop of a
    /// `Request` input).
    pub again: bool,
    /// The final response of a chain that reached another origin is of
    /// type "cors" (`super::runtime::cross_origin_redirect_is_cors`).
    pub cors_type: bool,
}

/// What a response is to the chain.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen<'a> {
    /// The final response: `redirected` after a hop; `cors` to be marked so.
    Final { redirected: bool, cors: bool },
    /// A redirect to follow: its `Location`, to parse against the
    /// response's URL.
    Redirect(Cow<'a, str>),
}

/// A redirect's target as the host parsed it: origins serialized, the
/// scheme with its colon (as `URL.protocol` gives it).
pub struct Target<'a> {
    /// The origin of the redirect response's URL (`None`: unparsable).
    pub here: Option<&'a str>,
    /// The `Location`'s scheme and origin (`None`: unparsable).
    pub there: Option<(&'a str, &'a str)>,
    /// The redirect's `Referrer-Policy` header.
    pub policy: Option<&'a str>,
    /// The request of this hop is a `Request` that carries a body.
    pub bodied: bool,
}

/// The first request's referrer as the host read it: its `referrer` and
/// `referrerPolicy` (`init`'s, else the `Request`'s), and, as referrer
/// sources, that referrer and the caller's environment (undici's global
/// origin, `location`) each stripped for referrer use (no credentials, no
/// fragment) as `(href, origin)`.
#[derive(Default)]
pub struct First<'a> {
    pub referrer: Option<&'a str>,
    pub policy: Option<&'a str>,
    pub stripped: Option<(&'a str, &'a str)>,
    pub client: Option<(&'a str, &'a str)>,
}

/// The next hop's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// As this hop's (a URL's `init.body`, sent again).
    Keep,
    /// None (the method became GET).
    Drop,
    /// Read again from the `Request` (never from the one this hop used).
    Again,
}

/// The next hop's request, built from this hop's.
#[derive(Debug, PartialEq, Eq)]
pub struct Step {
    pub method: String,
    pub body: Body,
    /// The headers it loses.
    pub dropped: Vec<&'static str>,
    /// The `Referer` to send exactly (`None`: none).
    pub referrer: Option<String>,
    /// The `Origin` to set, where the host's own `fetch` would add none.
    pub origin: Option<String>,
}

/// Why the chain ends with an error instead of the next hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `fetch` would refuse this redirect (its network error).
    Refused(Unfollowable),
    /// A 307/308 needs a body that cannot be sent again.
    Unreplayable,
}

/// The chain so far.
pub struct Chain {
    request: Request,
    /// Redirects followed.
    hops: u32,
    /// The status of the redirect being followed.
    status: u16,
    /// The first request's origin, read at the first redirect.
    first: Option<String>,
    /// A hop reached another origin than the first request's.
    crossed: bool,
    /// The hops' referrer, read at the first redirect.
    referrer: Option<Referring>,
}

impl Chain {
    pub fn new(request: Request) -> Chain {
        Chain { request, hops: 0, status: 0, first: None, crossed: false, referrer: None }
    }

    /// Redirects followed so far (the number of the hop being sent).
    pub fn hops(&self) -> u32 {
        self.hops
    }

    /// A response with `status` and `location` (its `Location` header, as
    /// the host gave it) arrived.
    pub fn seen<'a>(&mut self, status: u16, location: Option<&'a str>) -> Seen<'a> {
        match location.filter(|_| is_redirect(status)) {
            Some(location) => {
                self.status = status;
                Seen::Redirect(location_utf8(location))
            }
            None => Seen::Final { redirected: self.hops > 0, cors: self.crossed && self.request.cors_type },
        }
    }

    /// Follows the redirect last [`seen`](Self::seen) to `target`; `first`
    /// is read at the first redirect only.
    pub fn follow(&mut self, target: &Target, first: &First) -> Result<Step, Stop> {
        let first_origin = self.first.get_or_insert_with(|| String::from(target.here.unwrap_or_default()));
        let location = target.there.map(|(protocol, origin)| (protocol, origin == first_origin.as_str()));
        let checked = check_hop(self.hops, location, self.request.same_origin_mode);
        let (Ok(()), Some((_, there)), Some(here)) = (checked, target.there, target.here) else {
            return Err(Stop::Refused(checked.err().unwrap_or(Unfollowable::BadLocation)));
        };
        self.crossed |= location.is_some_and(|(_, same)| !same);
        // (`seen` answered a redirect status: `next_hop` has a hop for it.)
        let hop = next_hop(self.status, &self.request.method, here == there)
            .ok_or(Stop::Refused(Unfollowable::BadLocation))?;
        self.hops = self.hops.saturating_add(1);
        let body = match (hop.to_get, target.bodied) {
            (true, _) => Body::Drop,
            _ if self.request.streamed => return Err(Stop::Unreplayable),
            (false, true) if self.request.again => Body::Again,
            (false, true) => return Err(Stop::Unreplayable),
            (false, false) => Body::Keep,
        };
        if hop.to_get {
            self.request.method = String::from("GET");
        }
        let referrer = self.referrer.get_or_insert_with(|| Referring::first(first, here));
        let origin = referrer.follow(target.policy, here, there, &self.request.method);
        let dropped = BODY_HEADERS
            .iter()
            .filter(|_| hop.to_get)
            .chain(CROSS_ORIGIN_DROPPED.iter().filter(|_| hop.cross_origin))
            .copied()
            .collect();
        Ok(Step {
            method: self.request.method.clone(),
            body,
            dropped,
            referrer: referrer.current.as_ref().map(|r| r.url.clone()),
            origin,
        })
    }
}

/// A referrer source: a URL stripped for referrer use, as `(href, origin)`;
/// a local scheme (`about:`, `blob:`, `data:`) is no referrer.
fn source((href, origin): (&str, &str)) -> Option<Referrer> {
    let scheme = super::text::before(href, b':');
    if matches!(scheme, "about" | "blob" | "data") {
        return None;
    }
    Some(Referrer { url: String::from(href), origin: String::from(origin) })
}

/// The referrer and origin state of one request's hops.
struct Referring {
    policy: Policy,
    /// The request's referrer now (`None`: no referrer).
    current: Option<Referrer>,
    /// The caller's origin, and the request's response tainting ("cors")
    /// and tainted-origin flag so far (see `redirect::hop_origin`).
    client: Option<String>,
    cors: bool,
    tainted: bool,
}

impl Referring {
    /// The state after the first request, to origin `first`.
    fn first(given: &First, first: &str) -> Referring {
        let policy = given.policy.and_then(Policy::parse).unwrap_or(Policy::DEFAULT);
        let client = given.client.and_then(source);
        let from = match given.referrer {
            Some("") => None,
            None | Some("about:client") => client.clone(),
            Some(_) => given.stripped.and_then(source),
        };
        let current = from.and_then(|s| determine(policy, &s, first));
        let client = client.map(|c| c.origin);
        let cors = client.as_deref().is_some_and(|c| c != first);
        Referring { policy, current, client, cors, tainted: false }
    }

    /// Follows a redirect whose `Referrer-Policy` is `header` from origin
    /// `here` to a URL of origin `next` with `method`: that policy applies
    /// from here on, and the referrer is determined again; answers the
    /// `Origin` the next hop carries where the host would not add it.
    fn follow(&mut self, header: Option<&str>, here: &str, next: &str, method: &str) -> Option<String> {
        let origin = self.client.as_deref().and_then(|client| {
            self.tainted |= here != next && client != here;
            self.cors |= client != next;
            hop_origin(client, method, self.cors, self.tainted).map(String::from)
        });
        if let Some(policy) = header.and_then(Policy::from_header) {
            self.policy = policy;
        }
        self.current = self.current.take().and_then(|r| determine(self.policy, &r, next));
        origin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "http://127.0.0.1:8000";
    const B: &str = "http://127.0.0.1:9000";

    fn chain(method: &str) -> Chain {
        let method = String::from(method);
        Chain::new(Request { method, same_origin_mode: false, streamed: false, again: false, cors_type: true })
    }

    fn to<'a>(here: &'a str, there: &'a str) -> Target<'a> {
        Target { here: Some(here), there: Some(("http:", there)), policy: None, bodied: false }
    }

    /// Follows a `status` redirect from `here` to `there`.
    fn hop(c: &mut Chain, status: u16, target: &Target, first: &First) -> Result<Step, Stop> {
        assert!(matches!(c.seen(status, Some("/next")), Seen::Redirect(_)));
        c.follow(target, first)
    }

    #[test]
    fn only_a_redirect_status_with_a_location_is_followed_and_its_location_is_read_as_utf8() {
        let table: &[(u16, Option<&str>, Option<&str>)] = &[
            (200, None, None),
            (201, Some("/created"), None),
            (300, Some("/x"), None),
            (302, None, None),
            (302, Some("/x"), Some("/x")),
            (303, Some("/final?\u{e2}\u{98}\u{83}"), Some("/final?\u{2603}")),
            (307, Some(""), Some("")),
            (308, Some("http://b.test/"), Some("http://b.test/")),
        ];
        for &(status, location, expected) in table {
            let seen = chain("GET").seen(status, location);
            let followed = match seen {
                Seen::Redirect(l) => Some(l.into_owned()),
                Seen::Final { .. } => None,
            };
            assert_eq!(followed.as_deref(), expected, "{status} {location:?}");
        }
    }

    #[test]
    fn the_final_response_is_redirected_after_a_hop_and_cors_after_another_origin_where_the_runtime_says() {
        let mut c = chain("GET");
        assert_eq!(c.seen(200, None), Seen::Final { redirected: false, cors: false });
        hop(&mut c, 302, &to(A, A), &First::default()).unwrap();
        assert_eq!(c.seen(200, None), Seen::Final { redirected: true, cors: false });
        hop(&mut c, 302, &to(A, B), &First::default()).unwrap();
        assert_eq!(c.seen(200, None), Seen::Final { redirected: true, cors: true });
        let mut deno = Chain::new(Request { cors_type: false, ..chain("GET").request });
        hop(&mut deno, 302, &to(A, B), &First::default()).unwrap();
        assert_eq!(deno.seen(200, None), Seen::Final { redirected: true, cors: false });
    }

    #[test]
    fn each_hop_gets_the_method_body_and_headers_the_fetch_standard_gives_it() {
        use Body::*;
        // (method, status, cross-origin, bodied Request, replayable Request, streamed) → method, body, dropped
        type Row = (&'static str, u16, bool, bool, bool, bool, Result<(&'static str, Body, usize), Stop>);
        let table: &[Row] = &[
            ("POST", 301, false, false, false, false, Ok(("GET", Drop, 4))),
            ("POST", 303, true, true, false, true, Ok(("GET", Drop, 7))),
            ("PUT", 302, false, false, false, false, Ok(("PUT", Keep, 0))),
            ("POST", 307, false, false, false, false, Ok(("POST", Keep, 0))),
            ("POST", 308, true, false, false, false, Ok(("POST", Keep, 3))),
            ("POST", 307, false, true, true, false, Ok(("POST", Again, 0))),
            ("POST", 307, false, true, false, false, Err(Stop::Unreplayable)),
            ("POST", 308, false, false, false, true, Err(Stop::Unreplayable)),
            ("GET", 303, false, false, false, false, Ok(("GET", Keep, 0))),
        ];
        for &(method, status, cross, bodied, again, streamed, expected) in table {
            let request = Request { again, streamed, ..chain(method).request };
            let mut c = Chain::new(request);
            let target = Target { bodied, ..to(A, if cross { B } else { A }) };
            let step = hop(&mut c, status, &target, &First::default());
            let got = step.as_ref().map(|s| (s.method.as_str(), s.body, s.dropped.len())).map_err(|e| *e);
            assert_eq!(got, expected, "{method} {status} cross {cross} bodied {bodied} again {again}");
            if let Ok(s) = &step {
                let credentials = s.dropped.contains(&"authorization") && s.dropped.contains(&"cookie");
                assert_eq!(credentials, cross, "{method} {status}: credentials dropped");
                assert_eq!(s.dropped.contains(&"content-type"), s.body == Drop, "{method} {status}: body headers");
            }
        }
    }

    #[test]
    fn a_redirect_fetch_would_refuse_stops_the_chain_with_its_reason() {
        use Unfollowable::*;
        let bad = Target { there: None, ..to(A, A) };
        let no_url = Target { here: None, ..to(A, A) };
        let data = Target { there: Some(("data:", "null")), ..to(A, A) };
        for (target, why) in [(&bad, BadLocation), (&no_url, BadLocation), (&data, NotHttp)] {
            assert_eq!(hop(&mut chain("GET"), 302, target, &First::default()), Err(Stop::Refused(why)));
        }
        let mut same = Chain::new(Request { same_origin_mode: true, ..chain("GET").request });
        assert!(hop(&mut same, 302, &to(A, A), &First::default()).is_ok());
        assert_eq!(hop(&mut same, 302, &to(A, B), &First::default()), Err(Stop::Refused(CrossOrigin)));
        let mut c = chain("GET");
        for n in 0..20 {
            assert!(hop(&mut c, 302, &to(A, A), &First::default()).is_ok(), "hop {n}");
        }
        assert_eq!(c.hops(), 20);
        assert_eq!(hop(&mut c, 302, &to(A, A), &First::default()), Err(Stop::Refused(TooMany)));
    }

    #[test]
    fn a_get_from_the_caller_s_origin_carries_origin_across_origins_and_null_once_tainted() {
        let page = alloc::format!("{A}/page");
        let first = First { client: Some((&page, A)), ..First::default() };
        let mut c = chain("GET");
        // A → B: another origin than the caller's.
        assert_eq!(hop(&mut c, 302, &to(A, B), &first).unwrap().origin.as_deref(), Some(A));
        // B → A: left another origin for the caller's: tainted.
        assert_eq!(hop(&mut c, 302, &to(B, A), &first).unwrap().origin.as_deref(), Some("null"));
        // Without a caller origin, none.
        assert_eq!(hop(&mut chain("GET"), 302, &to(A, B), &First::default()).unwrap().origin, None);
        // A POST kept by a 307 gets the host's own.
        assert_eq!(hop(&mut chain("POST"), 307, &to(A, B), &first).unwrap().origin, None);
    }

    #[test]
    fn the_referrer_comes_from_the_first_request_and_only_shrinks_over_hops() {
        let page = alloc::format!("{A}/page?x=1");
        let given = First { referrer: Some(&page), policy: Some("unsafe-url"), stripped: Some((&page, A)), client: None };
        let mut c = chain("GET");
        assert_eq!(hop(&mut c, 302, &to(A, A), &given).unwrap().referrer.as_deref(), Some(page.as_str()));
        let origin = Target { policy: Some("bogus, origin"), ..to(A, B) };
        let root = alloc::format!("{A}/");
        assert_eq!(hop(&mut c, 302, &origin, &given).unwrap().referrer.as_deref(), Some(root.as_str()));
        let unsafe_url = Target { policy: Some("unsafe-url"), ..to(B, A) };
        assert_eq!(hop(&mut c, 302, &unsafe_url, &given).unwrap().referrer.as_deref(), Some(root.as_str()));
        let none = Target { policy: Some("no-referrer"), ..to(A, A) };
        assert_eq!(hop(&mut c, 302, &none, &given).unwrap().referrer, None);
    }

    #[test]
    fn the_referrer_source_is_the_given_url_the_client_or_none() {
        let page = alloc::format!("{A}/page");
        let client = alloc::format!("{B}/home");
        // (referrer given, it stripped as (href, origin), the referrer sent)
        type Row<'a> = (Option<&'a str>, Option<(&'a str, &'a str)>, Option<&'a str>);
        let table: &[Row] = &[
            (None, None, Some(client.as_str())),
            (Some("about:client"), None, Some(client.as_str())),
            (Some(""), None, None),
            (Some(page.as_str()), Some((page.as_str(), A)), Some(page.as_str())),
            (Some("data:text/plain,x"), Some(("data:text/plain,x", "null")), None),
            (Some("not a url"), None, None),
        ];
        for &(referrer, stripped, expected) in table {
            let first =
                First { referrer, policy: Some("unsafe-url"), stripped, client: Some((client.as_str(), B)) };
            let step = hop(&mut chain("GET"), 302, &to(A, A), &first).unwrap();
            assert_eq!(step.referrer.as_deref(), expected, "{referrer:?}");
        }
    }
}
