//! The backoff, Retry-After and packed-value tables, asserted by the same code natively
//! and compiled to wasm (under Node and headless Chromium through
//! wasm-bindgen-test): the shipped module gives the answers the native tests
//! prove.

use saferetry::packed::Fields;
use saferetry::policy::backoff::{full_jitter, BadRandom};
use saferetry::policy::retry_after::{parse, RetryAfter, RetryAfter::*};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Sun, 06 Nov 1994 08:49:00 GMT.
const NOW: u64 = 784_111_740_000;

#[test]
fn full_jitter_at_random_one_half_waits_25_50_100_100() {
    let waits: Vec<u64> = (1..=4).map(|r| full_jitter(r, 50, 200, 0.5).unwrap()).collect();
    assert_eq!(waits, [25, 50, 100, 100]);
    assert_eq!(full_jitter(3, 50, 200, 0.0), Ok(0));
    assert_eq!(full_jitter(3, 50, 200, 0.9999999), Ok(199));
    assert_eq!(full_jitter(40, u64::MAX, u64::MAX, 0.5), Ok(1 << 63));
    assert_eq!(full_jitter(1, 50, 200, f64::NAN), Err(BadRandom));
    assert_eq!(full_jitter(1, 50, 200, 1.0), Err(BadRandom));
}

#[test]
fn retry_after_reads_seconds_and_every_date_form() {
    let table: [(&str, RetryAfter); 12] = [
        ("1", Delay(1000)),
        ("0", Delay(0)),
        ("1.5", Unsupported),
        ("-1", Unsupported),
        ("abc", Unsupported),
        ("", Unsupported),
        ("99999999999999999999", Infinite),
        ("Sun, 06 Nov 1994 08:49:37 GMT", Delay(37_000)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", Delay(37_000)),
        ("Sun Nov  6 08:49:37 1994", Delay(37_000)),
        ("Sat, 05 Nov 1994 08:49:37 GMT", Delay(0)),
        ("Sun, 31 Nov 1994 08:49:37 GMT", Unsupported),
    ];
    for (value, expected) in table {
        assert_eq!(parse(value, NOW), expected, "{value:?}");
    }
}

#[test]
fn packed_values_read_back_in_order_whatever_characters_they_hold() {
    let table: [(&str, &[Option<&str>]); 16] = [
        ("", &[]),
        ("-", &[None]),
        ("3:200-1:1", &[Some("200"), None, Some("1")]),
        ("0:-", &[Some(""), None]),
        ("3:a:b1:-", &[Some("a:b"), Some("-")]),
        // JS counts UTF-16 units: é is one, an emoji two.
        ("2:é1-", &[Some("é1"), None]),
        ("2:😀3:abc", &[Some("😀"), Some("abc")]),
        // The first units' bytes end inside a character, or are not all ASCII.
        ("1:é2:ab", &[Some("é"), Some("ab")]),
        ("3:aéb1:c", &[Some("aéb"), Some("c")]),
        // Not well formed: reading stops there.
        ("5:ab", &[]),
        ("x:1-", &[]),
        ("1:a9", &[Some("a")]),
        // The length as `usize` reads it: a `+` allowed, digits needed, no overflow.
        ("+1:a-", &[Some("a"), None]),
        (":a", &[]),
        ("+:a", &[]),
        ("18446744073709551616:a", &[]),
    ];
    for (packed, values) in table {
        let read: Vec<Option<&str>> = Fields(packed).collect();
        assert_eq!(read, values, "{packed:?}");
    }
}
