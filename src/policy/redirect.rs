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
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let to_get = (matches!(status, 301 | 302) && method == "POST")
        || (status == 303 && method != "GET" && method != "HEAD");
    Some(Hop { to_get, cross_origin: !same_origin })
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
    fn a_failure_after_an_answered_hop_is_never_not_sent() {
        assert_eq!(stage_on_hop(Stage::NotSent, 0), Stage::NotSent);
        assert_eq!(stage_on_hop(Stage::NotSent, 1), Stage::MaybeDelivered);
        assert_eq!(stage_on_hop(Stage::NotSent, MAX_HOPS), Stage::MaybeDelivered);
        assert_eq!(stage_on_hop(Stage::MaybeDelivered, 0), Stage::MaybeDelivered);
    }
}
