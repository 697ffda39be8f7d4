//! A minimal JSON writer. Reports and states cross into JavaScript as one
//! string each, parsed there on demand: one boundary crossing instead of a
//! property set (and a key string) per field.

use alloc::string::String;

pub struct Json(String);

impl Json {
    pub fn object() -> Json {
        Json(String::from("{"))
    }

    fn key(&mut self, key: &str) -> &mut Json {
        if !self.0.ends_with(['{', '[']) {
            self.0.push(',');
        }
        self.0.push('"');
        self.0.push_str(key);
        self.0.push_str("\":");
        self
    }

    pub fn str(&mut self, key: &str, value: &str) -> &mut Json {
        self.key(key).0.push('"');
        for c in value.chars() {
            match c {
                '"' => self.0.push_str("\\\""),
                '\\' => self.0.push_str("\\\\"),
                c if (c as u32) < 0x20 => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    let n = c as usize;
                    self.0.push_str("\\u00");
                    self.0.push(HEX[n >> 4] as char);
                    self.0.push(HEX[n & 15] as char);
                }
                c => self.0.push(c),
            }
        }
        self.0.push('"');
        self
    }

    pub fn num(&mut self, key: &str, value: u64) -> &mut Json {
        self.key(key);
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut v = value;
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        for &d in &digits[i..] {
            self.0.push(d as char);
        }
        self
    }

    pub fn opt_num(&mut self, key: &str, value: Option<u64>) -> &mut Json {
        match value {
            Some(v) => self.num(key, v),
            None => self,
        }
    }

    /// `null` when absent.
    pub fn num_or_null(&mut self, key: &str, value: Option<u64>) -> &mut Json {
        match value {
            Some(v) => self.num(key, v),
            None => {
                self.key(key).0.push_str("null");
                self
            }
        }
    }

    pub fn raw(&mut self, key: &str, json: &str) -> &mut Json {
        self.key(key).0.push_str(json);
        self
    }

    pub fn flag(&mut self, key: &str) -> &mut Json {
        self.raw(key, "true")
    }

    /// A JSON array of already-written values.
    pub fn array<I: IntoIterator<Item = String>>(items: I) -> String {
        let mut out = String::from("[");
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&item);
        }
        out.push(']');
        out
    }

    pub fn end(&mut self) -> String {
        self.0.push('}');
        core::mem::take(&mut self.0)
    }
}
