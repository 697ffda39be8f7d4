//! The glue's packed values (js/src/core.js `packed`): several strings
//! from JS in one, so that reading a response's status, type and headers
//! is one crossing into JS, not one per value (`host::glue`).
//!
//! Each value is `-` when absent, else its length in UTF-16 units (what
//! JS's `length` counts), `:` and the value: no separator is needed, so a
//! value may hold any character (a fake `fetch` may answer anything).
//!
//! An attempt's [`Facts`] come packed so, or, for the usual response (a
//! success with none of the headers the machine reads, or only its length
//! and a JSON type), as one number: nothing to pack, copy into the
//! module's memory nor parse on the path every successful call takes
//! (README "Architecture"; BENCHMARKS.md "Today, at a glance").

use crate::policy::rate_limit::FloorHeaders;

/// The values of a packed string, in order; `None` for an absent value.
/// Ends at the first value that is not well formed.
pub struct Fields<'s>(pub &'s str);

impl<'s> Iterator for Fields<'s> {
    type Item = Option<&'s str>;

    fn next(&mut self) -> Option<Option<&'s str>> {
        // Byte by byte: the length's digits and the separators are ASCII
        // (`str`'s `strip_prefix`, `split_once` and `parse` cost several
        // times as much in the size-optimised module, on every attempt).
        let bytes = self.0.as_bytes();
        if bytes.first() == Some(&b'-') {
            self.0 = self.0.get(1..)?;
            return Some(None);
        }
        // The length, as `usize`'s `parse` reads it: an optional `+`, then
        // at least one digit.
        let mut at = usize::from(bytes.first() == Some(&b'+'));
        let digits = at;
        let mut units: usize = 0;
        loop {
            match *bytes.get(at)? {
                b @ b'0'..=b'9' => units = units.checked_mul(10)?.checked_add(usize::from(b - b'0'))?,
                b':' if at > digits => break,
                _ => return None,
            }
            at += 1;
        }
        // (After the `:`, a character's boundary.)
        let rest = self.0.get(at + 1..)?;
        let end = match rest.as_bytes().get(..units) {
            // ASCII (as header values and a response's type are): a byte per
            // unit, and the end on a character's boundary.
            Some(head) if head.is_ascii() => units,
            _ => utf8_len(rest, units)?,
        };
        // (`get`, not slicing: `end` is on a character boundary, and the
        // slicing's panic path would bring its message formatting along.)
        let value = rest.get(..end)?;
        self.0 = rest.get(end..)?;
        Some(Some(value))
    }
}

/// The length in bytes of the first `units` UTF-16 units of `s`; `None`
/// when `s` is shorter.
fn utf8_len(s: &str, mut units: usize) -> Option<usize> {
    let mut end: usize = 0;
    let mut chars = s.chars();
    while units > 0 {
        let c = chars.next()?;
        units = units.saturating_sub(c.len_utf16());
        end = end.saturating_add(c.len_utf8());
    }
    Some(end)
}

impl Fields<'_> {
    /// The next value, owned; `None` when absent (or past the end).
    pub fn string(&mut self) -> Option<alloc::string::String> {
        self.next().flatten().map(alloc::string::String::from)
    }
}

/// What one attempt reads of a response, in one crossing.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Facts {
    pub status: u16,
    /// `Response.type` is `cors`.
    pub cors: bool,
    /// `Response.type` is `opaque` or `opaqueredirect`: no readable body.
    pub opaque: bool,
    pub has_body: bool,
    /// `Content-Length`, when it is a number (surrounding spaces allowed).
    pub content_length: Option<u64>,
    pub content_type: Option<alloc::string::String>,
    pub content_encoding: bool,
    pub floor_headers: FloorHeaders,
    /// `Location`, read only with `redirect: "manual"` (src/host/operation/io.rs `MANUAL`).
    pub location: Option<alloc::string::String>,
    /// The body's length, when the step read it whole too (src/host/operation/io.rs `WHOLE`).
    pub read: Option<u32>,
}

impl Facts {
    /// The facts js/src/attempts.js answers as one number for the usual
    /// response (one of type `basic` or `default`, an integer status below
    /// 1024, none of the headers read but a `Content-Length` of 1 to 12
    /// digits and a `Content-Type` of exactly `application/json`;
    /// attempts.js `CODE_BODY`): the status, 1024 with a body, 2048 once
    /// the body was read whole as long as the length says, 4096 with that
    /// type, and the length plus one times 8192 when given: the same facts
    /// as the packed text would give (tests/facts_code.rs).
    pub fn coded(code: f64) -> Facts {
        // (`as` saturates: any number reads as some facts, never traps.)
        let code = code as u64;
        let content_length = (code >> 13).checked_sub(1);
        let read = if code & 2048 != 0 { content_length.and_then(|n| u32::try_from(n).ok()) } else { None };
        let content_type = (code & 4096 != 0).then(|| alloc::string::String::from("application/json"));
        Facts {
            status: (code & 1023) as u16,
            has_body: code & 1024 != 0,
            content_length,
            read,
            content_type,
            ..Facts::default()
        }
    }

    /// The facts js/src/attempts.js packs as an attempt's step resolves:
    /// status, type, has a body, then `content-length`, `content-type`,
    /// `content-encoding`, `retry-after`, `retry-after-ms`, and for a
    /// `redirect: "manual"` attempt `location`, and the length of the body
    /// when the step read it whole too (`location`'s place then kept).
    pub fn parse(packed: &str) -> Facts {
        let mut f = Fields(packed);
        // Only what is kept is copied: the status and type are read as
        // they stand, the length as the number it says.
        let status = f.next().flatten().and_then(|s| s.parse().ok()).unwrap_or(0);
        let kind = f.next().flatten();
        let (cors, opaque) = (kind == Some("cors"), matches!(kind, Some("opaque" | "opaqueredirect")));
        let has_body = f.next().flatten() == Some("1");
        let content_length = f.next().flatten().and_then(|v| v.trim().parse::<u64>().ok());
        let content_type = f.string();
        let content_encoding = f.string().is_some();
        let floor_headers =
            FloorHeaders { retry_after: f.string(), retry_after_ms: f.string(), ..FloorHeaders::default() };
        let location = f.string();
        let read = f.next().flatten().and_then(|v| v.parse().ok());
        Facts {
            status,
            cors,
            opaque,
            has_body,
            content_length,
            content_type,
            content_encoding,
            floor_headers,
            location,
            read,
        }
    }
}
