//! Values out to JavaScript as JSON text, which the glue turns into plain
//! objects with the host's own `JSON.parse`: the fleet's and the outbox's
//! modules (the lease's stats, their reports). The default and browser
//! modules hand their values over as numbers (`host::shared::convert`).
//!
//! Why not serde-wasm-bindgen: it builds each object from wasm, one
//! imported call per property, and it needs `std`, whose panic and
//! allocation-failure paths bring `core::fmt` into every module (docs/development.md
//! "The stack" has the bytes). A value written as
//! text costs one string crossing, and the glue's `JSON.parse` is the
//! fastest object builder the host has. The types keep their serde derives
//! (the data model); this is only the writer.
//!
//! The shapes are serde-wasm-bindgen's with `serialize_missing_as_null`:
//! structs and maps as objects, sequences and tuples as arrays, a unit
//! variant as its name, `None` and `()` as `null`. Numbers: every number
//! our types write is an integer (milliseconds, counts, statuses); a
//! fraction is written to 9 decimals, enough for any time in milliseconds.
//! Nothing here formats through `core::fmt`.

use alloc::string::String;
use serde::ser::{self, Serialize};

/// `value` as JSON text. Our types have no non-string map keys, so this
/// never fails; if a type ever did, its error is the text `null`.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Writer(String::with_capacity(256));
    match value.serialize(&mut out) {
        Ok(()) => out.0,
        Err(Error) => String::from("null"),
    }
}

/// The only error: a map key that is not a string.
#[derive(Debug)]
pub struct Error;

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a JSON object key must be a string")
    }
}

impl ser::StdError for Error {}

impl ser::Error for Error {
    // The message is dropped: formatting it would bring `core::fmt` along.
    fn custom<T: core::fmt::Display>(_: T) -> Error {
        Error
    }
}

struct Writer(String);

/// Writes `n`'s decimal digits (64-bit arithmetic: 128-bit division would
/// bring a kilobyte of compiler-builtins code into every module).
pub fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Digit by digit: `str::from_utf8` would link its validator (0.3 KB
    // gzip of a page) to check what is always ASCII.
    for &digit in digits.get(at..).unwrap_or_default() {
        out.push(char::from(digit));
    }
}

fn push_i64(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_u64(out, n.unsigned_abs());
}

/// A finite number: integers as integers, a fraction to 9 decimals;
/// `NaN` and the infinities as `null` (as `JSON.stringify` writes them).
fn push_f64(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push_str("null");
        return;
    }
    if v < 0.0 {
        out.push('-');
    }
    let a = if v < 0.0 { -v } else { v };
    // Every number our types write is at most 2^64 (a `u64` as `f64`);
    // the saturating cast writes 2^64 as u64::MAX, which JavaScript reads
    // back as the same number (2^64).
    let whole = a as u64;
    push_u64(out, whole);
    let frac = a - whole as f64;
    if frac > 0.0 {
        let nanos = (frac * 1e9 + 0.5) as u32;
        if nanos > 0 {
            let mut digits = [b'0'; 9];
            let mut n = nanos.min(999_999_999);
            for d in digits.iter_mut().rev() {
                *d = b'0' + (n % 10) as u8;
                n /= 10;
            }
            let end = digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
            out.push('.');
            for &d in &digits[..end] {
                out.push(char::from(d));
            }
        }
    }
}

fn push_str(out: &mut String, s: &str) {
    out.push('"');
    // Runs of characters that need no escape are copied whole; only `"`,
    // backslash and control characters (all ASCII, so every index here is a
    // character boundary) are written one by one.
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(s.get(run..i).unwrap_or_default());
        run = i + 1;
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(s.get(run..).unwrap_or_default());
    out.push('"');
}

/// A sequence, map or struct being written: whether an element was.
pub struct Compound<'a> {
    w: &'a mut Writer,
    first: bool,
    /// The character that closes it: `]` or `}`, and a second `}` for a
    /// variant wrapped as `{"Variant": …}`.
    close: &'static str,
}

impl Compound<'_> {
    fn comma(&mut self) {
        if !self.first {
            self.w.0.push(',');
        }
        self.first = false;
    }

    fn key(&mut self, key: &str) {
        self.comma();
        push_str(&mut self.w.0, key);
        self.w.0.push(':');
    }
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.0.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        push_i64(&mut self.0, v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        push_u64(&mut self.0, v);
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        push_f64(&mut self.0, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        let mut buf = [0u8; 4];
        self.serialize_str(v.encode_utf8(&mut buf))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        push_str(&mut self.0, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let mut seq = ser::Serializer::serialize_seq(self, Some(v.len()))?;
        for b in v {
            ser::SerializeSeq::serialize_element(&mut seq, b)?;
        }
        ser::SerializeSeq::end(seq)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.0.push_str("null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.0.push('{');
        push_str(&mut self.0, variant);
        self.0.push(':');
        v.serialize(&mut *self)?;
        self.0.push('}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Error> {
        self.0.push('[');
        Ok(Compound { w: self, first: true, close: "]" })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Error> {
        self.0.push('{');
        push_str(&mut self.0, variant);
        self.0.push_str(":[");
        Ok(Compound { w: self, first: true, close: "]}" })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Error> {
        self.0.push('{');
        Ok(Compound { w: self, first: true, close: "}" })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Error> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Error> {
        self.0.push('{');
        push_str(&mut self.0, variant);
        self.0.push_str(":{");
        Ok(Compound { w: self, first: true, close: "}}" })
    }
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.comma();
        v.serialize(&mut *self.w)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        self.key(key);
        v.serialize(&mut *self.w)
    }

    fn close(self) -> Result<(), Error> {
        self.w.0.push_str(self.close);
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(Key(&mut *self.w))?;
        self.w.0.push(':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        v.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// A map key: only strings are written; anything else is the error.
struct Key<'a>(&'a mut Writer);

impl ser::Serializer for Key<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        push_str(&mut self.0 .0, v);
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_bool(self, _: bool) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_i8(self, _: i8) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_i16(self, _: i16) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_i32(self, _: i32) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_i64(self, _: i64) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_u8(self, _: u8) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_u16(self, _: u16) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_u32(self, _: u32) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_u64(self, _: u64) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_f32(self, _: f32) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_f64(self, _: f64) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_char(self, _: char) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(Error)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(Error)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(Error)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(Error)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(Error)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(Error)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(Error)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(Error)
    }
}
