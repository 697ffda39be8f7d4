//! Redirects, followed as `fetch` follows them — without letting a hop
//! disguise a delivered request (DESIGN rule 4).
//!
//! The trap: a POST answered 307 whose second hop is refused. If `fetch`
//! follows the redirect itself, the refusal looks exactly like a request
//! that was never sent ("connection refused"), so a retry would send the
//! POST to the first hop again — which already received it. Outside
//! browsers we therefore follow redirects hop by hop ourselves and know
//! which hop failed: a failure after a hop that reached a server is never
//! `not-sent`. That includes workerd, where every failure is
//! `maybe-delivered` anyway, because its own `fetch` breaks the standard's
//! header rules on a redirect (measured: it keeps `Authorization` on a hop
//! to another origin and `Content-Type` on a 303). Browsers follow the
//! standard, and a `manual` redirect is opaque there, so `fetch` follows
//! them itself. Either way the caller sees what plain `fetch` would: a 308
//! after a move is followed, not handed back.
//!
//! The hops we follow obey the Fetch standard's HTTP-redirect fetch: at
//! most [`MAX_HOPS`]; 301/302 turn a POST into a GET and 303 turns anything
//! but GET/HEAD into a GET, dropping the body and its headers; 307/308 keep
//! method and body; a hop to another origin drops `Authorization` (and, as
//! undici does, `Proxy-Authorization` and `Cookie`).

use super::classify::Stage;
use super::runtime::Runtime;

/// At most this many redirects per request, as in `fetch`.
pub const MAX_HOPS: u32 = 20;

/// Headers that describe a request body: dropped with the body.
pub const BODY_HEADERS: [&str; 4] =
    ["content-encoding", "content-language", "content-location", "content-type"];

/// Credentials that never follow a redirect to another origin.
pub const CROSS_ORIGIN_DROPPED: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// Who follows the redirects of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follower {
    /// `fetch`, as the caller's `redirect` says (also `manual` and `error`:
    /// the caller asked for exactly what `fetch` does with them).
    Host,
    /// We do, hop by hop, with `redirect: "manual"` on each.
    Us,
}

/// `mode` is the caller's `redirect` (`None`: unset, i.e. `follow`).
pub fn follower(runtime: Runtime, mode: Option<&str>) -> Follower {
    let follow = matches!(mode, None | Some("follow"));
    if follow && runtime != Runtime::Browser {
        Follower::Us
    } else {
        Follower::Host
    }
}

/// The request for the next hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    /// The method becomes GET, and the body and [`BODY_HEADERS`] are dropped.
    pub to_get: bool,
    /// The next URL has another origin: [`CROSS_ORIGIN_DROPPED`] go.
    pub cross_origin: bool,
}

/// The next hop after a response with `status` to a `method` request, when
/// it is a redirect `fetch` would follow.
pub fn next_hop(status: u16, method: &str, same_origin: bool) -> Option<Hop> {
    if !is_redirect(status) {
        return None;
    }
    let to_get = (matches!(status, 301 | 302) && method == "POST")
        || (status == 303 && method != "GET" && method != "HEAD");
    Some(Hop { to_get, cross_origin: !same_origin })
}

/// Why `fetch` would end a redirect chain with a network error instead of
/// following this redirect (the Fetch standard's HTTP-redirect fetch and
/// main fetch): each repeats on every attempt, so none is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfollowable {
    /// The `Location` is not a URL.
    BadLocation,
    /// The `Location` is not `http:` or `https:` (`data:`, `ftp:`, …).
    NotHttp,
    /// Already [`MAX_HOPS`] redirects.
    TooMany,
    /// A `mode: "same-origin"` request sent to another origin.
    CrossOrigin,
}

impl Unfollowable {
    /// The message of the `TypeError`'s cause (undici's words).
    pub fn message(self) -> &'static str {
        match self {
            Unfollowable::BadLocation => "Invalid URL",
            Unfollowable::NotHttp => "URL scheme must be a HTTP(S) scheme",
            Unfollowable::TooMany => "redirect count exceeded",
            Unfollowable::CrossOrigin => "request mode cannot be \"same-origin\"",
        }
    }
}

/// What the next hop must be to be followed: `hops` redirects were followed
/// already; `location` is the parsed `Location` (`None`: unparsable) as its
/// scheme (with the colon, as `URL.protocol` gives it) and whether it has
/// the first request's origin; `same_origin_mode` is `mode: "same-origin"`.
pub fn check_hop(
    hops: u32,
    location: Option<(&str, bool)>,
    same_origin_mode: bool,
) -> Result<(), Unfollowable> {
    let (protocol, same_origin) = location.ok_or(Unfollowable::BadLocation)?;
    if protocol != "http:" && protocol != "https:" {
        return Err(Unfollowable::NotHttp);
    }
    if hops >= MAX_HOPS {
        return Err(Unfollowable::TooMany);
    }
    if same_origin_mode && !same_origin {
        return Err(Unfollowable::CrossOrigin);
    }
    Ok(())
}

/// The `Origin` header of a hop we follow where the host's own `fetch` of
/// that hop sends none (Fetch: "append a request Origin header"): a GET or
/// HEAD whose response tainting is "cors" (`cors`: a URL of the chain so
/// far had another origin than the caller's, `client`) carries the
/// request's origin, serialized: `"null"` once `tainted` (a hop left an
/// origin other than the caller's for another one). For other methods the
/// host adds its own; a caller without an origin has none.
pub fn hop_origin<'a>(client: &'a str, method: &str, cors: bool, tainted: bool) -> Option<&'a str> {
    let get = matches!(method, "GET" | "HEAD");
    match (get && cors, tainted) {
        (false, _) => None,
        (true, true) => Some("null"),
        (true, false) => Some(client),
    }
}

/// Whether `status` is a redirect that `fetch` follows (when the response
/// has a `Location`).
pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// How far a request got whose hop number `hop` (0: the first) failed with
/// `stage`: once a hop before it was answered, the request reached a server.
pub fn stage_on_hop(stage: Stage, hop: u32) -> Stage {
    if hop > 0 {
        Stage::MaybeDelivered
    } else {
        stage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_and_bodies_follow_the_fetch_standard_per_status() {
        let table: &[(u16, &str, Option<bool>)] = &[
            (301, "POST", Some(true)),
            (302, "POST", Some(true)),
            (301, "PUT", Some(false)),
            (302, "GET", Some(false)),
            (303, "POST", Some(true)),
            (303, "PUT", Some(true)),
            (303, "GET", Some(false)),
            (303, "HEAD", Some(false)),
            (307, "POST", Some(false)),
            (308, "POST", Some(false)),
            (308, "PATCH", Some(false)),
            (300, "GET", None),
            (304, "GET", None),
            (305, "GET", None),
            (306, "GET", None),
            (200, "GET", None),
        ];
        for &(status, method, to_get) in table {
            assert_eq!(next_hop(status, method, true).map(|h| h.to_get), to_get, "{status} {method}");
        }
        assert_eq!(next_hop(308, "POST", false), Some(Hop { to_get: false, cross_origin: true }));
    }

    #[test]
    fn we_follow_outside_browsers_when_the_caller_wants_following() {
        for rt in [Runtime::Node, Runtime::Bun, Runtime::Deno, Runtime::Workerd] {
            assert_eq!(follower(rt, None), Follower::Us, "{rt:?}");
            assert_eq!(follower(rt, Some("follow")), Follower::Us, "{rt:?}");
            assert_eq!(follower(rt, Some("manual")), Follower::Host, "{rt:?}");
            assert_eq!(follower(rt, Some("error")), Follower::Host, "{rt:?}");
        }
        assert_eq!(follower(Runtime::Browser, None), Follower::Host);
    }

    #[test]
    fn a_redirect_fetch_would_refuse_ends_the_chain() {
        use Unfollowable::*;
        type Row = (u32, Option<(&'static str, bool)>, bool, Result<(), Unfollowable>);
        let table: &[Row] = &[
            (0, Some(("http:", true)), false, Ok(())),
            (0, Some(("https:", false)), false, Ok(())),
            (19, Some(("http:", true)), false, Ok(())),
            (20, Some(("http:", true)), false, Err(TooMany)),
            (0, None, false, Err(BadLocation)),
            (0, Some(("data:", true)), false, Err(NotHttp)),
            (0, Some(("ftp:", false)), false, Err(NotHttp)),
            (0, Some(("blob:", false)), true, Err(NotHttp)),
            (0, Some(("http:", false)), true, Err(CrossOrigin)),
            (5, Some(("https:", true)), true, Ok(())),
        ];
        for &(hops, location, mode, expected) in table {
            assert_eq!(check_hop(hops, location, mode), expected, "{hops} {location:?} {mode}");
        }
    }

    #[test]
    fn a_cors_get_hop_carries_the_origin_and_a_tainted_one_null() {
        const A: &str = "http://a.test";
        let table: &[(&str, bool, bool, Option<&str>)] = &[
            ("GET", true, false, Some(A)),
            ("HEAD", true, false, Some(A)),
            ("GET", true, true, Some("null")),
            ("GET", false, false, None),
            ("POST", true, false, None),
            ("PUT", true, true, None),
        ];
        for &(method, cors, tainted, expected) in table {
            assert_eq!(hop_origin(A, method, cors, tainted), expected, "{method} {cors} {tainted}");
        }
    }

    #[test]
    fn a_failure_after_an_answered_hop_is_never_not_sent() {
        assert_eq!(stage_on_hop(Stage::NotSent, 0), Stage::NotSent);
        assert_eq!(stage_on_hop(Stage::NotSent, 1), Stage::MaybeDelivered);
        assert_eq!(stage_on_hop(Stage::NotSent, MAX_HOPS), Stage::MaybeDelivered);
        assert_eq!(stage_on_hop(Stage::MaybeDelivered, 0), Stage::MaybeDelivered);
    }
}
