//! Rate-limit headers as wait floors: the crate's floor equals what an
//! independent reader of each header says (the largest wins), is never
//! below any header it read, exists only on a throttling status, and never
//! lets a rate-limit header override a readable `Retry-After`.

use saferetry::policy::rate_limit::{throttling, FloorHeader, FloorHeaders, EPOCH_FROM_S};
use saferetry::policy::retry_after::{from_headers, RetryAfter};

/// Digits only, no sign, no spaces inside, at least one: an RFC 8941
/// non-negative integer (spaces and tabs around it allowed).
fn digits(v: &str) -> Option<u64> {
    let v = v.trim_matches(|c| c == ' ' || c == '\t');
    if v.is_empty() || v.chars().any(|c| !c.is_ascii_digit()) {
        return None;
    }
    let mut n: u64 = 0;
    for c in v.chars() {
        n = n.checked_mul(10)?.checked_add(u64::from(c.to_digit(10)?))?;
    }
    Some(n)
}

/// `RateLimit`: each member `item;k=v;…`; `r=0` with an integer `t`.
fn ratelimit(v: &str) -> Option<u64> {
    let mut best: Option<u64> = None;
    for member in v.split(',') {
        let parts: Vec<&str> = member.split(';').collect();
        let item = parts[0].trim_matches(|c| c == ' ' || c == '\t');
        let quoted = item.len() >= 2 && item.starts_with('"') && item.ends_with('"');
        let token =
            !item.is_empty() && item.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:*/".contains(c));
        if !quoted && !token {
            continue;
        }
        let (mut r, mut t, mut bad) = (None, None, false);
        for p in &parts[1..] {
            match p.trim_matches(|c| c == ' ' || c == '\t').split_once('=') {
                Some(("r", n)) => {
                    r = digits(n).or_else(|| {
                        bad = true;
                        None
                    })
                }
                Some(("t", n)) => {
                    t = digits(n).or_else(|| {
                        bad = true;
                        None
                    })
                }
                Some(_) => {}
                None => bad = true,
            }
        }
        if let (false, Some(0), Some(t)) = (bad, r, t) {
            if let Some(ms) = t.checked_mul(1000) {
                best = best.max(Some(ms));
            } else {
                return None; // an overflowing member makes the whole field unreadable
            }
        }
    }
    best
}

/// Non-negative decimal seconds in ms, rounded up.
fn seconds(v: &str) -> Option<u64> {
    let v = v.trim_matches(|c| c == ' ' || c == '\t');
    let (whole, frac) = match v.split_once('.') {
        Some((w, f)) if !f.is_empty() => (w, f),
        Some(_) => return None,
        None => (v, ""),
    };
    if frac.chars().any(|c| !c.is_ascii_digit()) {
        return None;
    }
    let mut ms = digits(whole)?.checked_mul(1000)?;
    let padded: String = frac.chars().chain("000".chars()).take(3).collect();
    ms = ms.checked_add(padded.parse::<u64>().ok()?)?;
    let rest_nonzero = frac.chars().skip(3).any(|c| c != '0');
    if rest_nonzero {
        ms.checked_add(1)
    } else {
        Some(ms)
    }
}

/// The floor the headers set for `status` at `now_ms`.
pub fn check(h: &FloorHeaders, status: u16, now_ms: u64) {
    let got = h.floor(status, now_ms);
    let standard = from_headers(h.retry_after.as_deref(), h.retry_after_ms.as_deref(), now_ms);
    if let Some(ra) = standard {
        let (value, header) = got.expect("a present Retry-After is never ignored");
        assert_eq!(value, ra, "Retry-After wins: {h:?}");
        assert!(matches!(header, FloorHeader::RetryAfter | FloorHeader::RetryAfterMs), "{header:?}");
        return;
    }
    if !throttling(status) {
        assert_eq!(got, None, "no floor from rate-limit headers on a {status}: {h:?}");
        return;
    }
    let reset = match (h.remaining.as_deref().and_then(digits), h.reset.as_deref().and_then(digits)) {
        (Some(0), Some(r)) if r < EPOCH_FROM_S => r.checked_mul(1000),
        (Some(0), Some(r)) => r.checked_mul(1000).map(|at| at.saturating_sub(now_ms)),
        _ => None,
    };
    let each = [
        (h.ratelimit.as_deref().and_then(ratelimit), FloorHeader::RateLimit),
        (reset, FloorHeader::XRateLimitReset),
        (h.reset_after.as_deref().and_then(seconds), FloorHeader::XRateLimitResetAfter),
    ];
    let want = each.iter().filter_map(|&(ms, _)| ms).max();
    match got {
        Some((RetryAfter::Delay(ms), header)) => {
            assert_eq!(Some(ms), want, "the largest reset wins: {h:?}");
            let named = each.iter().find(|&&(_, n)| n == header).and_then(|&(v, _)| v);
            assert_eq!(named, Some(ms), "the named header {header:?} says {named:?}, the floor is {ms}");
            for (v, n) in each {
                assert!(v.is_none_or(|v| v <= ms), "{n:?} says {v:?}, above the floor {ms}");
            }
        }
        other => assert_eq!(other.map(|(ra, _)| ra), want.map(RetryAfter::Delay), "{h:?}"),
    }
}
