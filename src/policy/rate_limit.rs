//! Rate-limit headers that say when a spent quota comes back, read as floors
//! exactly like `Retry-After` (DESIGN rule 7).
//!
//! Why: many APIs throttle without `Retry-After` and say when the quota
//! resets in headers of their own — GitHub's `X-RateLimit-Reset` (epoch
//! seconds) beside `X-RateLimit-Remaining: 0`, Discord's
//! `X-RateLimit-Reset-After` (seconds, with a fraction), the IETF draft's
//! `RateLimit: "default";r=0;t=30`. A retry before that time only spends an
//! attempt and the budget on an answer that cannot change, and a 403 from a
//! spent quota looks like any other 403 unless one of these says otherwise.
//!
//! The rules:
//! - They apply to a throttling response only: 429, 503, or 403 — and a 403
//!   is a throttle only when one of them says the quota is spent.
//! - `Retry-After` (and `Retry-After-Ms`) win whenever readable; these are
//!   read only when neither is.
//! - Among these, the largest wait wins (each is a floor).
//! - `RateLimit` (draft-ietf-httpapi-ratelimit-headers-11): a list of
//!   members `<policy>;r=<remaining>;t=<seconds>`; a member with `r=0` and an
//!   integer `t` is a floor of `t` seconds.
//! - `X-RateLimit-Reset` / `X-Rate-Limit-Reset`, only with
//!   `X-RateLimit-Remaining: 0` / `X-Rate-Limit-Remaining: 0`: an integer
//!   below 1 000 000 000 is a delta in seconds; from there on it is a Unix
//!   time in seconds (1e9 s is September 2001: no quota window is 31 years
//!   long, and no API sends an epoch before 2001). A reset in the past is 0.
//! - `X-RateLimit-Reset-After`: non-negative decimal seconds, rounded up to
//!   the millisecond.
//! - A malformed value is ignored, never guessed.

use alloc::string::String;
use serde::Serialize;

use super::retry_after::{self, trim_ows, Decided, RetryAfter};
use super::text;

/// Which header set an attempt's wait floor (named in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum FloorHeader {
    RetryAfter,
    RetryAfterMs,
    RateLimit,
    XRateLimitReset,
    XRateLimitResetAfter,
}

impl FloorHeader {
    pub fn name(self) -> &'static str {
        match self {
            FloorHeader::RetryAfter => "retry-after",
            FloorHeader::RetryAfterMs => "retry-after-ms",
            FloorHeader::RateLimit => "ratelimit",
            FloorHeader::XRateLimitReset => "x-ratelimit-reset",
            FloorHeader::XRateLimitResetAfter => "x-ratelimit-reset-after",
        }
    }
}

/// Serialized by its public name.
impl From<FloorHeader> for &'static str {
    fn from(h: FloorHeader) -> &'static str {
        h.name()
    }
}

/// The headers of one response that can set a wait floor, as the host read
/// them (the `X-Rate-Limit-*` spellings folded into the `X-RateLimit-*` ones).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FloorHeaders {
    pub retry_after: Option<String>,
    pub retry_after_ms: Option<String>,
    pub ratelimit: Option<String>,
    pub remaining: Option<String>,
    pub reset: Option<String>,
    pub reset_after: Option<String>,
}

/// Whether the rate-limit headers are worth reading for `status`.
pub fn throttling(status: u16) -> bool {
    matches!(status, 403 | 429 | 503)
}

/// Epoch seconds from here on; a delta in seconds below.
pub const EPOCH_FROM_S: u64 = 1_000_000_000;

impl FloorHeaders {
    /// The response's wait floor and the header that set it: `Retry-After`
    /// (or `Retry-After-Ms`) when present; otherwise, on a throttling
    /// status, the largest rate-limit reset. A response without either
    /// (every success, as a rule) is answered here, inline: the parsing
    /// below is neither run nor, where wasm compiles a function at its
    /// first call (V8, workerd), compiled for it.
    #[inline]
    pub fn floor(&self, status: u16, now_ms: u64) -> Option<(RetryAfter, FloorHeader)> {
        if self.retry_after.is_none() && self.retry_after_ms.is_none() && !throttling(status) {
            return None;
        }
        self.parsed(status, now_ms)
    }

    /// [`Self::floor`] for a response that may have one: the headers parsed.
    #[inline(never)]
    fn parsed(&self, status: u16, now_ms: u64) -> Option<(RetryAfter, FloorHeader)> {
        let standard = retry_after::decide(self.retry_after.as_deref(), self.retry_after_ms.as_deref(), now_ms);
        if let Some((ra, decided)) = standard {
            let header = match decided {
                Decided::RetryAfter => FloorHeader::RetryAfter,
                Decided::RetryAfterMs => FloorHeader::RetryAfterMs,
            };
            return Some((ra, header));
        }
        if !throttling(status) {
            return None;
        }
        // The largest; on a tie, the later header (as `max_by_key` picks,
        // without its iterator machinery).
        let mut largest = None;
        for (ms, header) in [
            (self.ratelimit_ms(), FloorHeader::RateLimit),
            (self.reset_ms(now_ms), FloorHeader::XRateLimitReset),
            (self.reset_after.as_deref().and_then(seconds_ms), FloorHeader::XRateLimitResetAfter),
        ] {
            if let Some(ms) = ms.filter(|&ms| largest.is_none_or(|(most, _)| ms >= most)) {
                largest = Some((ms, header));
            }
        }
        largest.map(|(ms, header)| (RetryAfter::Delay(ms), header))
    }

    /// `RateLimit`: the largest `t` among members with `r=0`.
    fn ratelimit_ms(&self) -> Option<u64> {
        text::split(self.ratelimit.as_deref()?, |b| b == b',').filter_map(spent_member_seconds).max()?.checked_mul(1000)
    }

    /// `X-RateLimit-Reset`, when `X-RateLimit-Remaining` is 0.
    fn reset_ms(&self, now_ms: u64) -> Option<u64> {
        if integer(self.remaining.as_deref()?)? != 0 {
            return None;
        }
        let reset = integer(self.reset.as_deref()?)?;
        if reset < EPOCH_FROM_S {
            return reset.checked_mul(1000);
        }
        Some(reset.checked_mul(1000)?.saturating_sub(now_ms))
    }
}

/// A non-negative decimal integer, spaces and tabs around it allowed.
fn integer(value: &str) -> Option<u64> {
    let value = trim_ows(value);
    if value.is_empty() {
        return None;
    }
    retry_after::decimal(value)
}

/// Non-negative decimal seconds (`1.234`) in milliseconds, rounded up.
fn seconds_ms(value: &str) -> Option<u64> {
    let value = trim_ows(value);
    let (whole, fraction) = text::split_once(value, b'.').unwrap_or((value, ""));
    if value.ends_with(".") || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ms = integer(whole)?.checked_mul(1000)?;
    let mut scale = 100;
    for (i, digit) in fraction.bytes().map(|b| u64::from(b.saturating_sub(b'0'))).enumerate() {
        if i < 3 {
            ms = ms.checked_add(digit.saturating_mul(scale))?;
            scale = scale.checked_div(10).unwrap_or(0);
        } else if digit != 0 {
            return ms.checked_add(1);
        }
    }
    Some(ms)
}

/// One `RateLimit` list member, `<policy>;r=<n>;t=<n>` (RFC 8941 item with
/// parameters): its `t` when `r` is 0; `None` for anything else.
fn spent_member_seconds(member: &str) -> Option<u64> {
    let mut parts = text::split(member, |b| b == b';');
    let item = trim_ows(parts.next()?);
    let quoted = item.len() >= 2 && item.starts_with("\"") && item.ends_with("\"");
    let token = !item.is_empty() && item.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:*/".contains(&b));
    if !(quoted || token) {
        return None;
    }
    let (mut remaining, mut reset) = (None, None);
    for param in parts {
        let (key, value) = text::split_once(trim_ows(param), b'=')?;
        match key {
            "r" => remaining = Some(integer(value)?),
            "t" => reset = Some(integer(value)?),
            _ => {}
        }
    }
    (remaining? == 0).then_some(reset?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use FloorHeader::{RateLimit, RetryAfterMs, XRateLimitReset, XRateLimitResetAfter};
    const RA: FloorHeader = FloorHeader::RetryAfter;

    const NOW: u64 = 1_700_000_000_000; // 2023-11-14T22:13:20Z

    fn headers(pairs: &[(&str, &str)]) -> FloorHeaders {
        let mut h = FloorHeaders::default();
        for &(name, value) in pairs {
            let slot = match name {
                "retry-after" => &mut h.retry_after,
                "retry-after-ms" => &mut h.retry_after_ms,
                "ratelimit" => &mut h.ratelimit,
                "x-ratelimit-remaining" => &mut h.remaining,
                "x-ratelimit-reset" => &mut h.reset,
                "x-ratelimit-reset-after" => &mut h.reset_after,
                other => panic!("no such header in the table: {other}"),
            };
            *slot = Some(String::from(value));
        }
        h
    }

    #[test]
    fn each_header_sets_the_floor_it_states_and_is_named() {
        type Row = (u16, &'static [(&'static str, &'static str)], Option<(RetryAfter, FloorHeader)>);
        let table: &[Row] = &[
            (429, &[("retry-after", "3")], Some((RetryAfter::Delay(3000), RA))),
            (429, &[("retry-after-ms", "1500")], Some((RetryAfter::Delay(1500), RetryAfterMs))),
            (
                503,
                &[("retry-after", "1"), ("retry-after-ms", "2500")],
                Some((RetryAfter::Delay(2500), RetryAfterMs)),
            ),
            (503, &[("retry-after", "3"), ("retry-after-ms", "2500")], Some((RetryAfter::Delay(3000), RA))),
            (429, &[("ratelimit", "\"default\";r=0;t=30")], Some((RetryAfter::Delay(30_000), RateLimit))),
            (429, &[("ratelimit", "default;r=0;t=7")], Some((RetryAfter::Delay(7000), RateLimit))),
            (
                429,
                &[("ratelimit", "\"a\";r=5;t=9, \"b\";r=0;t=12, \"c\";r=0;t=4")],
                Some((RetryAfter::Delay(12_000), RateLimit)),
            ),
            (
                429,
                &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "20")],
                Some((RetryAfter::Delay(20_000), XRateLimitReset)),
            ),
            (
                403,
                &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1700000042")],
                Some((RetryAfter::Delay(42_000), XRateLimitReset)),
            ),
            (
                429,
                &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1600000000")],
                Some((RetryAfter::Delay(0), XRateLimitReset)),
            ),
            (
                429,
                &[("x-ratelimit-reset-after", "1.234")],
                Some((RetryAfter::Delay(1234), XRateLimitResetAfter)),
            ),
            (
                429,
                &[("x-ratelimit-reset-after", "0.0001")],
                Some((RetryAfter::Delay(1), XRateLimitResetAfter)),
            ),
            (
                429,
                &[
                    ("ratelimit", "x;r=0;t=5"),
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", "9"),
                    ("x-ratelimit-reset-after", "2"),
                ],
                Some((RetryAfter::Delay(9000), XRateLimitReset)),
            ),
            // Equal floors: the header read last names it.
            (
                429,
                &[("ratelimit", "x;r=0;t=4"), ("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "4")],
                Some((RetryAfter::Delay(4000), XRateLimitReset)),
            ),
            (
                429,
                &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "3"), ("x-ratelimit-reset-after", "3")],
                Some((RetryAfter::Delay(3000), XRateLimitResetAfter)),
            ),
            (
                429,
                &[("retry-after", "1"), ("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "60")],
                Some((RetryAfter::Delay(1000), RA)),
            ),
            // `Retry-After` sets the floor on any status, not only a throttling one.
            (500, &[("retry-after", "2")], Some((RetryAfter::Delay(2000), RA))),
            (200, &[("retry-after-ms", "10")], Some((RetryAfter::Delay(10), RetryAfterMs))),
        ];
        for (i, (status, pairs, want)) in table.iter().enumerate() {
            assert_eq!(headers(pairs).floor(*status, NOW), *want, "row {i}: {status} {pairs:?}");
        }
    }

    #[test]
    fn malformed_or_unspent_rate_limit_headers_set_no_floor() {
        let table: &[(u16, &[(&str, &str)])] = &[
            // None at all; rate-limit headers on a status that is not throttling.
            (200, &[]),
            (429, &[]),
            (500, &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "20")]),
            (200, &[("ratelimit", "\"default\";r=0;t=30")]),
            (429, &[("ratelimit", "\"default\";r=1;t=30")]),
            (429, &[("ratelimit", "\"default\";r=0")]),
            (429, &[("ratelimit", "\"default\";r=0;t=-3")]),
            (429, &[("ratelimit", "\"default\";r=0;t=1.5")]),
            (429, &[("ratelimit", "limit=100, remaining=0, reset=30")]),
            (429, &[("ratelimit", "bad item;r=0;t=3")]),
            (429, &[("ratelimit", "\"default\";r=0;t")]),
            (429, &[("x-ratelimit-reset", "20")]),
            (429, &[("x-ratelimit-remaining", "3"), ("x-ratelimit-reset", "20")]),
            (429, &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "soon")]),
            (429, &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "20.5")]),
            (429, &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "99999999999999999999999")]),
            (429, &[("x-ratelimit-reset-after", "-1")]),
            (429, &[("x-ratelimit-reset-after", "1e3")]),
            (429, &[("x-ratelimit-reset-after", "")]),
            (500, &[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "20")]),
            (404, &[("ratelimit", "x;r=0;t=5")]),
        ];
        for (i, (status, pairs)) in table.iter().enumerate() {
            assert_eq!(headers(pairs).floor(*status, NOW), None, "row {i}: {status} {pairs:?}");
        }
    }

    #[test]
    fn an_unreadable_retry_after_wins_and_stops_rather_than_a_rate_limit_guess() {
        let h = headers(&[("retry-after", "soon"), ("x-ratelimit-reset-after", "2")]);
        assert_eq!(h.floor(429, NOW), Some((RetryAfter::Unsupported, RA)));
    }

    #[test]
    fn no_clock_value_makes_the_floor_overflow_or_panic() {
        let h = headers(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "18446744073709551")]);
        for now in [0, 1, NOW, u64::MAX / 2, u64::MAX] {
            let floor = h.floor(429, now);
            assert!(matches!(floor, Some((RetryAfter::Delay(_), XRateLimitReset))), "now {now}: {floor:?}");
        }
        let huge = headers(&[("ratelimit", "x;r=0;t=18446744073709551615")]);
        assert_eq!(huge.floor(429, NOW), None, "a t whose milliseconds overflow is malformed");
    }
}
