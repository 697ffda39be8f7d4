//! `Retry-After` and `Retry-After-Ms`: the crate reads exactly what the
//! independent reader reads, and the floor it hands on is never below what
//! either header says.

use saferetry::policy::retry_after::{from_headers, parse, parse_ms, RetryAfter};

use super::http_date::{expected, expected_ms};

/// Both headers as a server might send them, read at `now_ms`.
pub fn check(retry_after: &str, retry_after_ms: &str, now_ms: u64) {
    let got = parse(retry_after, now_ms);
    assert_eq!(got, expected(retry_after, now_ms), "Retry-After {retry_after:?} at {now_ms}");
    let ms = parse_ms(retry_after_ms);
    assert_eq!(ms, expected_ms(retry_after_ms), "Retry-After-Ms {retry_after_ms:?}");

    let both = from_headers(Some(retry_after), Some(retry_after_ms), now_ms);
    let floor = both.and_then(RetryAfter::floor_ms);
    if let Some(says) = got.floor_ms() {
        assert!(floor >= Some(says), "{both:?} is below Retry-After {got:?}");
    }
    if let Some(says) = ms {
        assert!(floor >= Some(says), "{both:?} is below Retry-After-Ms {says}");
    }
    assert!(both.is_some(), "a present header is never ignored");
    if got == RetryAfter::Unsupported && ms.is_none() {
        assert_eq!(both, Some(RetryAfter::Unsupported), "unreadable is never guessed");
    }
    assert_eq!(from_headers(Some(retry_after), None, now_ms), Some(got));
    assert_eq!(from_headers(None, Some(retry_after_ms), now_ms), ms.map(RetryAfter::Delay));
}
