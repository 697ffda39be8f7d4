//! Numbers between JavaScript and the policy: a JS number read as an
//! integer in a range (`floor_in`, `integer_in`: options, packed fields,
//! saved state), and a `u64` written as a JS number (`ms`, `opt_ms`: the
//! report's and the stats' times and counters). A leaf: it imports nothing
//! of the crate, so the readers (`schema`, `options`), the report and the
//! budgets all take it without taking each other.

use serde::{Serialize, Serializer};

/// Milliseconds as a plain number. Serializers may refuse a `u64` above
/// 2^53 (serde-wasm-bindgen did), and a Retry-After floor can be any
/// size, up to `u64::MAX` for "never": as a number it loses precision
/// only where no clock could tell.
pub fn ms<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(*v as f64)
}

/// [`ms`] for an optional field (skipped when `None`).
pub fn opt_ms<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    v.map(|v| v as f64).serialize(s)
}

/// `value`'s whole part (its floor: it is not negative) in `min..=max`, if
/// it is a number there (written without `f64::floor`, which is not in
/// `core`).
pub fn floor_in(value: f64, min: u64, max: u64) -> Option<u64> {
    /// 2^64, exactly representable.
    const BEYOND_U64: f64 = 18_446_744_073_709_551_616.0;
    if !(0.0..BEYOND_U64).contains(&value) {
        return None;
    }
    // In [0, 2^64) the cast truncates without saturating: the floor.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // as said above
    let whole = value as u64;
    (min..=max).contains(&whole).then_some(whole)
}

/// `value` as an integer in `min..=max`, if it is one (NaN, infinities and
/// fractions are not). Written without `f64::fract`, which is not in `core`.
/// The range is compared in integers: `max as f64` rounds above 2^53, so a
/// float comparison would let values just outside the range through.
pub fn integer_in(value: f64, min: u64, max: u64) -> Option<u64> {
    /// 2^64, exactly representable.
    const BEYOND_U64: f64 = 18_446_744_073_709_551_616.0;
    if !(0.0..BEYOND_U64).contains(&value) {
        return None;
    }
    // Exact: `value` is in [0, 2^64), so the cast truncates without
    // saturating, and an integer below 2^64 converts back exactly.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // exact, as said above
    let whole = value as u64;
    (whole as f64 == value && (min..=max).contains(&whole)).then_some(whole)
}
