//! JavaScript-like values for the option reader (`policy::schema`), read as
//! js/src/options.js reads them: a getter that throws reads as absent, an
//! object's own keys come in order, a Proxy may throw when its keys are
//! listed, an array's element may throw when it is read.

use saferetry::policy::schema::Source;

#[derive(Clone, Debug, PartialEq)]
pub enum Plain {
    Undefined,
    Null,
    Num(f64),
    Bool(bool),
    Str(String),
    /// A function.
    Fun,
    Arr(Vec<Plain>),
    /// An array one of whose elements throws when read.
    BadArr(Vec<Plain>),
    /// An object: its own keys, in order.
    Obj(Vec<(String, Plain)>),
    /// A getter that throws (as an object's value).
    Throws,
    /// A Proxy whose key listing throws.
    Trap,
}

/// `{ key: value, … }`.
pub fn obj(fields: &[(&str, Plain)]) -> Plain {
    Plain::Obj(fields.iter().map(|(k, v)| (String::from(*k), v.clone())).collect())
}

pub fn num(n: f64) -> Plain {
    Plain::Num(n)
}

/// What a Proxy's key listing threw.
#[derive(Debug, PartialEq)]
pub struct Trapped;

pub struct PlainSource;

impl Source for PlainSource {
    type Value = Plain;
    type Thrown = Trapped;
    /// The values read, then an unknown key (as a string).
    type Read = Vec<Plain>;

    fn is_undefined(&self, v: &Plain) -> bool {
        *v == Plain::Undefined
    }

    fn is_null(&self, v: &Plain) -> bool {
        *v == Plain::Null
    }

    fn number(&self, v: &Plain) -> Option<f64> {
        match v {
            Plain::Num(n) => Some(*n),
            _ => None,
        }
    }

    fn boolean(&self, v: &Plain) -> Option<bool> {
        match v {
            Plain::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn text(&self, v: &Plain) -> Option<String> {
        match v {
            Plain::Str(s) => Some(s.clone()),
            _ => None,
        }
    }

    fn is_function(&self, v: &Plain) -> bool {
        *v == Plain::Fun
    }

    fn is_object(&self, v: &Plain) -> bool {
        matches!(v, Plain::Obj(_) | Plain::Arr(_) | Plain::BadArr(_) | Plain::Trap)
    }

    fn fields(
        &self,
        object: &Plain,
        names: &'static str,
        count: usize,
        open: bool,
    ) -> Result<Vec<Plain>, Trapped> {
        let own = match object {
            Plain::Obj(own) => own.as_slice(),
            Plain::Trap => return Err(Trapped),
            _ => &[],
        };
        let keys: Vec<&str> = names.split(',').filter(|k| !k.is_empty()).collect();
        let read = |key: &str| match own.iter().find(|(k, _)| k == key) {
            Some((_, Plain::Throws)) | None => Plain::Undefined,
            Some((_, v)) => v.clone(),
        };
        let mut values: Vec<Plain> = keys.iter().take(count).map(|k| read(k)).collect();
        let unknown = own.iter().map(|(k, _)| k).find(|k| !open && !keys.contains(&k.as_str()));
        values.extend(unknown.map(|k| Plain::Str(k.clone())));
        Ok(values)
    }

    fn at(&self, read: &Vec<Plain>, i: usize) -> Plain {
        read.get(i).cloned().unwrap_or(Plain::Undefined)
    }

    fn key(&self, read: &Vec<Plain>, i: usize) -> Option<String> {
        self.text(read.get(i)?)
    }

    fn length(&self, v: &Plain) -> Option<f64> {
        match v {
            Plain::Arr(items) | Plain::BadArr(items) => Some(items.len() as f64),
            _ => None,
        }
    }

    fn items(&self, v: &Plain) -> Option<Vec<Plain>> {
        match v {
            Plain::Arr(items) => Some(items.clone()),
            _ => None,
        }
    }
}
