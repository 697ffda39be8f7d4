//! Whether a response's body is read inside the attempt or handed to the
//! caller as it streams (DESIGN rule 13).
//!
//! Why both: an API document is small and only useful whole, so reading it
//! inside the attempt lets `attemptMs` cover a body that stalls or breaks
//! (a retry can still fix it). A stream — server-sent events, ndjson, an
//! LLM's answer as text, React Server Components, streamed HTML, a
//! download — is consumed as it arrives: holding it back until the end
//! delays the first chunk to the last, multiplies memory, turns a long
//! healthy stream into an attempt timeout, and has the server generate it
//! again on the retry. So `auto` (the default) buffers what arrives as a
//! document does and streams everything else.
//!
//! A `Content-Type` cannot tell the two apart: an LLM's answer is
//! `text/plain`, RSC `text/x-component`, streamed HTML `text/html`, a log
//! tail has none. What tells them apart is how the body arrives. A document
//! follows its headers at the link's pace (the server had it whole when it
//! answered); a stream is still arriving long after. So a body is read
//! inside the attempt only while it arrives as a document does, for at most
//! [`AUTO_HANDOVER_MS`] after its headers, and up to [`AUTO_BUFFER_BYTES`];
//! then it is handed over — what was read, then the rest, never read twice.
//! Two kinds of document end that window differently:
//!
//! - a text (any document but JSON): at [`AUTO_HANDOVER_MS`] after the
//!   headers, whatever arrives next — a timer, so a stream's first chunk
//!   never waits for its second: one sent with the headers reaches the
//!   caller at most that much later than `fetch` gives it, one sent later
//!   as it arrives. A text that stalls is the caller's to see, as with
//!   `fetch`.
//! - a JSON document (`application/json`, `…+json`: only useful whole, and
//!   never a stream of its own accord): only a chunk that arrives
//!   [`AUTO_HANDOVER_MS`] or more after the headers hands it over. A body
//!   that stops arriving before that (a stalled document: no chunk comes at
//!   all) is still inside the attempt, so `attemptMs` fails it and a retry
//!   can fix it.
//!
//! Why 250 ms (measured: BENCHMARKS.md "When auto hands over"): the p99
//! from headers to last byte of a chunked JSON stays under it for 1 MiB on
//! loopback and a LAN, 256 KiB on 4G (9 Mbit/s), 16 KiB on Lighthouse's
//! "Fast 4G" (1.6 Mbit/s). And it is short: a text stream's first chunk is
//! late by at most that much. A slower document is handed over and
//! streams: it still arrives whole, it only loses the retry a stall would
//! have earned.
//!
//! The `auto` rule, exactly:
//! - no body (HEAD, 204, 304, …): nothing to decide;
//! - a document — `Content-Type` `application/json`, `…+json`, `text/*`
//!   (not `text/event-stream`), `application/xml`, `…+xml`,
//!   `application/x-www-form-urlencoded`, or no `Content-Type` at all — is
//!   buffered when its `Content-Length` is at most [`AUTO_BUFFER_BYTES`]
//!   but not 0 (an empty body is the host's own, handed over at the
//!   headers: nothing to read); a larger declared one is streamed; one
//!   without a `Content-Length`
//!   (chunked) is read inside the attempt and handed over as above (by a
//!   timer for a text, by a late chunk for JSON) unless it ends first;
//! - anything else (`text/event-stream`, `application/x-ndjson`,
//!   `application/octet-stream`, images, audio, video, archives) is streamed.

use super::text;

/// The `responseBody` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseBody {
    #[default]
    Auto,
    Buffer,
    Stream,
}

impl ResponseBody {
    pub fn parse(value: &str) -> Option<ResponseBody> {
        match value {
            "auto" => Some(ResponseBody::Auto),
            "buffer" => Some(ResponseBody::Buffer),
            "stream" => Some(ResponseBody::Stream),
            _ => None,
        }
    }
}

/// In `auto`, documents up to this size are read inside the attempt.
pub const AUTO_BUFFER_BYTES: u64 = 1 << 20;

/// In `auto`, how long after its headers a document without
/// `Content-Length` is read inside the attempt (the module docs say why).
pub const AUTO_HANDOVER_MS: u64 = 250;

/// How long a body is read inside the attempt before it is handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inside {
    /// More bytes than this hand it over.
    pub bytes: u64,
    /// What time does.
    pub until: Until,
}

/// When time hands a body read inside the attempt over, counted from its
/// headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Never: a body `buffer` reads to its end.
    End,
    /// A chunk that arrives this many ms after the headers hands it over
    /// (that chunk included); a body that stops arriving stays inside the
    /// attempt, where `attemptMs` fails it (a JSON document).
    LateChunk(u64),
    /// This many ms after the headers it is handed over, whatever arrives
    /// next: a read still waiting for its chunk then goes to the caller
    /// (a text: its first chunk never waits for the second).
    Deadline(u64),
}

/// What the transport does after a chunk (or at the headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Reads the next chunk inside the attempt, for at most `within` ms
    /// (then hands the body over with that read still waiting); `None`:
    /// however long it takes.
    Read { within: Option<u64> },
    /// Hands the body over: what was read, then the rest.
    HandOver,
}

impl Inside {
    /// The whole body, up to `bytes` (more is the caller's to refuse).
    pub const fn whole(bytes: u64) -> Inside {
        Inside { bytes, until: Until::End }
    }

    /// Whether the transport reads the time at all ([`Inside::next`]'s
    /// `since_headers_ms` is then 0 throughout).
    pub fn timed(&self) -> bool {
        self.until != Until::End
    }

    /// With `total` bytes read, `since_headers_ms` after the headers (a
    /// chunk just arrived, or the headers did): read on inside the
    /// attempt, and for how long, or hand the body over.
    pub fn next(&self, total: u64, since_headers_ms: u64) -> Next {
        if total > self.bytes {
            return Next::HandOver;
        }
        match self.until {
            Until::End => Next::Read { within: None },
            Until::LateChunk(ms) if since_headers_ms < ms => Next::Read { within: None },
            Until::Deadline(ms) if since_headers_ms < ms => Next::Read { within: Some(ms.saturating_sub(since_headers_ms)) },
            Until::LateChunk(_) | Until::Deadline(_) => Next::HandOver,
        }
    }
}

/// What the transport does with one response's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Read it whole inside the attempt (`maxBodyBytes` applies).
    Buffer,
    /// Read inside the attempt while [`Inside::next`] says so; then hand
    /// over what was read plus the rest.
    BufferUpTo(Inside),
    /// Hand the response over as soon as its headers arrived.
    Stream,
}

/// How much of a response body is read inside the attempt.
pub fn handling(mode: ResponseBody, content_type: Option<&str>, content_length: Option<u64>) -> Handling {
    let kind = match mode {
        ResponseBody::Buffer => return Handling::Buffer,
        ResponseBody::Stream => return Handling::Stream,
        ResponseBody::Auto => kind(content_type),
    };
    let until = match kind {
        Kind::Other => return Handling::Stream,
        Kind::Json => Until::LateChunk(AUTO_HANDOVER_MS),
        Kind::Text => Until::Deadline(AUTO_HANDOVER_MS),
    };
    match content_length {
        // Nothing to read: the host's own `Response`, as `fetch` gave it
        // (its empty body ends, or follows the caller's signal, as the
        // host's does).
        Some(0) => Handling::Stream,
        Some(len) if len <= AUTO_BUFFER_BYTES => Handling::Buffer,
        Some(_) => Handling::Stream,
        None => Handling::BufferUpTo(Inside { bytes: AUTO_BUFFER_BYTES, until }),
    }
}

/// What an attempt's start has the executor read whole in the same step as
/// its headers (src/host/operation/io.rs `WHOLE`, whose rule is js/src/
/// attempts.js `readsWhole`), under `mode`: a response declaring at most
/// this many bytes, and with `true` only a JSON one; `None`: none. Each
/// response it names is one [`handling`] buffers, and one the transport
/// reads at once from its `Content-Length` (tests/fold_rule.rs checks).
pub fn folded(mode: ResponseBody, max_body_bytes: u64) -> Option<(u64, bool)> {
    match mode {
        ResponseBody::Stream => None,
        ResponseBody::Buffer => Some((max_body_bytes, false)),
        ResponseBody::Auto => Some((max_body_bytes.min(AUTO_BUFFER_BYTES), true)),
    }
}

/// What a `Content-Type` names, for `auto` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A JSON document: `application/json`, `…+json`.
    Json,
    /// Any other document: `text/*` but `text/event-stream`, XML, a form,
    /// or no type at all.
    Text,
    /// Not a document: streamed.
    Other,
}

fn kind(content_type: Option<&str>) -> Kind {
    let Some(value) = content_type else { return Kind::Text };
    let essence = super::retry_after::trim_ows(text::before(value, b';'));
    let (kind, subtype) = text::split_once(essence, b'/').unwrap_or((essence, ""));
    let is = |a: &str, b: &str| kind.eq_ignore_ascii_case(a) && subtype.eq_ignore_ascii_case(b);
    let suffix = |s: &str| {
        subtype.len() > s.len() && {
            let at = subtype.len().saturating_sub(s.len());
            subtype.get(at..).is_some_and(|tail| tail.eq_ignore_ascii_case(s))
        }
    };
    if essence.is_empty() {
        Kind::Text
    } else if is("application", "json") || suffix("+json") {
        Kind::Json
    } else if (kind.eq_ignore_ascii_case("text") && !subtype.eq_ignore_ascii_case("event-stream"))
        || is("application", "xml")
        || is("application", "x-www-form-urlencoded")
        || suffix("+xml")
    {
        Kind::Text
    } else {
        Kind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::Handling::*;
    use super::*;

    const JSON: Inside = Inside { bytes: AUTO_BUFFER_BYTES, until: Until::LateChunk(AUTO_HANDOVER_MS) };
    const TEXT: Inside = Inside { bytes: AUTO_BUFFER_BYTES, until: Until::Deadline(AUTO_HANDOVER_MS) };

    #[test]
    fn auto_buffers_documents_and_streams_the_rest() {
        let mib = AUTO_BUFFER_BYTES;
        let (json, text) = (BufferUpTo(JSON), BufferUpTo(TEXT));
        let table: &[(Option<&str>, Option<u64>, Handling)] = &[
            (Some("application/json"), Some(120), Buffer),
            (Some("application/json"), Some(0), Stream),
            (Some("text/plain"), Some(0), Stream),
            (None, Some(0), Stream),
            (Some("text/plain"), Some(1), Buffer),
            (Some("application/json; charset=utf-8"), None, json),
            (Some("Application/JSON"), Some(mib), Buffer),
            (Some("application/json"), Some(mib + 1), Stream),
            (Some("application/problem+json"), Some(80), Buffer),
            (Some("application/vnd.github+json"), None, json),
            (Some("application/vnd.api+JSON; charset=utf-8"), None, json),
            (Some("text/plain"), Some(10), Buffer),
            (Some("text/plain; charset=utf-8"), None, text),
            (Some("text/html; charset=utf-8"), None, text),
            (Some("text/x-component"), None, text),
            (Some("text/vnd.turbo-stream.html"), None, text),
            (Some("text/json"), None, text),
            (Some("application/xml"), Some(10), Buffer),
            (Some("application/xml"), None, text),
            (Some("application/atom+xml"), Some(10), Buffer),
            (Some("application/atom+xml"), None, text),
            (Some("application/x-www-form-urlencoded"), Some(10), Buffer),
            (Some("application/x-www-form-urlencoded"), None, text),
            (None, Some(2), Buffer),
            (None, None, text),
            (Some(""), None, text),
            (Some("text/event-stream"), None, Stream),
            (Some("text/event-stream; charset=utf-8"), Some(10), Stream),
            (Some("application/x-ndjson"), None, Stream),
            (Some("application/octet-stream"), Some(40 << 20), Stream),
            (Some("application/octet-stream"), Some(3), Stream),
            (Some("image/png"), Some(10), Stream),
            (Some("video/mp4"), None, Stream),
            (Some("application/zip"), None, Stream),
            (Some("application/jsonl"), None, Stream),
            (Some("+json"), None, Stream),
        ];
        for (i, &(ct, len, want)) in table.iter().enumerate() {
            assert_eq!(handling(ResponseBody::Auto, ct, len), want, "row {i}: {ct:?} {len:?}");
        }
    }

    #[test]
    fn a_document_is_read_inside_the_attempt_only_while_it_arrives_as_a_document_does() {
        let read = |within| Next::Read { within };
        // (inside, bytes read so far, ms since the headers, what next)
        let table: &[(Inside, u64, u64, Next)] = &[
            // A JSON document: read on, however long the next chunk takes,
            // until one arrives 250 ms or more after the headers.
            (JSON, 0, 0, read(None)),
            (JSON, 100, 0, read(None)),
            (JSON, 100, 249, read(None)),
            (JSON, 100, 250, Next::HandOver),
            (JSON, 100, 12_000, Next::HandOver),
            // A text: the next chunk is waited for until 250 ms after the
            // headers at most, then the body is handed over.
            (TEXT, 0, 0, read(Some(250))),
            (TEXT, 40, 0, read(Some(250))),
            (TEXT, 40, 30, read(Some(220))),
            (TEXT, 100, 249, read(Some(1))),
            (TEXT, 100, 250, Next::HandOver),
            (TEXT, 100, 12_000, Next::HandOver),
            // Either: past 1 MiB, handed over at once.
            (JSON, AUTO_BUFFER_BYTES, 10, read(None)),
            (JSON, AUTO_BUFFER_BYTES + 1, 10, Next::HandOver),
            (TEXT, AUTO_BUFFER_BYTES, 10, read(Some(240))),
            (TEXT, AUTO_BUFFER_BYTES + 1, 0, Next::HandOver),
            (TEXT, u64::MAX, u64::MAX, Next::HandOver),
            (JSON, u64::MAX, u64::MAX, Next::HandOver),
        ];
        for (i, &(inside, total, ms, want)) in table.iter().enumerate() {
            assert_eq!(inside.next(total, ms), want, "row {i}: {:?}, {total} bytes at {ms} ms", inside.until);
        }
        assert!(TEXT.timed() && JSON.timed());
        // `buffer` reads a body whole however slowly it arrives; only size stops it.
        let whole = Inside::whole(16 << 20);
        assert!(!whole.timed());
        assert_eq!(whole.next(16 << 20, u64::MAX), read(None));
        assert_eq!(whole.next((16 << 20) + 1, 0), Next::HandOver);
    }

    /// How a body read under `auto` ends, on virtual time, as the transport
    /// reads it (src/host/attempt/transport.rs `read_up_to`): each chunk is (ms after
    /// the headers, bytes); `end` is when the body ends (`None`: it never
    /// does). A read waits for the next chunk or the end, raced against the
    /// deadline [`Inside::next`] gives; the attempt times out at
    /// `attempt_ms` after the headers unless the body ended or was handed
    /// over first. `HandedOver::read`: the chunks read inside the attempt
    /// (the caller gets them at `at`, the rest as they arrive).
    fn read_under_auto(inside: Inside, chunks: &[(u64, u64)], end: Option<u64>, attempt_ms: u64) -> Read {
        let (mut now, mut total, mut read) = (0, 0, 0);
        loop {
            let within = match inside.next(total, now) {
                Next::HandOver => return Read::HandedOver { at: now, read },
                Next::Read { within } => within,
            };
            let deadline = within.map_or(u64::MAX, |ms| now + ms).min(attempt_ms);
            match chunks.get(read) {
                Some(&(at, bytes)) if at < deadline => {
                    (now, total, read) = (now.max(at), total + bytes, read + 1);
                }
                None if end.is_some_and(|at| at < deadline) => return Read::Buffered(total),
                _ if deadline == attempt_ms => return Read::TimedOut,
                _ => return Read::HandedOver { at: deadline, read },
            }
        }
    }

    #[derive(Debug, PartialEq, Eq)]
    enum Read {
        Buffered(u64),
        HandedOver { at: u64, read: usize },
        TimedOut,
    }

    #[test]
    fn streams_are_handed_over_and_stalled_json_still_times_out() {
        use Read::*;
        let every = |gap: u64, n: u64, first: u64| (0..n).map(|i| (first + i * gap, 40)).collect::<Vec<_>>();
        let auto = |ct: &str, chunks: &[(u64, u64)], end: Option<u64>| match handling(ResponseBody::Auto, Some(ct), None) {
            BufferUpTo(inside) => read_under_auto(inside, chunks, end, 10_000),
            other => panic!("{ct}: {other:?}"),
        };
        let text = "text/plain; charset=utf-8";
        // An LLM's answer, headers flushed first, a chunk every 500 ms for
        // 12 s: handed over 250 ms after the headers with nothing read, so
        // the first chunk reaches the caller as it arrives.
        let llm = every(500, 24, 500);
        assert_eq!(auto(text, &llm, Some(12_000)), HandedOver { at: 250, read: 0 });
        // The same with the first chunk sent with the headers: it reaches
        // the caller 250 ms later, not at the second chunk (500 ms).
        let llm_with_headers = every(500, 24, 0);
        assert_eq!(auto(text, &llm_with_headers, Some(11_500)), HandedOver { at: 250, read: 1 });
        // And with 5 s between chunks: still 250 ms, not 5 s.
        assert_eq!(auto("text/html", &every(5_000, 3, 0), Some(10_000)), HandedOver { at: 250, read: 1 });
        for ct in ["text/x-component", "text/vnd.turbo-stream.html", "", "application/xml"] {
            assert_eq!(auto(ct, &llm_with_headers, Some(11_500)), HandedOver { at: 250, read: 1 }, "{ct:?}");
        }
        // Tokens every 30 ms: handed over at 250 ms, the chunks up to 240 ms read.
        assert_eq!(auto(text, &every(30, 400, 0), Some(12_000)), HandedOver { at: 250, read: 9 });
        // A text that stalls is the caller's to see: handed over, not timed out.
        assert_eq!(auto(text, &[(0, 60), (3, 40)], None), HandedOver { at: 250, read: 2 });
        // A document that arrives in a few chunks right after its headers is buffered.
        let fast = [(0, 16_384), (2, 16_384), (5, 8_000)];
        assert_eq!(auto("application/json", &fast, Some(5)), Buffered(40_768));
        assert_eq!(auto(text, &fast, Some(5)), Buffered(40_768));
        // A JSON slower than 250 ms is handed over, whole, as a stream, at
        // the chunk that shows it; a text at 250 ms.
        let slow = [(0, 16_384), (170, 16_384), (340, 16_384)];
        assert_eq!(auto("application/json", &slow, Some(340)), HandedOver { at: 340, read: 3 });
        assert_eq!(auto(text, &slow, Some(340)), HandedOver { at: 250, read: 2 });
        // A JSON that stalls mid-body (half sent, then nothing) is never
        // handed over: the attempt times out and a retry can fix it.
        let stalled = [(0, 60), (3, 40)];
        assert_eq!(auto("application/json", &stalled, None), TimedOut);
        assert_eq!(auto("application/problem+json", &stalled, None), TimedOut);
        // A JSON whose chunks come every 500 ms from the headers on: at the second.
        assert_eq!(auto("application/json", &llm_with_headers, Some(11_500)), HandedOver { at: 500, read: 2 });
        // A big chunked document is handed over at 1 MiB, however fast.
        let big = every(0, 40, 0).iter().map(|&(at, _)| (at, 32_768)).collect::<Vec<_>>();
        assert_eq!(auto("application/json", &big, Some(1)), HandedOver { at: 0, read: 33 });
        assert_eq!(auto(text, &big, Some(1)), HandedOver { at: 0, read: 33 });
    }

    #[test]
    fn buffer_and_stream_modes_ignore_the_content_type() {
        for ct in [Some("text/event-stream"), Some("application/json"), Some("text/plain"), None] {
            assert_eq!(handling(ResponseBody::Buffer, ct, None), Buffer);
            assert_eq!(handling(ResponseBody::Stream, ct, Some(5)), Stream);
        }
    }

    #[test]
    fn the_option_accepts_exactly_its_three_words() {
        assert_eq!(ResponseBody::parse("auto"), Some(ResponseBody::Auto));
        assert_eq!(ResponseBody::parse("buffer"), Some(ResponseBody::Buffer));
        assert_eq!(ResponseBody::parse("stream"), Some(ResponseBody::Stream));
        for bad in ["", "Auto", "streamed", "buffered", "none"] {
            assert_eq!(ResponseBody::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn odd_content_types_never_panic() {
        for ct in ["/", "a/", "/b", "é/ü+json", "text", "application/+json", "ü+xml", "\u{0}/\u{0}"] {
            let _ = kind(Some(ct));
        }
        assert_eq!(kind(Some("é/ü+jsonx")), Kind::Other);
        assert_eq!(kind(Some("x/é+json")), Kind::Json);
        assert_eq!(kind(Some("x/é+xml")), Kind::Text);
    }
}
