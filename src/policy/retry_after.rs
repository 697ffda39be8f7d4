//! `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date, never
//! milliseconds.
//!
//! Anything we cannot read exactly is `Unsupported`, never a guessed 0: a
//! server that asked for a wait and was answered by an immediate retry is the
//! thundering herd this header exists to prevent. The server's value is a
//! floor; callers add jitter on top of it, never below.
//!
//! No arithmetic here can overflow for any input: `now_ms` may be any `u64`
//! (a host clock is not trusted to be sane), so dates are compared in
//! `i128` milliseconds, which hold every date this reader accepts and every
//! `u64` clock value exactly.

use super::text;

/// What a `Retry-After` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// Wait this many milliseconds (0 for a date in the past).
    Delay(u64),
    /// More seconds than can be represented: exceeds any budget.
    Infinite,
    /// Fractions, negatives, garbage, impossible dates.
    Unsupported,
}

impl RetryAfter {
    /// The floor in milliseconds, `u64::MAX` standing for infinite.
    pub fn floor_ms(self) -> Option<u64> {
        match self {
            RetryAfter::Delay(ms) => Some(ms),
            RetryAfter::Infinite => Some(u64::MAX),
            RetryAfter::Unsupported => None,
        }
    }
}

/// Reads the headers that matter: `Retry-After-Ms` (milliseconds, sent by
/// some APIs) is used when present and readable, but never to shorten a
/// readable `Retry-After` (the larger wins: a server's wait is a floor).
/// `None` when neither is present.
pub fn from_headers(
    retry_after: Option<&str>,
    retry_after_ms: Option<&str>,
    now_ms: u64,
) -> Option<RetryAfter> {
    decide(retry_after, retry_after_ms, now_ms).map(|(ra, _)| ra)
}

/// Which of the two headers set the floor `from_headers` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    RetryAfter,
    RetryAfterMs,
}

/// [`from_headers`], and which header decided it (each parsed once).
pub fn decide(
    retry_after: Option<&str>,
    retry_after_ms: Option<&str>,
    now_ms: u64,
) -> Option<(RetryAfter, Decided)> {
    let standard = retry_after.map(|value| parse(value, now_ms));
    match (retry_after_ms.and_then(parse_ms), standard) {
        (Some(ms), Some(RetryAfter::Delay(d))) => {
            Some((RetryAfter::Delay(ms.max(d)), if ms > d { Decided::RetryAfterMs } else { Decided::RetryAfter }))
        }
        (Some(ms), None | Some(RetryAfter::Unsupported)) => Some((RetryAfter::Delay(ms), Decided::RetryAfterMs)),
        (_, standard) => standard.map(|ra| (ra, Decided::RetryAfter)),
    }
}

/// Parses a `Retry-After` value against `now_ms` (Unix epoch milliseconds).
pub fn parse(value: &str, now_ms: u64) -> RetryAfter {
    let value = trim_ows(value);
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return delta_seconds(value);
    }
    match http_date(value.as_bytes(), now_ms) {
        // A past date means now; a delay beyond u64 (unreachable for the
        // years a date can name) exceeds any budget.
        Some(date_ms) => match u64::try_from(date_ms.saturating_sub(i128::from(now_ms)).max(0)) {
            Ok(ms) => RetryAfter::Delay(ms),
            Err(_) => RetryAfter::Infinite,
        },
        None => RetryAfter::Unsupported,
    }
}

/// `Retry-After-Ms`: a non-negative decimal number of milliseconds, rounded
/// up. Unreadable values are ignored (the standard header then decides).
pub fn parse_ms(value: &str) -> Option<u64> {
    let value = trim_ows(value);
    let (whole, fraction) = text::split_once(value, b'.').unwrap_or((value, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || value.ends_with(".") {
        return None;
    }
    let ms = decimal(whole)?;
    let round_up = fraction.bytes().any(|b| b != b'0');
    Some(ms.saturating_add(u64::from(round_up)))
}

/// The value of an ASCII digit.
fn digit(b: u8) -> Option<u8> {
    let d = b.wrapping_sub(b'0');
    (d < 10).then_some(d)
}

/// `value` without the spaces and tabs around it (RFC 9110 §5.6.3's
/// optional whitespace). By bytes: `str::trim_matches` links the char
/// searchers and UTF-8 decoding, 0.2 KB gzip of a page.
pub(super) fn trim_ows(value: &str) -> &str {
    let ows = |b: &u8| matches!(b, b' ' | b'\t');
    let bytes = value.as_bytes();
    let start = bytes.iter().position(|b| !ows(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !ows(b)).map_or(start, |last| last.saturating_add(1));
    value.get(start..end).unwrap_or_default()
}

/// A run of ASCII digits as a number; `None` for anything else or beyond u64.
pub(super) fn decimal(digits: &str) -> Option<u64> {
    digits.bytes().try_fold(0u64, |acc, b| acc.checked_mul(10)?.checked_add(u64::from(digit(b)?)))
}

fn delta_seconds(digits: &str) -> RetryAfter {
    match decimal(digits).and_then(|s| s.checked_mul(1000)) {
        Some(ms) => RetryAfter::Delay(ms),
        None => RetryAfter::Infinite,
    }
}

const MONTHS: [&[u8]; 12] =
    [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];
const DAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
const LONG_DAYS: [&[u8]; 7] =
    [b"Monday", b"Tuesday", b"Wednesday", b"Thursday", b"Friday", b"Saturday", b"Sunday"];

/// A date in any of the three forms RFC 9110 §5.6.7 requires recipients to
/// accept, as Unix epoch milliseconds (negative before 1970).
fn http_date(s: &[u8], now_ms: u64) -> Option<i128> {
    let mut c = Cursor(s);
    if let Some(comma) = s.iter().position(|&b| b == b',') {
        let (day, rest) = s.split_at_checked(comma)?;
        c.0 = rest;
        c.lit(b", ")?;
        if DAYS.contains(&day) {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            let d = c.digits(2)?;
            c.lit(b" ")?;
            let m = c.month()?;
            c.lit(b" ")?;
            let y = c.digits(4)?;
            c.lit(b" ")?;
            return c.time_gmt(i64::from(y), m, d);
        }
        if LONG_DAYS.contains(&day) {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let d = c.digits(2)?;
            c.lit(b"-")?;
            let m = c.month()?;
            c.lit(b"-")?;
            let yy = i64::from(c.digits(2)?);
            c.lit(b" ")?;
            return c.time_gmt(two_digit_year(yy, now_ms), m, d);
        }
        return None;
    }
    // asctime: Sun Nov  6 08:49:37 1994
    let day = c.take(3)?;
    if !DAYS.contains(&day) {
        return None;
    }
    c.lit(b" ")?;
    let m = c.month()?;
    c.lit(b" ")?;
    let d = if c.0.first() == Some(&b' ') {
        c.lit(b" ")?;
        c.digits(1)?
    } else {
        c.digits(2)?
    };
    c.lit(b" ")?;
    let (h, min, sec) = c.time()?;
    c.lit(b" ")?;
    let y = c.digits(4)?;
    c.end()?;
    epoch_ms(i64::from(y), m, d, h, min, sec)
}

/// RFC 9110: a two-digit year more than 50 years in the future is the most
/// recent past year with the same last two digits. Any `u64` clock is below
/// 2^38 days and year 6 * 10^8, so nothing here comes near `i64`'s range.
fn two_digit_year(yy: i64, now_ms: u64) -> i64 {
    let now_year = civil_year(i64::try_from(now_ms / 86_400_000).unwrap_or(i64::MAX));
    let candidate = now_year.saturating_sub(now_year.rem_euclid(100)).saturating_add(yy);
    if candidate > now_year.saturating_add(50) {
        candidate.saturating_sub(100)
    } else {
        candidate
    }
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    fn lit(&mut self, expected: &[u8]) -> Option<()> {
        (self.take(expected.len())? == expected).then_some(())
    }
    fn digits(&mut self, n: usize) -> Option<u32> {
        let head = self.take(n)?;
        head.iter().try_fold(0u32, |acc, &b| acc.checked_mul(10)?.checked_add(u32::from(digit(b)?)))
    }
    fn month(&mut self) -> Option<u32> {
        let name = self.take(3)?;
        (1u32..).zip(MONTHS).find(|&(_, m)| m == name).map(|(number, _)| number)
    }
    fn time(&mut self) -> Option<(u32, u32, u32)> {
        let h = self.digits(2)?;
        self.lit(b":")?;
        let m = self.digits(2)?;
        self.lit(b":")?;
        let s = self.digits(2)?;
        Some((h, m, s))
    }
    fn time_gmt(&mut self, y: i64, m: u32, d: u32) -> Option<i128> {
        let (h, min, s) = self.time()?;
        self.lit(b" GMT")?;
        self.end()?;
        epoch_ms(y, m, d, h, min, s)
    }
    fn end(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Validates the fields (a leap second, 60, is accepted as RFC 9110 allows)
/// and converts to epoch milliseconds. Every year this reader can produce
/// (four digits, or a two-digit year placed near a `u64` clock) is within
/// ±10^9, so the day count fits `i64` and the milliseconds fit `i128`.
#[allow(clippy::arithmetic_side_effects)] // |days| < 2^50 (below): far inside i128
fn epoch_ms(y: i64, m: u32, d: u32, h: u32, min: u32, s: u32) -> Option<i128> {
    if d == 0 || d > days_in_month(y, m) || h > 23 || min > 59 || s > 60 {
        return None;
    }
    let days = i128::from(days_from_civil(y, m, d)?);
    let seconds = ((days * 24 + i128::from(h)) * 60 + i128::from(min)) * 60 + i128::from(s);
    Some(seconds * 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm); `None` for a year too large to count in `i64` days.
#[allow(clippy::arithmetic_side_effects)] // |y| <= 2^40 is checked first: every term < 2^50
fn days_from_civil(y: i64, m: u32, d: u32) -> Option<i64> {
    const MAX_YEAR: i64 = 1 << 40;
    if !(-MAX_YEAR..=MAX_YEAR).contains(&y) {
        return None;
    }
    // From here every value is below 2^50 in magnitude.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The Gregorian year of a day count since 1970-01-01, for any `days` a
/// `u64` clock gives (below 2^38; larger counts are clamped to 2^40).
#[allow(clippy::arithmetic_side_effects)] // |days| <= 2^40 after the clamp: every term < 2^50
fn civil_year(days: i64) -> i64 {
    let z = days.clamp(-(1 << 40), 1 << 40) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month_from_march = mp + 3;
    yoe + era * 400 + i64::from(month_from_march > 12)
}

#[cfg(test)]
mod tests {
    use super::RetryAfter::{Delay, Infinite, Unsupported};
    use super::*;

    /// 1994-11-06 08:49:00 GMT, 37 s before the RFC's example date.
    const NOW: u64 = 784_111_740_000;

    #[test]
    fn parses_every_form_in_the_table() {
        let table: &[(&str, RetryAfter)] = &[
            ("1", Delay(1000)),
            ("0", Delay(0)),
            ("120", Delay(120_000)),
            (" 7\t", Delay(7000)),
            ("007", Delay(7000)),
            ("1.5", Unsupported),
            ("-1", Unsupported),
            ("+1", Unsupported),
            ("abc", Unsupported),
            ("", Unsupported),
            ("1e3", Unsupported),
            ("1000ms", Unsupported),
            ("99999999999999999999", Infinite),
            ("18446744073709552", Infinite),
            ("Sun, 06 Nov 1994 08:49:37 GMT", Delay(37_000)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", Delay(37_000)),
            ("Sun Nov  6 08:49:37 1994", Delay(37_000)),
            ("Sun Nov 16 08:49:37 1994", Delay(10 * 86_400_000 + 37_000)),
            ("Sat, 05 Nov 1994 08:49:37 GMT", Delay(0)),
            ("Thu, 01 Jan 1970 00:00:00 GMT", Delay(0)),
            ("Mon, 01 Jan 1900 00:00:00 GMT", Delay(0)),
            ("Sun, 06 Nov 1994 08:49:37 UTC", Unsupported),
            ("Sun, 6 Nov 1994 08:49:37 GMT", Unsupported),
            ("Sun, 30 Feb 1994 08:49:37 GMT", Unsupported),
            ("Sun, 29 Feb 1994 08:49:37 GMT", Unsupported),
            ("Sun, 06 Nov 1994 24:00:00 GMT", Unsupported),
            ("Sun, 06 Nov 1994 08:60:00 GMT", Unsupported),
            ("Sun, 06 Nov 1994 08:49:37 GMT trailing", Unsupported),
            ("Sun, 06 Foo 1994 08:49:37 GMT", Unsupported),
            ("Xyz, 06 Nov 1994 08:49:37 GMT", Unsupported),
            ("Sun Nov 06 08:49:37 1994 GMT", Unsupported),
            ("Sunday, 06 Nov 1994 08:49:37 GMT", Unsupported),
            (",", Unsupported),
            ("Sun", Unsupported),
        ];
        for &(value, expected) in table {
            assert_eq!(parse(value, NOW), expected, "Retry-After {value:?}");
        }
    }

    #[test]
    fn a_leap_day_and_a_leap_second_are_real_dates() {
        let leap_day = parse("Thu, 29 Feb 1996 00:00:00 GMT", NOW);
        assert!(matches!(leap_day, Delay(ms) if ms > 0));
        assert_eq!(parse("Sun, 06 Nov 1994 08:49:60 GMT", NOW), Delay(60_000));
    }

    #[test]
    fn rfc850_years_more_than_fifty_years_ahead_belong_to_the_past_century() {
        // now = 2026-11-30: "76" is 2076 (50 years ahead), "77" is 1977.
        let day_ms = |y, m, d| days_from_civil(y, m, d).map(|days| days as u64 * 86_400_000).unwrap();
        let now_2026 = day_ms(2026, 11, 30);
        let in_76 = parse("Thursday, 01-Jan-76 00:00:00 GMT", now_2026);
        assert_eq!(in_76, Delay(day_ms(2076, 1, 1) - now_2026));
        assert_eq!(parse("Saturday, 01-Jan-77 00:00:00 GMT", now_2026), Delay(0));
        let in_27 = parse("Friday, 01-Jan-27 00:00:00 GMT", now_2026);
        assert_eq!(in_27, Delay(32 * 86_400_000), "Dec 1 to Jan 1 is 31 days, plus Nov 30");
    }

    #[test]
    fn civil_conversions_round_trip() {
        for (y, m, d) in [(1970, 1, 1), (2000, 2, 29), (2026, 11, 30), (1969, 12, 31), (9999, 12, 31)] {
            assert_eq!(days_from_civil(y, m, d).map(civil_year), Some(y));
        }
        assert_eq!(days_from_civil(1970, 1, 1), Some(0));
        assert_eq!(days_from_civil(1994, 11, 6), Some(9075));
    }

    #[test]
    fn any_u64_clock_reads_past_dates_as_now_and_near_dates_exactly() {
        const EDGE: u64 = 1 << 63;
        // Found by fuzzing: a clock at or beyond 2^63 ms made every date "in
        // the future" (a panic, or a huge delay), and an RFC 850 date placed
        // in that clock's century overflowed the millisecond count.
        // 292278945-01-01: "95" is 50 years ahead, the furthest RFC 9110 allows.
        let rfc850_now = 9_223_370_470_828_800_000;
        let table: &[(&str, u64, RetryAfter)] = &[
            ("Thu, 01 Jan 1970 00:00:00 GMT", EDGE, Delay(0)),
            ("Mon, 01 Jan 1900 00:00:00 GMT", EDGE, Delay(0)),
            ("Fri, 31 Dec 9999 23:59:59 GMT", EDGE, Delay(0)),
            ("Sun Nov  6 08:49:37 1994", u64::MAX, Delay(0)),
            ("Monday, 01-Jan-95 00:00:00 GMT", rfc850_now, Delay((50 * 365 + 12) * 86_400_000)),
            ("Monday, 01-Jan-96 00:00:00 GMT", rfc850_now, Delay(0)),
            ("Thursday, 01-Jan-70 00:00:00 GMT", 0, Delay(0)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 0, Delay(NOW + 37_000)),
            ("Fri, 31 Dec 9999 23:59:59 GMT", 0, Delay(253_402_300_799_000)),
        ];
        for &(value, now, expected) in table {
            assert_eq!(parse(value, now), expected, "Retry-After {value:?} at {now}");
        }
    }

    #[test]
    fn retry_after_ms_is_read_rounded_up_and_never_shortens_retry_after() {
        assert_eq!(from_headers(Some("5"), Some("250"), NOW), Some(Delay(5000)), "the larger wins");
        assert_eq!(from_headers(Some("1"), Some("1250"), NOW), Some(Delay(1250)), "ms precision above");
        assert_eq!(from_headers(None, Some("0.2"), NOW), Some(Delay(1)));
        assert_eq!(from_headers(None, Some("12.0"), NOW), Some(Delay(12)));
        assert_eq!(from_headers(Some("later"), Some("300"), NOW), Some(Delay(300)));
        assert_eq!(from_headers(Some("99999999999999999999"), Some("300"), NOW), Some(Infinite));
        assert_eq!(from_headers(Some("5"), Some("soon"), NOW), Some(Delay(5000)));
        assert_eq!(from_headers(Some("5"), Some("-3"), NOW), Some(Delay(5000)));
        assert_eq!(from_headers(Some("5"), Some("3."), NOW), Some(Delay(5000)));
        assert_eq!(from_headers(None, Some("7"), NOW), Some(Delay(7)));
        assert_eq!(from_headers(None, None, NOW), None);
        assert_eq!(from_headers(Some("x"), None, NOW), Some(Unsupported));
        assert_eq!(parse_ms("99999999999999999999"), None);
    }
}
