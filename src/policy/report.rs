//! The report of one logical operation: every attempt and why it ended.
//!
//! It stores no request or response headers at all (only the parsed
//! Retry-After), so credentials cannot reach it through them; the one piece
//! of free text, the body snippet, has the request's credential values
//! redacted before it is kept.

use alloc::string::String;
use alloc::vec::Vec;

use super::classify::{Stage, WaitKind};
use super::rate_limit::FloorHeader;
use super::reason::Reason;

/// An attempt's error, when it has no status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    pub stage: Stage,
    /// A runtime code (`ECONNREFUSED`, `UND_ERR_SOCKET`, …) or ours
    /// (`attempt-timeout`, `deadline`, `cancelled`, `body-too-large`).
    pub code: String,
    /// The JS error's `name` (`TypeError`, `TimeoutError`, …).
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AttemptRecord {
    /// Offset from the operation's start.
    pub start_ms: u64,
    pub duration_ms: u64,
    pub status: Option<u16>,
    pub error: Option<ErrorInfo>,
    pub planned_wait_ms: Option<u64>,
    pub wait_kind: Option<WaitKind>,
    /// The server's Retry-After floor, when one was read.
    pub retry_after_ms: Option<u64>,
    /// The header that set that floor.
    pub floor_header: Option<FloorHeader>,
    /// A poll of a submitted task (not the submit).
    pub poll: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub reason: Reason,
    /// Epoch milliseconds at which trying again makes sense, when known.
    pub retry_at: Option<u64>,
    pub elapsed_ms: u64,
    pub attempts: Vec<AttemptRecord>,
    /// A cross-origin response may have hidden its Retry-After.
    pub retry_after_hidden: bool,
    pub snippet: Option<String>,
    /// Epoch ms before which the server asked not to be asked again (the
    /// latest Retry-After seen): a fresh operation must not start sooner.
    pub not_before: Option<u64>,
    /// How the final response's body reached the caller: `Some(true)`
    /// streamed, `Some(false)` read inside the attempt (rule 13).
    pub streamed: Option<bool>,
}

/// The body bytes read for a snippet, and the characters kept.
pub const SNIPPET_READ_BYTES: usize = 2048;
pub const SNIPPET_CHARS: usize = 200;
const REDACTED: &str = "[redacted]";

/// The credential headers whose values never reach a report.
pub const CREDENTIAL_HEADERS: [&str; 4] = ["authorization", "cookie", "proxy-authorization", "set-cookie"];

/// The values to scrub for one credential header's value: the whole value,
/// an `Authorization` value's credentials after its scheme, and each cookie
/// value. Parts shorter than 4 characters are not scrubbed (they would
/// mangle ordinary text and are no secret).
pub fn secrets_of(value: &str, out: &mut Vec<String>) {
    let mut push = |s: &str| {
        let s = s.trim();
        if s.len() >= 4 && !out.iter().any(|o| o == s) {
            out.push(String::from(s));
        }
    };
    push(value);
    if let Some((_, credentials)) = value.split_once(' ') {
        push(credentials);
    }
    for pair in value.split([';', ',']) {
        if let Some((_, v)) = pair.split_once('=') {
            push(v);
        }
    }
}

/// A bounded, redacted snippet of a failed response's body: at most
/// [`SNIPPET_READ_BYTES`] read, [`SNIPPET_CHARS`] kept, secrets replaced
/// before truncation so no part of one survives the cut.
pub fn snippet(body: &[u8], secrets: &[String]) -> Option<String> {
    let head = body.get(..SNIPPET_READ_BYTES).unwrap_or(body);
    let mut text = String::from_utf8_lossy(head).into_owned();
    // Longest first, so a secret containing another is replaced whole.
    let mut left: Vec<&String> = secrets.iter().collect();
    while let Some(i) = (0..left.len()).max_by_key(|&i| left[i].len()) {
        text = redact(&text, left.swap_remove(i));
    }
    let kept: String = text.trim().chars().take(SNIPPET_CHARS).collect();
    (!kept.is_empty()).then_some(kept)
}

/// Where `needle` first occurs in `hay` (a plain byte search: the core
/// string searcher drags panic formatting into the module).
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `text` with every occurrence of `secret` replaced.
fn redact(text: &str, secret: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = find(rest.as_bytes(), secret.as_bytes()) {
        // `at` and `at + secret.len()` are char boundaries: both strings are UTF-8.
        let (before, after) = rest.split_at_checked(at).unwrap_or((rest, ""));
        out.push_str(before);
        out.push_str(REDACTED);
        rest = after.get(secret.len()..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(values: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for v in values {
            secrets_of(v, &mut out);
        }
        out
    }

    #[test]
    fn credential_values_and_their_parts_become_secrets() {
        let s = secrets(&["Bearer tok-123456", "sid=abcdef; theme=dark"]);
        assert!(s.contains(&String::from("Bearer tok-123456")));
        assert!(s.contains(&String::from("tok-123456")));
        assert!(s.contains(&String::from("abcdef")));
        assert!(s.contains(&String::from("dark")));
        assert!(!s.iter().any(|x| x.len() < 4));
    }

    #[test]
    fn a_snippet_is_bounded_and_redacted() {
        let s = secrets(&["Bearer tok-123456"]);
        let body = b"denied: got Authorization: Bearer tok-123456 and also tok-123456";
        let out = snippet(body, &s).unwrap();
        assert!(!out.contains("tok-123456"), "{out}");
        assert_eq!(out, "denied: got Authorization: [redacted] and also [redacted]");

        let long = [b'x'; 5000];
        assert_eq!(snippet(&long, &[]).unwrap().chars().count(), SNIPPET_CHARS);
        assert_eq!(snippet(b"  \n ", &[]), None);
        let invalid_utf8 = [0xff, 0xfe, b'o', b'k'];
        assert_eq!(snippet(&invalid_utf8, &[]).unwrap(), "\u{fffd}\u{fffd}ok");
    }

    #[test]
    fn a_secret_straddling_the_cut_is_redacted_before_truncation() {
        let s = secrets(&["Bearer secret-token-value"]);
        let mut body = Vec::from([b'.'; 190]);
        body.extend_from_slice(b"secret-token-value");
        let out = snippet(&body, &s).unwrap();
        assert!(!out.contains("secret-"), "{out}");
        assert!(out.ends_with("[redac") || out.ends_with(REDACTED));
    }

    #[test]
    fn find_and_redact_work_on_bytes_and_keep_utf8_intact() {
        assert_eq!(find(b"abcabc", b"ca"), Some(2));
        assert_eq!(find(b"abc", b""), None);
        assert_eq!(find(b"ab", b"abc"), None);
        assert_eq!(redact("é-tok-é-tok", "tok"), "é-[redacted]-é-[redacted]");
        assert_eq!(redact("none here", "tok"), "none here");
    }

    #[test]
    fn only_the_first_2_kib_are_read() {
        let mut body = Vec::from([b' '; SNIPPET_READ_BYTES]);
        body.extend_from_slice(b"beyond");
        assert_eq!(snippet(&body, &[]), None);
    }
}
