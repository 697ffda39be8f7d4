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
        if let Some(rest) = self.0.strip_prefix('-') {
            self.0 = rest;
            return Some(None);
        }
        let (len, rest) = self.0.split_once(':')?;
        let units: usize = len.parse().ok()?;
        let end = match rest.get(..units) {
            // ASCII (as header values and a response's type are): a byte per unit.
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
