//! Header values and lists cut at ASCII delimiters, byte by byte.
//!
//! `str::split(',')`, `split_once('=')` and their kin search by `char`:
//! they bring the char searcher and `memchr` into every module (0.5 KB
//! gzip of a page's wasm, 1.2 KB of the default module's, measured by
//! `node scripts/size.mjs`). Every delimiter the parsers here cut
//! at is one ASCII byte, and in UTF-8 no byte of another character is
//! ASCII, so a byte search cuts exactly where the `char` search does (the
//! table below checks it against `str`'s own).

/// `s` cut at its first `at` (an ASCII byte): the parts before and after it.
pub fn split_once(s: &str, at: u8) -> Option<(&str, &str)> {
    let i = s.bytes().position(|b| b == at)?;
    let (before, rest) = s.split_at_checked(i)?;
    Some((before, rest.get(1..)?))
}

/// `s` up to its first `at` (an ASCII byte), or all of it without one.
pub fn before(s: &str, at: u8) -> &str {
    split_once(s, at).map_or(s, |(before, _)| before)
}

/// The parts of `s` between the bytes `is` says are delimiters (ASCII
/// ones), as `str::split` cuts them: one function for every list, not a
/// searcher per delimiter.
pub fn split(s: &str, is: fn(u8) -> bool) -> Parts<'_> {
    Parts { rest: Some(s), is }
}

/// The iterator [`split`] answers.
pub struct Parts<'a> {
    rest: Option<&'a str>,
    is: fn(u8) -> bool,
}

impl<'a> Iterator for Parts<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        let Some(i) = rest.bytes().position(self.is) else {
            self.rest = None;
            return Some(rest);
        };
        // A delimiter that is not ASCII (never passed here) would not be a
        // character boundary: the list would end there.
        let (part, after) = rest.split_at_checked(i)?;
        self.rest = after.get(1..);
        Some(part)
    }
}

#[cfg(test)]
mod tests {
    use super::{before, split, split_once};
    use alloc::vec::Vec;

    const VALUES: &[&str] = &[
        "",
        ",",
        ",,",
        "a",
        "a,b",
        "a,b,",
        ",a",
        "é,ü;x=ß",
        "\u{fffd}.5",
        "r=0;t=5, q=1",
        "\"quoted;value\";r=0",
        "1.",
        ".",
        "日本,語=x",
    ];

    #[test]
    fn a_byte_search_cuts_where_str_s_char_search_does() {
        for &value in VALUES {
            for at in [b',', b';', b'=', b'.', b' '] {
                let c = char::from(at);
                assert_eq!(split_once(value, at), value.split_once(c), "split_once({value:?}, {c:?})");
                assert_eq!(before(value, at), value.split(c).next().unwrap(), "before({value:?}, {c:?})");
                let is: fn(u8) -> bool = match at {
                    b',' => |b| b == b',',
                    b';' => |b| b == b';',
                    b'=' => |b| b == b'=',
                    b'.' => |b| b == b'.',
                    _ => |b| b == b' ',
                };
                let ours: Vec<&str> = split(value, is).collect();
                let theirs: Vec<&str> = value.split(c).collect();
                assert_eq!(ours, theirs, "split({value:?}, {c:?})");
            }
            let ours: Vec<&str> = split(value, |b| b == b';' || b == b',').collect();
            let theirs: Vec<&str> = value.split([';', ',']).collect();
            assert_eq!(ours, theirs, "split({value:?}, [';', ','])");
        }
    }
}
