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
//! inside the attempt only while it arrives as a document does: a chunk
//! that arrives [`AUTO_HANDOVER_MS`] or more after the headers, or a body
//! that grows past [`AUTO_BUFFER_BYTES`], hands it over — what was read,
//! then the rest, never read twice. A body that stops arriving before that
//! (a stalled document: no chunk comes at all) is still inside the attempt,
//! so `attemptMs` fails it and a retry can fix it.
//!
//! Why 250 ms (measured: BENCHMARKS.md "When auto hands over"): the p99
//! from headers to last byte of a chunked JSON stays under it for 1 MiB on
//! loopback and a LAN, 256 KiB on 4G (9 Mbit/s), 16 KiB on Lighthouse's
//! "Fast 4G" (1.6 Mbit/s). And it is short: a stream's first chunk is late
//! by at most that much plus its own gap between chunks, and not at all
//! when it comes 250 ms or more after the headers (an LLM's first token
//! usually does). A slower document is handed over and streams: it still
//! arrives whole, it only loses the retry a stall would have earned.
//!
//! The `auto` rule, exactly:
//! - no body (HEAD, 204, 304, …): nothing to decide;
//! - a document — `Content-Type` `application/json`, `…+json`, `text/*`
//!   (not `text/event-stream`), `application/xml`, `…+xml`,
//!   `application/x-www-form-urlencoded`, or no `Content-Type` at all — is
//!   buffered when its `Content-Length` is at most [`AUTO_BUFFER_BYTES`]; a
//!   larger declared one is streamed; one without a `Content-Length`
//!   (chunked) is read while it arrives as a document does (above) and
//!   handed over when it does not;
//! - anything else (`text/event-stream`, `application/x-ndjson`,
//!   `application/octet-stream`, images, audio, video, archives) is streamed.

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

/// In `auto`, a chunk of a document without `Content-Length` that arrives
/// this long after the headers hands the body over (the module docs say why).
pub const AUTO_HANDOVER_MS: u64 = 250;

/// How long a body is read inside the attempt before it is handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inside {
    /// More bytes than this hand it over.
    pub bytes: u64,
    /// A chunk that arrives this many ms after the headers hands it over;
    /// `None`: time never does (a body `buffer` reads to its end).
    pub ms: Option<u64>,
}

impl Inside {
    /// The whole body, up to `bytes` (more is the caller's to refuse).
    pub const fn whole(bytes: u64) -> Inside {
        Inside { bytes, ms: None }
    }

    /// After a chunk that brought the body read so far to `total` bytes,
    /// arriving `since_headers_ms` after the headers: whether to read on
    /// inside the attempt (`false`: hand it over, this chunk included).
    pub fn read_on(&self, total: u64, since_headers_ms: u64) -> bool {
        total <= self.bytes && self.ms.is_none_or(|ms| since_headers_ms < ms)
    }
}

/// What the transport does with one response's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Read it whole inside the attempt (`maxBodyBytes` applies).
    Buffer,
    /// Read inside the attempt while [`Inside::read_on`] says so; then hand
    /// over what was read plus the rest.
    BufferUpTo(Inside),
    /// Hand the response over as soon as its headers arrived.
    Stream,
}

/// How much of a response body is read inside the attempt.
pub fn handling(mode: ResponseBody, content_type: Option<&str>, content_length: Option<u64>) -> Handling {
    match mode {
        ResponseBody::Buffer => Handling::Buffer,
        ResponseBody::Stream => Handling::Stream,
        ResponseBody::Auto if !document(content_type) => Handling::Stream,
        ResponseBody::Auto => match content_length {
            Some(len) if len <= AUTO_BUFFER_BYTES => Handling::Buffer,
            Some(_) => Handling::Stream,
            None => Handling::BufferUpTo(Inside { bytes: AUTO_BUFFER_BYTES, ms: Some(AUTO_HANDOVER_MS) }),
        },
    }
}

/// Whether a `Content-Type` names an API document (see the module docs).
pub fn document(content_type: Option<&str>) -> bool {
    let Some(value) = content_type else { return true };
    let essence = value.split(';').next().unwrap_or("").trim_matches([' ', '\t']);
    let (kind, subtype) = essence.split_once('/').unwrap_or((essence, ""));
    let is = |a: &str, b: &str| kind.eq_ignore_ascii_case(a) && subtype.eq_ignore_ascii_case(b);
    let suffix = |s: &str| {
        subtype.len() > s.len() && {
            let at = subtype.len().saturating_sub(s.len());
            subtype.get(at..).is_some_and(|tail| tail.eq_ignore_ascii_case(s))
        }
    };
    if essence.is_empty() {
        return true;
    }
    (kind.eq_ignore_ascii_case("text") && !subtype.eq_ignore_ascii_case("event-stream"))
        || is("application", "json")
        || is("application", "xml")
        || is("application", "x-www-form-urlencoded")
        || suffix("+json")
        || suffix("+xml")
}

#[cfg(test)]
mod tests {
    use super::Handling::*;
    use super::*;

    #[test]
    fn auto_buffers_documents_and_streams_the_rest() {
        let mib = AUTO_BUFFER_BYTES;
        let up_to = BufferUpTo(Inside { bytes: mib, ms: Some(AUTO_HANDOVER_MS) });
        let table: &[(Option<&str>, Option<u64>, Handling)] = &[
            (Some("application/json"), Some(120), Buffer),
            (Some("application/json; charset=utf-8"), None, up_to),
            (Some("Application/JSON"), Some(mib), Buffer),
            (Some("application/json"), Some(mib + 1), Stream),
            (Some("application/problem+json"), Some(80), Buffer),
            (Some("application/vnd.github+json"), None, up_to),
            (Some("text/plain"), Some(10), Buffer),
            (Some("text/html; charset=utf-8"), None, up_to),
            (Some("application/xml"), Some(10), Buffer),
            (Some("application/atom+xml"), Some(10), Buffer),
            (Some("application/x-www-form-urlencoded"), Some(10), Buffer),
            (None, Some(2), Buffer),
            (None, None, up_to),
            (Some(""), None, up_to),
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
        let auto = Inside { bytes: AUTO_BUFFER_BYTES, ms: Some(AUTO_HANDOVER_MS) };
        // (bytes read so far, ms since the headers, read on?)
        let table: &[(u64, u64, bool)] = &[
            (0, 0, true),
            (100, 0, true),
            (100, 249, true),
            (100, 250, false),
            (100, 12_000, false),
            (AUTO_BUFFER_BYTES, 10, true),
            (AUTO_BUFFER_BYTES + 1, 10, false),
            (AUTO_BUFFER_BYTES + 1, 0, false),
            (u64::MAX, u64::MAX, false),
        ];
        for &(total, ms, want) in table {
            assert_eq!(auto.read_on(total, ms), want, "{total} bytes at {ms} ms");
        }
        // `buffer` reads a body whole however slowly it arrives; only size stops it.
        let whole = Inside::whole(16 << 20);
        assert!(whole.read_on(16 << 20, u64::MAX));
        assert!(!whole.read_on((16 << 20) + 1, 0));
    }

    /// How a body read under `auto` ends, on virtual time: each chunk is
    /// (ms after the headers, bytes); `end` is when the body ends (`None`:
    /// it never does). The attempt times out at `attempt_ms` after the
    /// headers unless the body ended or was handed over first.
    fn read_under_auto(chunks: &[(u64, u64)], end: Option<u64>, attempt_ms: u64) -> Read {
        let inside = Inside { bytes: AUTO_BUFFER_BYTES, ms: Some(AUTO_HANDOVER_MS) };
        let mut total = 0;
        for (i, &(at, bytes)) in chunks.iter().enumerate() {
            if at >= attempt_ms {
                break;
            }
            total += bytes;
            if !inside.read_on(total, at) {
                return Read::HandedOver { at, chunks: i + 1 };
            }
        }
        match end {
            Some(at) if at < attempt_ms => Read::Buffered(total),
            _ => Read::TimedOut,
        }
    }

    #[derive(Debug, PartialEq, Eq)]
    enum Read {
        Buffered(u64),
        HandedOver { at: u64, chunks: usize },
        TimedOut,
    }

    #[test]
    fn streams_are_handed_over_and_stalled_documents_still_time_out() {
        let every = |gap: u64, n: u64, first: u64| (0..n).map(|i| (first + i * gap, 40)).collect::<Vec<_>>();
        // An LLM's answer, headers flushed first, a chunk every 500 ms for 12 s:
        // the first chunk is handed over as it arrives.
        let llm = every(500, 24, 500);
        assert_eq!(read_under_auto(&llm, Some(12_000), 10_000), Read::HandedOver { at: 500, chunks: 1 });
        // The same with the first chunk sent with the headers: handed over
        // at the next chunk, one gap later.
        let llm_with_headers = every(500, 24, 0);
        assert_eq!(
            read_under_auto(&llm_with_headers, Some(11_500), 10_000),
            Read::HandedOver { at: 500, chunks: 2 }
        );
        // Tokens every 30 ms: handed over at the first chunk past 250 ms.
        let tokens = every(30, 400, 0);
        assert_eq!(read_under_auto(&tokens, Some(12_000), 10_000), Read::HandedOver { at: 270, chunks: 10 });
        // A JSON that arrives in a few chunks right after its headers is buffered.
        let json = [(0, 16_384), (2, 16_384), (5, 8_000)];
        assert_eq!(read_under_auto(&json, Some(5), 10_000), Read::Buffered(40_768));
        // A JSON slower than 250 ms is handed over, whole, as a stream.
        let slow_json = [(0, 16_384), (170, 16_384), (340, 16_384)];
        assert_eq!(read_under_auto(&slow_json, Some(340), 10_000), Read::HandedOver { at: 340, chunks: 3 });
        // A JSON that stalls mid-body (half sent, then nothing) is never
        // handed over: the attempt times out and a retry can fix it.
        let stalled = [(0, 60), (3, 40)];
        assert_eq!(read_under_auto(&stalled, None, 10_000), Read::TimedOut);
        // A big chunked document is handed over at 1 MiB, however fast.
        let big = every(0, 40, 0).iter().map(|&(at, _)| (at, 32_768)).collect::<Vec<_>>();
        assert_eq!(read_under_auto(&big, Some(1), 10_000), Read::HandedOver { at: 0, chunks: 33 });
    }

    #[test]
    fn buffer_and_stream_modes_ignore_the_content_type() {
        for ct in [Some("text/event-stream"), Some("application/json"), None] {
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
            let _ = document(Some(ct));
        }
        assert!(!document(Some("é/ü+jsonx")));
        assert!(document(Some("x/é+json")));
    }
}
