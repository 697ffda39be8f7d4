//! An independent reader of `Retry-After` (RFC 9110 §10.2.3, dates per
//! §5.6.7), the oracle the crate's parser is compared against.
//!
//! It is written differently on purpose: each date form is a template
//! matched character by character, days are counted by a closed formula of
//! whole years plus a month table (not H. Hinnant's era arithmetic), the
//! current year is found by search, and everything is `i128`. The two agree
//! only if both read the RFC the same way.
//!
//! One reading is shared, not derived: RFC 850's "more than 50 years in the
//! future" is judged by the year (the crate's documented choice).

use saferetry::policy::retry_after::RetryAfter;

const DAY_MS: i128 = 86_400_000;
const SHORT_DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/// Days before the first of each month in a common year.
const BEFORE_MONTH: [i128; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

/// What a `Retry-After` value should be read as at `now_ms`.
pub fn expected(value: &str, now_ms: u64) -> RetryAfter {
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    if !value.is_empty() && value.chars().all(|c| c.is_ascii_digit()) {
        let seconds: u128 = value.chars().fold(0u128, |acc, c| {
            acc.saturating_mul(10).saturating_add(u128::from(c.to_digit(10).unwrap_or(0)))
        });
        return match u64::try_from(seconds.saturating_mul(1000)) {
            Ok(ms) => RetryAfter::Delay(ms),
            Err(_) => RetryAfter::Infinite,
        };
    }
    match date_ms(value, now_ms) {
        Some(at) => {
            let delay = (at - i128::from(now_ms)).max(0);
            u64::try_from(delay).map_or(RetryAfter::Infinite, RetryAfter::Delay)
        }
        None => RetryAfter::Unsupported,
    }
}

/// `Retry-After-Ms`: `digits[.digits]` milliseconds, rounded up; `None`
/// when unreadable or beyond u64.
pub fn expected_ms(value: &str) -> Option<u64> {
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    let mut parts = value.splitn(2, '.');
    let whole = parts.next()?;
    let fraction = parts.next();
    let all_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || fraction.is_some_and(|f| f.is_empty() || !all_digits(f)) {
        return None;
    }
    let ms: u64 = whole.parse().ok()?;
    let up = fraction.is_some_and(|f| f.chars().any(|c| c != '0'));
    Some(ms.saturating_add(u64::from(up)))
}

/// The fields a template captured.
#[derive(Default)]
struct Fields {
    weekday: String,
    day: i128,
    month: String,
    year: i128,
    hour: i128,
    minute: i128,
    second: i128,
}

/// Matches `value` against a template: `W` weekday letters (any run of
/// ASCII letters), `d` a digit of the day (`_` a space or a digit), `n`
/// month letters, `y` year digits, `h` `m` `s` time digits; anything else
/// must be there literally.
fn template(value: &str, pattern: &str) -> Option<Fields> {
    let v = value.as_bytes();
    let p = pattern.as_bytes();
    let (mut i, mut j) = (0, 0);
    let mut f = Fields::default();
    let push = |n: &mut i128, b: u8| -> Option<()> {
        b.is_ascii_digit().then(|| *n = *n * 10 + i128::from(b - b'0'))
    };
    while j < p.len() {
        if p[j] == b'W' {
            while i < v.len() && v[i].is_ascii_alphabetic() {
                f.weekday.push(char::from(v[i]));
                i += 1;
            }
            j += 1;
            continue;
        }
        let b = *v.get(i)?;
        match p[j] {
            b'd' => push(&mut f.day, b)?,
            b'_' if b == b' ' => {}
            b'_' => push(&mut f.day, b)?,
            b'n' if b.is_ascii_alphabetic() => f.month.push(char::from(b)),
            b'y' => push(&mut f.year, b)?,
            b'h' => push(&mut f.hour, b)?,
            b'm' => push(&mut f.minute, b)?,
            b's' => push(&mut f.second, b)?,
            literal if literal == b => {}
            _ => return None,
        }
        i += 1;
        j += 1;
    }
    (i == v.len()).then_some(f)
}

fn date_ms(value: &str, now_ms: u64) -> Option<i128> {
    if let Some(f) = template(value, "W, dd nnn yyyy hh:mm:ss GMT") {
        return SHORT_DAYS.contains(&f.weekday.as_str()).then(|| to_ms(&f, f.year)).flatten();
    }
    if let Some(f) = template(value, "W, dd-nnn-yy hh:mm:ss GMT") {
        let year = two_digit_year(f.year, now_ms);
        return LONG_DAYS.contains(&f.weekday.as_str()).then(|| to_ms(&f, year)).flatten();
    }
    for asctime in ["W nnn dd hh:mm:ss yyyy", "W nnn _d hh:mm:ss yyyy"] {
        if let Some(f) = template(value, asctime) {
            return SHORT_DAYS.contains(&f.weekday.as_str()).then(|| to_ms(&f, f.year)).flatten();
        }
    }
    None
}

fn leap(y: i128) -> bool {
    y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0)
}

/// Leap years in `1..=n` (negative counts below year 1, so differences are
/// right for any two years).
fn leaps_through(n: i128) -> i128 {
    n.div_euclid(4) - n.div_euclid(100) + n.div_euclid(400)
}

/// Days from 1970-01-01 to January 1 of `y`.
fn year_start(y: i128) -> i128 {
    365 * (y - 1970) + leaps_through(y - 1) - leaps_through(1969)
}

fn to_ms(f: &Fields, year: i128) -> Option<i128> {
    let month = MONTHS.iter().position(|&m| m == f.month)?;
    let length = [31, if leap(year) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month];
    if !(1..=length).contains(&f.day) || f.hour > 23 || f.minute > 59 || f.second > 60 {
        return None;
    }
    let march_or_later = i128::from(month >= 2 && leap(year));
    let days = year_start(year) + BEFORE_MONTH[month] + march_or_later + f.day - 1;
    Some(days * DAY_MS + ((f.hour * 60 + f.minute) * 60 + f.second) * 1000)
}

/// The year `now_ms` falls in, found by search from an estimate.
fn year_of(now_ms: u64) -> i128 {
    let days = i128::from(now_ms).div_euclid(DAY_MS);
    let mut y = 1970 + days * 400 / 146_097;
    while year_start(y + 1) <= days {
        y += 1;
    }
    while year_start(y) > days {
        y -= 1;
    }
    y
}

/// The century placement of a two-digit year: the year ending in `yy`
/// in the current century, or in the previous one when that would be more
/// than 50 years ahead.
fn two_digit_year(yy: i128, now_ms: u64) -> i128 {
    let now = year_of(now_ms);
    let candidate = now / 100 * 100 + yy;
    if candidate > now + 50 {
        candidate - 100
    } else {
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oracle_reads_the_rfc_examples() {
        let now = 784_111_740_000;
        for v in
            ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"]
        {
            assert_eq!(expected(v, now), RetryAfter::Delay(37_000), "{v}");
        }
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(951_782_400_000), 2000); // 2000-02-29
    }
}
