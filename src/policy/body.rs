//! Whether a response's body is read inside the attempt or handed to the
//! caller as it streams (DESIGN rule 13).
//!
//! Why both: an API document is small and only useful whole, so reading it
//! inside the attempt lets `attemptMs` cover a body that stalls or breaks
//! (a retry can still fix it). A stream — server-sent events, ndjson, a
//! download, media — is consumed as it arrives: holding it back until the
//! end delays the first event to the last, multiplies memory, and turns a
//! long healthy stream into an attempt timeout. So `auto` (the default)
//! buffers documents up to a threshold and streams everything else.
//!
//! The `auto` rule, exactly:
//! - no body (HEAD, 204, 304, …): nothing to decide;
//! - a document — `Content-Type` `application/json`, `…+json`, `text/*`
//!   (not `text/event-stream`), `application/xml`, `…+xml`,
//!   `application/x-www-form-urlencoded`, or no `Content-Type` at all — is
//!   buffered when its `Content-Length` is at most [`AUTO_BUFFER_BYTES`]; a
//!   larger declared one is streamed; a chunked one is read up to that many
//!   bytes and, if it grows past them, handed over as what was read plus the
//!   rest (never read twice);
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

/// What the transport does with one response's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Read it whole inside the attempt (`maxBodyBytes` applies).
    Buffer,
    /// Read up to this many bytes inside the attempt; if the body is longer,
    /// hand over what was read plus the rest.
    BufferUpTo(u64),
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
            None => Handling::BufferUpTo(AUTO_BUFFER_BYTES),
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
        let table: &[(Option<&str>, Option<u64>, Handling)] = &[
            (Some("application/json"), Some(120), Buffer),
            (Some("application/json; charset=utf-8"), None, BufferUpTo(mib)),
            (Some("Application/JSON"), Some(mib), Buffer),
            (Some("application/json"), Some(mib + 1), Stream),
            (Some("application/problem+json"), Some(80), Buffer),
            (Some("application/vnd.github+json"), None, BufferUpTo(mib)),
            (Some("text/plain"), Some(10), Buffer),
            (Some("text/html; charset=utf-8"), None, BufferUpTo(mib)),
            (Some("application/xml"), Some(10), Buffer),
            (Some("application/atom+xml"), Some(10), Buffer),
            (Some("application/x-www-form-urlencoded"), Some(10), Buffer),
            (None, Some(2), Buffer),
            (None, None, BufferUpTo(mib)),
            (Some(""), None, BufferUpTo(mib)),
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
