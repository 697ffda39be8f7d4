//! Every options object as data, and the one reader that checks a caller's
//! object against it.
//!
//! A [`Schema`] lists an object's keys and, for each, its [`Kind`] (an
//! integer in a range, a boolean, a word out of a list, a function, a
//! nested object, a list…) and its default. [`read`] reads an object
//! through a [`Source`] — the host's is JavaScript (src/host/api/read.rs: one
//! crossing per object, the glue reading the keys named here) — and
//! answers each field's [`Value`], or the first [`Refusal`]: an unknown key,
//! a value of the wrong type, or one out of its range, with the field's
//! path and its kind. The sentence a caller reads is made from that in
//! JavaScript, from one table (js/src/options.js), so no message is
//! compiled into a wasm module: [`describe`] writes a kind for it as text
//! (codes, bounds, words).
//!
//! Which keys exist, their types, ranges and defaults are here and in the
//! schemas declared with [`schema!`] beside the options they fill
//! (`policy::options`, `policy::poll`, `policy::outbox`, and below: the
//! options of `redisBudget` and of the JavaScript entries that keep no
//! Rust state, which the default module's `checkOptions` checks for them,
//! src/host/api/read.rs).

use alloc::string::String;
use alloc::vec::Vec;

use super::limits::MAX_TIMER_MS;
use super::number::{floor_in, integer_in};

/// How an integer is named in the sentence (js/src/options.js).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    Ms,
    Bytes,
    /// An epoch time in ms; a fraction is taken down to its whole ms.
    Epoch,
}

/// What a field accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer in `min..=max` (a number of its unit).
    Int(Unit, u32, u64),
    /// A number, fractions allowed, in `min..=max` (NaN is out of range).
    Num(u32, u32),
    Bool,
    /// A string; `true`: not empty.
    Text(bool),
    /// A string of `min..=max` visible ASCII characters (0x21..=0x7e): a
    /// header value sent as it is (an idempotency key).
    Token(u32, u32),
    /// One of these words (`"a,b,"`).
    Word(&'static str),
    Function,
    /// An object read by its schema.
    Object(&'static Schema),
    /// An array of `min..=max` items of a kind.
    List(u32, u32, &'static Kind),
    /// A value of the first kind's type, else one of the second's.
    Or(&'static Kind, &'static Kind),
    /// Only `false`: a call may opt out of the policy's quota, not bring
    /// its own.
    False,
    /// Refused wherever it is set: an option of the policy (its calls
    /// share it), not of a call.
    PolicyOnly,
    /// Refused wherever it is set: an option of a call, not of the policy.
    CallOnly,
    /// Anything, handed on as it is (a `HeadersInit`, a body).
    Any,
    /// Anything but `null`.
    Defined,
    /// The first kind on a policy, the second per call.
    Scoped(&'static Kind, &'static Kind),
}

/// A field's value when the caller left it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Def {
    /// Absent: the field's owner has a default of its own (a policy's:
    /// `Options::default()`).
    None,
    /// Left out is refused (a `TypeError`).
    Required,
    Int(u64),
    Bool(bool),
    Word(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub kind: Kind,
    pub default: Def,
}

/// An options object: its keys (`"a,b,"`, in the order of `fields`) and
/// whether keys it does not list are allowed (`open`: an interface such as
/// `shared`, whose object may have members of its own).
#[derive(Debug, PartialEq, Eq)]
pub struct Schema {
    pub names: &'static str,
    pub fields: &'static [Field],
    pub open: bool,
}

impl Schema {
    /// The keys, in order.
    pub fn keys(&self) -> Keys {
        Keys(self.names)
    }
}

/// The words of a list written `"a,b,"` (a schema's keys, a word's choices).
#[derive(Clone)]
pub struct Keys(pub &'static str);

impl Iterator for Keys {
    type Item = &'static str;

    fn next(&mut self) -> Option<&'static str> {
        let (key, rest) = super::text::split_once(self.0, b',')?;
        self.0 = rest;
        Some(key)
    }
}

/// `schema! { [pub] NAME [as Fields], open: bool; "key": kind, default; … }`:
/// a static [`Schema`] and, with `as Fields`, an enum of its fields in the
/// same order, whose `as usize` indexes what [`read`] answers.
macro_rules! schema {
    ($(#[$doc:meta])* $vis:vis $schema:ident as $enum:ident, open: $open:expr; $($(#[$fdoc:meta])* $variant:ident $key:literal: $kind:expr, $def:expr;)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $enum { $($(#[$fdoc])* $variant),* }
        impl From<$enum> for usize {
            fn from(f: $enum) -> usize {
                f as usize
            }
        }
        schema! { $vis $schema, open: $open; $($key: $kind, $def;)* }
    };
    ($(#[$doc:meta])* $vis:vis $schema:ident, open: $open:expr; $($key:literal: $kind:expr, $def:expr;)*) => {
        $(#[$doc])*
        $vis static $schema: $crate::policy::schema::Schema = $crate::policy::schema::Schema {
            names: concat!($($key, ","),*),
            fields: &[$($crate::policy::schema::Field { kind: $kind, default: $def }),*],
            open: $open,
        };
    };
}

pub(crate) use schema;

/// What a field was read as (or its default).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<V> {
    Absent,
    Int(u64),
    Num(f64),
    Bool(bool),
    /// One of a [`Kind::Word`]'s words.
    Word(&'static str),
    Text(String),
    /// A function, or what [`Kind::Any`] took, as the caller gave it.
    Raw(V),
    /// An object as given, and its fields as read.
    Object(V, Vec<Value<V>>),
    List(Vec<Value<V>>),
}

impl<V> Value<V> {
    pub fn int(&self) -> Option<u64> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    pub fn num(&self) -> Option<f64> {
        match self {
            Value::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub fn flag(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn word(&self) -> Option<&'static str> {
        match self {
            Value::Word(w) => Some(w),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn raw(&self) -> Option<&V> {
        match self {
            Value::Raw(v) | Value::Object(v, _) => Some(v),
            _ => None,
        }
    }

    pub fn fields(&self) -> Option<&[Value<V>]> {
        match self {
            Value::Object(_, fields) => Some(fields),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Value<V>]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }
}

/// Field `i` of what [`read`] answered (`None` past the end: never, for
/// the schema it read).
pub fn at<V, I: Into<usize>>(values: &[Value<V>], i: I) -> Option<&Value<V>> {
    values.get(i.into())
}

/// Why a value was refused: a key the object does not have (`TypeError`),
/// a value of the wrong type (`TypeError`) or out of its range
/// (`RangeError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Unknown,
    Type,
    Range,
}

/// A refused value: its path (`retryOn.statuses`; for an unknown key, the
/// object's, `""` for a policy's options), what the field accepts, and the
/// unknown key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub class: Class,
    pub path: String,
    pub kind: Kind,
    pub key: String,
}

/// What reading failed with: a refusal, or what the caller's object threw
/// when its keys were listed (a Proxy).
#[derive(Debug)]
pub enum Failure<T> {
    Refused(Refusal),
    Thrown(T),
}

impl<T> From<Refusal> for Failure<T> {
    fn from(r: Refusal) -> Failure<T> {
        Failure::Refused(r)
    }
}

/// What the reader needs of the caller's values.
pub trait Source {
    type Value: Clone;
    type Thrown;
    /// An object's fields as [`Source::fields`] read them, or a list's
    /// items as [`Source::items`] read them: taken one by one with [`Source::at`].
    type Read;
    fn is_undefined(&self, v: &Self::Value) -> bool;
    fn is_null(&self, v: &Self::Value) -> bool;
    fn number(&self, v: &Self::Value) -> Option<f64>;
    fn boolean(&self, v: &Self::Value) -> Option<bool>;
    fn text(&self, v: &Self::Value) -> Option<String>;
    fn is_function(&self, v: &Self::Value) -> bool;
    fn is_object(&self, v: &Self::Value) -> bool;
    /// The values of the first `count` keys of `names` (`"a,b,"`) on
    /// `object` (at 0..count), inherited ones too (a getter that throws
    /// reads as absent; `undefined` and `null` have none), and, unless
    /// `open`, an own key of the object that `names` does not list (at
    /// `count`). Fails with what listing its keys threw.
    fn fields(&self, object: &Self::Value, names: &'static str, count: usize, open: bool) -> Result<Self::Read, Self::Thrown>;
    /// Value `i` of what was read (`undefined` past its end).
    fn at(&self, read: &Self::Read, i: usize) -> Self::Value;
    /// A string at `i` of what was read (the unknown key), if one is there.
    fn key(&self, read: &Self::Read, i: usize) -> Option<String>;
    /// An array's length; `None` for anything else.
    fn length(&self, v: &Self::Value) -> Option<f64>;
    /// An array's elements, each read once; `None` when reading one threw.
    fn items(&self, v: &Self::Value) -> Option<Self::Read>;
}

/// `parent.name` (`name` at the root).
pub fn join(parent: &str, name: &str) -> String {
    let mut path = String::from(parent);
    if !parent.is_empty() {
        path.push('.');
    }
    path.push_str(name);
    path
}

/// Where a value is: made into its path only when it is refused.
#[derive(Clone, Copy)]
struct At<'a> {
    parent: &'a str,
    name: &'a str,
    /// An item of the list `parent.name` (`parent.name[]`).
    item: bool,
}

impl At<'_> {
    fn path(&self) -> String {
        let mut path = join(self.parent, self.name);
        if self.item {
            path.push_str("[]");
        }
        path
    }
}

/// Reads `object` by `schema`: each field's value, or its default. `path`
/// names the object (`""`: a policy's options); `per_call` picks the call's
/// side of a [`Kind::Scoped`]. `undefined` and `null` read as an object
/// without keys.
pub fn read<S: Source>(
    source: &S,
    schema: &'static Schema,
    object: &S::Value,
    path: &str,
    per_call: bool,
) -> Result<Vec<Value<S::Value>>, Failure<S::Thrown>> {
    let reader = Reader { source, per_call };
    reader.object(schema, object, At { parent: "", name: path, item: false })
}

/// The refusal of the value at `at`: its path made only now.
#[cold]
#[inline(never)]
fn refuse<T>(class: Class, at: At, kind: Kind) -> Failure<T> {
    Refusal { class, path: at.path(), kind, key: String::new() }.into()
}

struct Reader<'s, S> {
    source: &'s S,
    per_call: bool,
}

type Read<S> = Result<Value<<S as Source>::Value>, Failure<<S as Source>::Thrown>>;

impl<S: Source> Reader<'_, S> {
    /// An object of `schema` at `at`, as given and with its fields read
    /// (`undefined` and `null` as one without keys).
    fn object(&self, schema: &'static Schema, object: &S::Value, at: At) -> Result<Vec<Value<S::Value>>, Failure<S::Thrown>> {
        let none = self.source.is_undefined(object) || self.source.is_null(object);
        if !(none || self.source.is_object(object)) {
            return Err(refuse(Class::Type, at, Kind::Object(schema)));
        }
        let path = at.path();
        let count = schema.fields.len();
        let src = self.source;
        let read = src.fields(object, schema.names, count, schema.open).map_err(Failure::Thrown)?;
        if let Some(key) = src.key(&read, count) {
            return Err(Refusal { class: Class::Unknown, path, kind: Kind::Any, key }.into());
        }
        let mut out = Vec::with_capacity(count);
        for (i, (name, f)) in schema.keys().zip(schema.fields).enumerate() {
            out.push(self.field(*f, Some(src.at(&read, i)), At { parent: &path, name, item: false })?);
        }
        Ok(out)
    }

    /// One field: its value (absent when `undefined`), else its default.
    fn field(&self, f: Field, value: Option<S::Value>, at: At) -> Read<S> {
        match value.filter(|v| !self.source.is_undefined(v)) {
            Some(v) => self.value(f.kind, v, at),
            None => match f.default {
                Def::None => Ok(Value::Absent),
                Def::Required => Err(refuse(Class::Type, at, self.scoped(f.kind))),
                Def::Int(n) => Ok(Value::Int(n)),
                Def::Bool(b) => Ok(Value::Bool(b)),
                Def::Word(w) => Ok(Value::Word(w)),
            },
        }
    }

    /// A [`Kind::Scoped`]'s side that applies, or the kind itself.
    fn scoped(&self, kind: Kind) -> Kind {
        match kind {
            Kind::Scoped(policy, call) => self.scoped(if self.per_call { *call } else { *policy }),
            other => other,
        }
    }

    fn value(&self, kind: Kind, v: S::Value, at: At) -> Read<S> {
        let src = self.source;
        let checked = match kind {
            Kind::Int(unit, min, max) => match src.number(&v) {
                Some(n) => {
                    let check = if unit == Unit::Epoch { floor_in } else { integer_in };
                    check(n, u64::from(min), max).map(Value::Int).ok_or(Class::Range)
                }
                None => Err(Class::Type),
            },
            Kind::Num(min, max) => match src.number(&v) {
                Some(n) if (f64::from(min)..=f64::from(max)).contains(&n) => Ok(Value::Num(n)),
                Some(_) => Err(Class::Range),
                None => Err(Class::Type),
            },
            Kind::Bool | Kind::False => match src.boolean(&v) {
                Some(b) if matches!(kind, Kind::Bool) || !b => Ok(Value::Bool(b)),
                _ => Err(Class::Type),
            },
            Kind::Text(_) | Kind::Token(..) => match src.text(&v) {
                Some(s) => {
                    let fits = match kind {
                        // Visible ASCII: its length in bytes is its length in characters.
                        Kind::Token(min, max) => {
                            let len = u32::try_from(s.len()).unwrap_or(u32::MAX);
                            (min..=max).contains(&len) && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
                        }
                        _ => !(matches!(kind, Kind::Text(true)) && s.is_empty()),
                    };
                    if fits { Ok(Value::Text(s)) } else { Err(Class::Range) }
                }
                None => Err(Class::Type),
            },
            Kind::Word(words) => {
                let s = src.text(&v).unwrap_or_default();
                Keys(words).find(|w| *w == s).map(Value::Word).ok_or(Class::Type)
            }
            Kind::Function if src.is_function(&v) => Ok(Value::Raw(v)),
            Kind::Object(schema) if src.is_object(&v) => {
                return self.object(schema, &v, at).map(|fields| Value::Object(v, fields))
            }
            Kind::List(min, max, item) => return self.list(min, max, *item, v, at, kind),
            Kind::Or(a, b) => return self.either(*a, *b, v, at, kind),
            Kind::Any => Ok(Value::Raw(v)),
            Kind::Defined if !src.is_null(&v) => Ok(Value::Raw(v)),
            Kind::Scoped(..) => return self.value(self.scoped(kind), v, at),
            Kind::Function | Kind::Object(_) | Kind::PolicyOnly | Kind::CallOnly | Kind::Defined => Err(Class::Type),
        };
        checked.map_err(|class| refuse(class, at, kind))
    }

    fn list(&self, min: u32, max: u32, item: Kind, v: S::Value, at: At, kind: Kind) -> Read<S> {
        // An array's length is a whole number below 2^32.
        let Some(len) = self.source.length(&v).and_then(|n| floor_in(n, 0, u64::from(u32::MAX))) else {
            return Err(refuse(Class::Type, at, kind));
        };
        if !(u64::from(min)..=u64::from(max)).contains(&len) {
            return Err(refuse(Class::Range, at, kind));
        }
        let Some(items) = self.source.items(&v) else {
            return Err(refuse(Class::Type, at, kind));
        };
        let at = At { item: true, ..at };
        let mut out = Vec::new();
        for i in 0..usize::try_from(len).unwrap_or(0) {
            out.push(self.value(item, self.source.at(&items, i), at)?);
        }
        Ok(Value::List(out))
    }

    /// `a` when the value has its type, else `b`; a value of neither type
    /// is refused as the `Or` (a field inside an object refused stays so).
    fn either(&self, a: Kind, b: Kind, v: S::Value, at: At, kind: Kind) -> Read<S> {
        let mismatch = |e: &Failure<S::Thrown>| matches!(e, Failure::Refused(r) if r.class == Class::Type && r.path == at.path());
        match self.value(a, v.clone(), at) {
            Err(e) if mismatch(&e) => match self.value(b, v, at) {
                Err(e) if mismatch(&e) => Err(refuse(Class::Type, at, kind)),
                other => other,
            },
            other => other,
        }
    }
}

/// The codes of [`describe`], in js/src/options.js's table's order.
pub mod code {
    pub const INT: u8 = 0;
    pub const BOOL: u8 = 1;
    pub const TEXT: u8 = 2;
    pub const TOKEN: u8 = 3;
    pub const WORD: u8 = 4;
    pub const FUNCTION: u8 = 5;
    pub const OBJECT: u8 = 6;
    pub const LIST: u8 = 7;
    pub const OR: u8 = 8;
    pub const FALSE: u8 = 9;
    pub const POLICY_ONLY: u8 = 10;
    pub const CALL_ONLY: u8 = 11;
    pub const DEFINED: u8 = 12;
    pub const NUM: u8 = 13;
}

/// `kind` as js/src/options.js reads it to say what a field accepts: one
/// node per kind, `code a b words;` — its code, its two bounds (or 0) and
/// its words: a `Word`'s or an `Object`'s (`"a,b,"`), an integer's unit —
/// in prefix order (a list's item and both sides of an `Or` follow it).
/// Numbers are written without `core::fmt`.
pub fn describe(kind: &Kind, out: &mut String) {
    let mut node = |code: u8, a: u64, b: u64, words: &str| {
        for n in [u64::from(code), a, b] {
            crate::json::push_u64(out, n);
            out.push(' ');
        }
        out.push_str(words);
        out.push(';');
    };
    match *kind {
        Kind::Int(unit, min, max) => {
            let unit = match unit {
                Unit::Count => "",
                Unit::Ms => "milliseconds,",
                Unit::Bytes => "bytes,",
                Unit::Epoch => "epoch milliseconds,",
            };
            node(code::INT, min.into(), max, unit);
        }
        Kind::Num(min, max) => node(code::NUM, min.into(), max.into(), ""),
        Kind::Bool => node(code::BOOL, 0, 0, ""),
        Kind::Text(non_empty) => node(code::TEXT, non_empty.into(), 0, ""),
        Kind::Token(min, max) => node(code::TOKEN, min.into(), max.into(), ""),
        Kind::Word(list) => node(code::WORD, 0, 0, list),
        Kind::Function => node(code::FUNCTION, 0, 0, ""),
        Kind::Object(schema) => node(code::OBJECT, 0, 0, schema.names),
        Kind::List(min, max, item) => {
            node(code::LIST, min.into(), max.into(), "");
            describe(item, out);
        }
        Kind::Or(a, b) => {
            node(code::OR, 0, 0, "");
            describe(a, out);
            describe(b, out);
        }
        Kind::False => node(code::FALSE, 0, 0, ""),
        Kind::PolicyOnly => node(code::POLICY_ONLY, 0, 0, ""),
        Kind::CallOnly => node(code::CALL_ONLY, 0, 0, ""),
        // `Any` takes every value: never described for a refusal.
        Kind::Any | Kind::Defined => node(code::DEFINED, 0, 0, ""),
        Kind::Scoped(_, inner) => describe(inner, out),
    }
}

/// A count of processes or clients sharing one budget.
pub const FLEET_SIZE: Kind = Kind::Int(Unit::Count, 1, 10_000);

schema! {
    /// `tabBudget(name, options)` (js/src/tabs.js).
    pub TAB_BUDGET, open: false;
    "heartbeatMs": Kind::Int(Unit::Ms, 1, 600_000), Def::Int(1000);
    "staleMs": Kind::Int(Unit::Ms, 1, 600_000), Def::Int(2500);
    "fleetSize": FLEET_SIZE, Def::None;
}

schema! {
    /// `durableBudget(namespace, name, options)` (js/src/cloudflare.js).
    pub DURABLE_BUDGET, open: false;
    "fleetSize": FLEET_SIZE, Def::None;
}

schema! {
    /// `operation.retryNow(options)` (js/src/core.js).
    pub RETRY_NOW, open: false;
    "force": Kind::Bool, Def::Bool(false);
}

schema! {
    /// An OpenTelemetry `TracerProvider`: what `instrument` calls of it.
    pub TRACER_PROVIDER, open: true;
    "getTracer": Kind::Function, Def::Required;
}

schema! {
    /// An OpenTelemetry `MeterProvider`: what `instrument` calls of it.
    pub METER_PROVIDER, open: true;
    "getMeter": Kind::Function, Def::Required;
}

schema! {
    /// `instrument(policy, options)` (saferetry/otel, js/src/otel.js).
    pub INSTRUMENT, open: false;
    "tracerProvider": Kind::Object(&TRACER_PROVIDER), Def::None;
    "meterProvider": Kind::Object(&METER_PROVIDER), Def::None;
    "attemptSpans": Kind::Or(&Kind::Bool, &Kind::Word("auto,")), Def::Word("auto");
    "name": Kind::Text(false), Def::None;
}

/// The longest a Redis command may take (`redisBudget`'s `commandMs`).
pub const MAX_COMMAND_MS: u64 = 60_000;

schema! {
    /// `redisBudget(client, name, options)` (saferetry/redis): the Redis
    /// module's `RedisExchange` takes them checked (src/host/lease/redis.rs);
    /// `key`'s default is the name's, `"saferetry:budget:<name>"`.
    pub REDIS_BUDGET, open: false;
    "fleetSize": FLEET_SIZE, Def::None;
    "key": Kind::Text(true), Def::None;
    // Each Redis command's time limit.
    "commandMs": Kind::Int(Unit::Ms, 1, MAX_COMMAND_MS), Def::Int(250);
}

/// The longest timer a host runs, as a kind (`totalMs`, `budgetMs`, …).
pub const TIMER_MS: Kind = Kind::Int(Unit::Ms, 1, MAX_TIMER_MS);
