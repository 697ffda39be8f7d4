//! The referrer of each redirect hop we follow ourselves (Node, Deno, Bun,
//! workerd), as the Fetch standard and the Referrer Policy spec compute
//! it: main fetch sets the request's referrer to "determine request's
//! referrer" on every hop, from the referrer the hop before computed, and
//! HTTP-redirect fetch first takes the redirect's `Referrer-Policy`. So a
//! referrer only ever shrinks (full URL → origin → none), and a redirect's
//! `no-referrer` or `same-origin` stops it. Also the `Location` value, read
//! as UTF-8 bytes (HTTP-redirect fetch: "location URL" parses the header's
//! value, which is bytes; hosts hand headers over as Latin-1 strings).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::text;

/// The Referrer Policy spec's policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    NoReferrer,
    NoReferrerWhenDowngrade,
    SameOrigin,
    Origin,
    StrictOrigin,
    OriginWhenCrossOrigin,
    StrictOriginWhenCrossOrigin,
    UnsafeUrl,
}

impl Policy {
    /// The policy of a request whose `referrerPolicy` is the empty string.
    pub const DEFAULT: Policy = Policy::StrictOriginWhenCrossOrigin;

    /// A token of the spec's list (`None`: not one, or the empty string).
    pub fn parse(token: &str) -> Option<Policy> {
        Some(match token {
            "no-referrer" => Policy::NoReferrer,
            "no-referrer-when-downgrade" => Policy::NoReferrerWhenDowngrade,
            "same-origin" => Policy::SameOrigin,
            "origin" => Policy::Origin,
            "strict-origin" => Policy::StrictOrigin,
            "origin-when-cross-origin" => Policy::OriginWhenCrossOrigin,
            "strict-origin-when-cross-origin" => Policy::StrictOriginWhenCrossOrigin,
            "unsafe-url" => Policy::UnsafeUrl,
            _ => return None,
        })
    }

    /// "Parse a referrer policy from a `Referrer-Policy` header": the last
    /// token of the list that is a policy (`None`: none is).
    #[allow(clippy::double_ended_iterator_last)] // forward on purpose, below
    pub fn from_header(value: &str) -> Option<Policy> {
        // Forward, and the trim the other header parsers use: the reverse
        // searchers and another trim would add 1 KB of wasm.
        text::split(value, |b| b == b',').filter_map(|t| Policy::parse(super::retry_after::trim_ows(t))).last()
    }
}

/// A request's referrer: a URL already stripped for referrer use (no
/// credentials, no fragment) and its origin, serialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Referrer {
    pub url: String,
    pub origin: String,
}

impl Referrer {
    /// Its origin as a referrer (the origin with a `/` path).
    fn origin_only(&self) -> Referrer {
        let mut url = self.origin.clone();
        url.push('/');
        Referrer { url, origin: self.origin.clone() }
    }
}

/// Longer referrer URLs are sent as their origin.
pub const MAX_URL: usize = 4096;

/// "Determine request's referrer" for a request to a URL of origin
/// `target` whose referrer is `referrer`, under `policy`: what is sent
/// (`None`: no referrer).
pub fn determine(policy: Policy, referrer: &Referrer, target: &str) -> Option<Referrer> {
    let origin = referrer.origin_only();
    let full = if referrer.url.len() > MAX_URL { origin.clone() } else { referrer.clone() };
    let same = referrer.origin == target;
    let downgrade = trustworthy(&referrer.origin) && !trustworthy(target);
    match policy {
        Policy::NoReferrer => None,
        Policy::Origin => Some(origin),
        Policy::UnsafeUrl => Some(full),
        Policy::StrictOrigin => (!downgrade).then_some(origin),
        Policy::StrictOriginWhenCrossOrigin if same => Some(full),
        Policy::StrictOriginWhenCrossOrigin => (!downgrade).then_some(origin),
        Policy::SameOrigin => same.then_some(full),
        Policy::OriginWhenCrossOrigin => Some(if same { full } else { origin }),
        Policy::NoReferrerWhenDowngrade => (!downgrade).then_some(full),
    }
}

/// Whether a serialized origin is "potentially trustworthy" (Secure
/// Contexts): `https:`/`wss:`, or a loopback or `localhost` host.
pub fn trustworthy(origin: &str) -> bool {
    // (Byte checks, not `&str` patterns: those cost kilobytes of wasm.)
    if origin.starts_with("https://") || origin.starts_with("wss://") {
        return true;
    }
    let Some(rest) = origin.strip_prefix("http://") else {
        return false;
    };
    let host = match rest.strip_prefix("[") {
        Some(v6) => return text::before(v6, b']') == "::1",
        None => rest.bytes().rposition(|b| b == b':').and_then(|at| rest.get(..at)).unwrap_or(rest),
    };
    let loopback_v4 = host.strip_prefix("127.").is_some_and(|r| {
        let parts = || text::split(r, |b| b == b'.');
        parts().count() == 3 && parts().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    });
    loopback_v4 || host == "localhost" || host.ends_with(".localhost")
}

/// A `Location` value as the host gave it: a Latin-1 string of the header's
/// bytes (Node, Deno) is decoded as the UTF-8 those bytes are; a value
/// that is not such a string (already decoded, or not UTF-8) stays.
pub fn location_utf8(value: &str) -> Cow<'_, str> {
    if value.is_ascii() || value.chars().any(|c| u32::from(c) > 0xFF) {
        return Cow::Borrowed(value);
    }
    let bytes: Vec<u8> = value.chars().map(|c| c as u8).collect();
    String::from_utf8(bytes).map_or(Cow::Borrowed(value), Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::Policy::*;
    use super::*;

    const A: &str = "http://127.0.0.1:8000";
    const B: &str = "http://127.0.0.1:9000";
    const PUBLIC: &str = "http://example.com";
    const SECURE: &str = "https://example.com";

    fn page(origin: &str) -> Referrer {
        Referrer { url: alloc::format!("{origin}/page?x=1"), origin: String::from(origin) }
    }

    #[test]
    fn a_referrer_policy_header_takes_its_last_valid_token() {
        let table: &[(&str, Option<Policy>)] = &[
            ("no-referrer", Some(NoReferrer)),
            ("origin", Some(Origin)),
            (" unsafe-url ", Some(UnsafeUrl)),
            ("origin, same-origin", Some(SameOrigin)),
            ("unsafe-url, bogus", Some(UnsafeUrl)),
            ("same-origin,\torigin-when-cross-origin", Some(OriginWhenCrossOrigin)),
            ("strict-origin, , ", Some(StrictOrigin)),
            ("no-referrer-when-downgrade", Some(NoReferrerWhenDowngrade)),
            ("strict-origin-when-cross-origin", Some(StrictOriginWhenCrossOrigin)),
            ("", None),
            ("bogus", None),
            ("Origin", None),
            ("\"origin\"", None),
        ];
        for &(header, expected) in table {
            assert_eq!(Policy::from_header(header), expected, "{header:?}");
        }
    }

    #[test]
    fn the_referrer_sent_follows_the_policy_the_origins_and_downgrades() {
        let secure = Referrer { url: alloc::format!("{SECURE}/p"), origin: String::from(SECURE) };
        type Row<'a> = (Policy, &'a Referrer, &'a str, Option<&'a str>);
        let (a, public) = (page(A), page(PUBLIC));
        let table: &[Row] = &[
            (NoReferrer, &a, A, None),
            (UnsafeUrl, &a, B, Some("http://127.0.0.1:8000/page?x=1")),
            (Origin, &a, A, Some("http://127.0.0.1:8000/")),
            (SameOrigin, &a, A, Some("http://127.0.0.1:8000/page?x=1")),
            (SameOrigin, &a, B, None),
            (OriginWhenCrossOrigin, &a, A, Some("http://127.0.0.1:8000/page?x=1")),
            (OriginWhenCrossOrigin, &a, B, Some("http://127.0.0.1:8000/")),
            (StrictOriginWhenCrossOrigin, &a, A, Some("http://127.0.0.1:8000/page?x=1")),
            (StrictOriginWhenCrossOrigin, &a, B, Some("http://127.0.0.1:8000/")),
            (StrictOriginWhenCrossOrigin, &secure, PUBLIC, None),
            (StrictOriginWhenCrossOrigin, &public, B, Some("http://example.com/")),
            (StrictOrigin, &a, A, Some("http://127.0.0.1:8000/")),
            (StrictOrigin, &secure, PUBLIC, None),
            (StrictOrigin, &secure, A, Some("https://example.com/")),
            (NoReferrerWhenDowngrade, &secure, PUBLIC, None),
            (NoReferrerWhenDowngrade, &a, B, Some("http://127.0.0.1:8000/page?x=1")),
        ];
        for &(policy, referrer, target, expected) in table {
            let sent = determine(policy, referrer, target);
            assert_eq!(sent.as_ref().map(|r| r.url.as_str()), expected, "{policy:?} {referrer:?} → {target}");
            if let Some(sent) = sent {
                assert_eq!(sent.origin, referrer.origin);
            }
        }
    }

    #[test]
    fn a_referrer_only_shrinks_over_hops() {
        // Hop 1 under `origin`, then a redirect says `unsafe-url`: still the origin.
        let first = determine(Origin, &page(A), A).unwrap();
        assert_eq!(determine(UnsafeUrl, &first, A).unwrap().url, "http://127.0.0.1:8000/");
        // A redirect's `no-referrer` ends it.
        assert_eq!(determine(NoReferrer, &page(A), A), None);
    }

    #[test]
    fn a_referrer_longer_than_4096_is_sent_as_its_origin() {
        let long = Referrer { url: alloc::format!("{A}/{}", "x".repeat(MAX_URL)), origin: String::from(A) };
        assert_eq!(determine(UnsafeUrl, &long, A).unwrap().url, "http://127.0.0.1:8000/");
        let fits = Referrer { url: alloc::format!("{A}/{}", "x".repeat(100)), origin: String::from(A) };
        assert_eq!(determine(UnsafeUrl, &fits, A).unwrap(), fits);
    }

    #[test]
    fn loopback_localhost_and_secure_origins_are_trustworthy() {
        let table = [
            ("https://example.com", true),
            ("wss://example.com:8443", true),
            ("http://127.0.0.1:8000", true),
            ("http://127.1.2.3", true),
            ("http://[::1]:80", true),
            ("http://localhost:3000", true),
            ("http://app.localhost", true),
            ("http://example.com", false),
            ("http://127.0.0.1.example.com", false),
            ("http://[::2]", false),
            ("null", false),
        ];
        for (origin, expected) in table {
            assert_eq!(trustworthy(origin), expected, "{origin}");
        }
    }

    #[test]
    fn a_location_of_utf8_bytes_given_as_latin1_is_decoded() {
        let table: &[(&str, &str)] = &[
            ("/final?\u{e2}\u{98}\u{83}", "/final?\u{2603}"),
            ("/final?\u{2603}", "/final?\u{2603}"),
            ("/plain?a=1", "/plain?a=1"),
            // Not UTF-8 as bytes: kept as the Latin-1 the host gave.
            ("/caf\u{e9}", "/caf\u{e9}"),
            ("/%E2%98%83", "/%E2%98%83"),
        ];
        for &(given, expected) in table {
            assert_eq!(location_utf8(given), expected, "{given:?}");
        }
    }
}
