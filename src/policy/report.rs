//! The report of one logical operation: every attempt and why it ended.
//!
//! It stores no request or response headers at all (only the parsed
//! Retry-After), so credentials cannot reach it through them; the one piece
//! of free text, the body snippet, has the request's credential values
//! redacted before it is kept.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Serialize, Serializer};

use super::classify::{Stage, WaitKind};
use super::rate_limit::FloorHeader;
use super::budget::Mode;
use super::number::{ms, opt_ms};
use super::reason::Reason;
use super::text;

fn is_false(b: &bool) -> bool {
    !*b
}

/// `responseBody` (only present when a response was handed over).
fn body_mode<S: Serializer>(streamed: &Option<bool>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *streamed == Some(true) { "stream" } else { "buffer" })
}

/// A poll's record says `phase: "poll"`.
fn poll_phase<S: Serializer>(_: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("poll")
}

/// An attempt's error, when it has no status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorInfo {
    pub stage: Stage,
    /// A runtime code (`ECONNREFUSED`, `UND_ERR_SOCKET`, …) or ours
    /// (`attempt-timeout`, `deadline`, `cancelled`, `body-too-large`).
    pub code: String,
    /// The JS error's `name` (`TypeError`, `TimeoutError`, …).
    pub name: String,
}

/// One attempt as `report.attempts[i]` shows it: absent fields are left out.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptRecord {
    /// Offset from the operation's start.
    #[serde(serialize_with = "ms")]
    pub start_ms: u64,
    #[serde(serialize_with = "ms")]
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    pub planned_wait_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_kind: Option<WaitKind>,
    /// The server's Retry-After floor, when one was read.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    pub retry_after_ms: Option<u64>,
    /// The header that set that floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor_header: Option<FloorHeader>,
    /// A poll of a submitted task (not the submit).
    #[serde(rename = "phase", skip_serializing_if = "is_false", serialize_with = "poll_phase")]
    pub poll: bool,
}

/// The report as `reportOf()` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub reason: Reason,
    /// Epoch milliseconds at which trying again makes sense, when known.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    pub retry_at: Option<u64>,
    #[serde(serialize_with = "ms")]
    pub elapsed_ms: u64,
    pub attempts: Vec<AttemptRecord>,
    /// How the final response's body reached the caller: `Some(true)`
    /// streamed, `Some(false)` read inside the attempt (rule 13); shown as
    /// `responseBody: "stream" | "buffer"`.
    #[serde(rename = "responseBody", skip_serializing_if = "Option::is_none", serialize_with = "body_mode")]
    pub streamed: Option<bool>,
    /// A streamed body: how long after the final response's headers it was
    /// handed over (0 at the headers; more when `auto` read some of it
    /// inside the attempt first).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "opt_ms")]
    pub handed_over_ms: Option<u64>,
    /// A cross-origin response may have hidden its Retry-After.
    #[serde(skip_serializing_if = "is_false")]
    pub retry_after_hidden: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// Where a shared budget came from when the operation ended (rule 9):
    /// leased from the fleet's authority, or the fallback.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Mode>,
    /// Epoch ms before which the server asked not to be asked again (the
    /// latest Retry-After seen): a fresh operation must not start sooner.
    /// The outcome carries it, not the report.
    #[serde(skip)]
    pub not_before: Option<u64>,
}

impl Report {
    /// A report with no attempt yet, of an operation that has not ended.
    pub fn new() -> Report {
        Report {
            reason: Reason::Succeeded,
            retry_at: None,
            elapsed_ms: 0,
            attempts: Vec::new(),
            retry_after_hidden: false,
            snippet: None,
            not_before: None,
            streamed: None,
            handed_over_ms: None,
            budget: None,
        }
    }
}

impl Default for Report {
    fn default() -> Self {
        Report::new()
    }
}

/// The body bytes read for a snippet (the host decodes them: js/src/
/// attempts.js `head`), and the characters kept.
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
    if let Some((_, credentials)) = text::split_once(value, b' ') {
        push(credentials);
    }
    for pair in text::split(value, |b| b == b';' || b == b',') {
        if let Some((_, v)) = text::split_once(pair, b'=') {
            push(v);
        }
    }
}

/// A bounded, redacted snippet of a failed response's body from `head`,
/// its first [`SNIPPET_READ_BYTES`] as the host decoded them (bytes that
/// are not UTF-8 as U+FFFD, as `TextDecoder` and `String::from_utf8_lossy`
/// both read them: the module links no decoder of its own):
/// [`SNIPPET_CHARS`] kept, secrets replaced before truncation so no part
/// of one survives the cut.
pub fn snippet(head: &str, secrets: &[String]) -> Option<String> {
    let mut text = String::from(head);
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

// Native only: they use proptest or serde_json, which the wasm tests do not have.
#[cfg(all(test, not(target_arch = "wasm32")))]
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
        let body = "denied: got Authorization: Bearer tok-123456 and also tok-123456";
        let out = snippet(body, &s).unwrap();
        assert!(!out.contains("tok-123456"), "{out}");
        assert_eq!(out, "denied: got Authorization: [redacted] and also [redacted]");

        let long = "x".repeat(5000);
        assert_eq!(snippet(&long, &[]).unwrap().chars().count(), SNIPPET_CHARS);
        assert_eq!(snippet("  \n ", &[]), None);
    }

    #[test]
    fn a_secret_straddling_the_cut_is_redacted_before_truncation() {
        let s = secrets(&["Bearer secret-token-value"]);
        let body = format!("{}secret-token-value", ".".repeat(190));
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

    /// The report's public shape (README, `reportOf`): camelCase keys,
    /// absent fields left out, names for enums, milliseconds as numbers
    /// even beyond 2^53 (a Retry-After of "never").
    #[test]
    fn a_report_serializes_to_its_public_shape() {
        use crate::policy::classify::{Stage, WaitKind};
        let report = Report {
            reason: Reason::AttemptsExhausted,
            retry_at: Some(1_700_000_000_000),
            elapsed_ms: 120,
            attempts: Vec::from([
                AttemptRecord {
                    start_ms: 0,
                    duration_ms: 5,
                    status: Some(503),
                    planned_wait_ms: Some(40),
                    wait_kind: Some(WaitKind::RetryAfter(u64::MAX)),
                    retry_after_ms: Some(u64::MAX),
                    floor_header: Some(FloorHeader::RetryAfter),
                    ..AttemptRecord::default()
                },
                AttemptRecord {
                    start_ms: 45,
                    duration_ms: 75,
                    error: Some(ErrorInfo {
                        stage: Stage::MaybeDelivered,
                        code: String::from("UND_ERR_SOCKET"),
                        name: String::from("TypeError"),
                    }),
                    poll: true,
                    ..AttemptRecord::default()
                },
            ]),
            retry_after_hidden: true,
            snippet: Some(String::from("busy")),
            not_before: Some(1),
            streamed: Some(true),
            handed_over_ms: Some(312),
            budget: Some(Mode::Fallback),
        };
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "reason": "attempts-exhausted",
                "retryAt": 1_700_000_000_000.0,
                "elapsedMs": 120.0,
                "attempts": [
                    { "startMs": 0.0, "durationMs": 5.0, "status": 503, "plannedWaitMs": 40.0,
                      "waitKind": "retry-after", "retryAfterMs": u64::MAX as f64, "floorHeader": "retry-after" },
                    { "startMs": 45.0, "durationMs": 75.0,
                      "error": { "stage": "maybe-delivered", "code": "UND_ERR_SOCKET", "name": "TypeError" },
                      "phase": "poll" },
                ],
                "responseBody": "stream",
                "handedOverMs": 312.0,
                "retryAfterHidden": true,
                "snippet": "busy",
                "budget": "fallback",
            })
        );
        let bare = Report {
            retry_at: None,
            retry_after_hidden: false,
            snippet: None,
            attempts: Vec::new(),
            streamed: None,
            handed_over_ms: None,
            budget: None,
            ..report
        };
        let keys: Vec<String> =
            serde_json::to_value(&bare).unwrap().as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["attempts", "elapsedMs", "reason"]);
    }
}
