//! The glue's packed values (js/src/core.js `packed`): several strings
//! from JS in one, so that reading a response's status, type and headers
//! is one crossing into JS, not one per value (`host::glue`).
//!
//! Each value is `-` when absent, else its length in UTF-16 units (what
//! JS's `length` counts), `:` and the value: no separator is needed, so a
//! value may hold any character (a fake `fetch` may answer anything).

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
