//! The options, their defaults and their accepted ranges, as data.
//!
//! The host reads each JS value and hands it to [`Options::set`] (or the
//! typed setters); every check lives here, so one table says what is
//! accepted and the error names the field and that range.

use super::body::ResponseBody;
use super::budget::quota::QuotaConfig;
use super::budget::rate::RateConfig;
use super::classify::RetryOn;
use super::limits::{Backoff, Limits, MAX_TIMER_MS};

/// A rejected option: which field, what it accepts, and whether the value
/// had the wrong type (`TypeError`) or was out of range (`RangeError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionError {
    pub field: &'static str,
    pub expected: &'static str,
    pub kind: ErrorKind,
}

impl OptionError {
    /// A value of the wrong type (`TypeError`).
    pub const fn type_error(field: &'static str, expected: &'static str) -> OptionError {
        OptionError { field, expected, kind: ErrorKind::Type }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Type,
    Range,
}

/// The numeric options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numeric {
    MaxAttempts,
    TotalMs,
    AttemptMs,
    BaseMs,
    CapMs,
    ThrottleBaseMs,
    MaxBodyBytes,
    QuotaCapacity,
    QuotaRetryCost,
    QuotaTimeoutCost,
    QuotaSuccessRefund,
    Concurrency,
    RateRequests,
    RatePerMs,
    RateBurst,
    FleetSize,
}

const MS: &str = "an integer number of milliseconds in 0..=2147483647";
const POSITIVE_MS: &str = "an integer number of milliseconds in 1..=2147483647";
const COUNT: &str = "an integer in 0..=1000000";

impl Numeric {
    pub const RATE: [Numeric; 3] = [Numeric::RateRequests, Numeric::RatePerMs, Numeric::RateBurst];
    pub const TOP_LEVEL: [Numeric; 7] = [
        Numeric::MaxAttempts,
        Numeric::TotalMs,
        Numeric::AttemptMs,
        Numeric::BaseMs,
        Numeric::CapMs,
        Numeric::ThrottleBaseMs,
        Numeric::MaxBodyBytes,
    ];
    pub const QUOTA: [Numeric; 4] = [
        Numeric::QuotaCapacity,
        Numeric::QuotaRetryCost,
        Numeric::QuotaTimeoutCost,
        Numeric::QuotaSuccessRefund,
    ];

    /// (full name, key inside its object, min, max, what is accepted)
    fn spec(self) -> (&'static str, &'static str, u64, u64, &'static str) {
        match self {
            Numeric::MaxAttempts => ("maxAttempts", "maxAttempts", 1, 100, "an integer in 1..=100"),
            Numeric::TotalMs => ("totalMs", "totalMs", 1, MAX_TIMER_MS, POSITIVE_MS),
            Numeric::AttemptMs => ("attemptMs", "attemptMs", 1, MAX_TIMER_MS, POSITIVE_MS),
            Numeric::BaseMs => ("baseMs", "baseMs", 0, MAX_TIMER_MS, MS),
            Numeric::CapMs => ("capMs", "capMs", 0, MAX_TIMER_MS, MS),
            Numeric::ThrottleBaseMs => ("throttleBaseMs", "throttleBaseMs", 0, MAX_TIMER_MS, MS),
            Numeric::MaxBodyBytes => {
                ("maxBodyBytes", "maxBodyBytes", 0, 1 << 32, "an integer number of bytes in 0..=4294967296")
            }
            Numeric::QuotaCapacity => ("quota.capacity", "capacity", 0, 1_000_000, COUNT),
            Numeric::QuotaRetryCost => ("quota.retryCost", "retryCost", 0, 1_000_000, COUNT),
            Numeric::QuotaTimeoutCost => ("quota.timeoutCost", "timeoutCost", 0, 1_000_000, COUNT),
            Numeric::QuotaSuccessRefund => ("quota.successRefund", "successRefund", 0, 1_000_000, COUNT),
            Numeric::Concurrency => ("concurrency", "concurrency", 1, 10_000, "an integer in 1..=10000"),
            Numeric::RateRequests => ("rate.requests", "requests", 1, 1_000_000, "an integer in 1..=1000000"),
            Numeric::RatePerMs => ("rate.perMs", "perMs", 1, MAX_TIMER_MS, POSITIVE_MS),
            Numeric::RateBurst => ("rate.burst", "burst", 1, 1_000_000, "an integer in 1..=1000000"),
            Numeric::FleetSize => ("shared.fleetSize", "fleetSize", 1, 10_000, "an integer in 1..=10000"),
        }
    }

    /// The name a JS object holds this option under.
    pub fn key(self) -> &'static str {
        self.spec().1
    }

    pub fn type_error(self) -> OptionError {
        let (field, _, _, _, expected) = self.spec();
        OptionError { field, expected, kind: ErrorKind::Type }
    }

    /// Checks a JS number: an integer inside the field's range.
    pub fn check(self, value: f64) -> Result<u64, OptionError> {
        let (field, _, min, max, expected) = self.spec();
        integer_in(value, min, max).ok_or(OptionError { field, expected, kind: ErrorKind::Range })
    }
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

/// The boolean options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    RetryAfterSpread,
    RetryOnTimeouts,
    RetryOnNetworkErrors,
}

impl Flag {
    pub fn key(self) -> &'static str {
        match self {
            Flag::RetryAfterSpread => "retryAfterSpread",
            Flag::RetryOnTimeouts => "timeouts",
            Flag::RetryOnNetworkErrors => "networkErrors",
        }
    }

    pub fn type_error(self) -> OptionError {
        let field = match self {
            Flag::RetryAfterSpread => "retryAfterSpread",
            Flag::RetryOnTimeouts => "retryOn.timeouts",
            Flag::RetryOnNetworkErrors => "retryOn.networkErrors",
        };
        OptionError { field, expected: "a boolean", kind: ErrorKind::Type }
    }
}

pub const STATUSES: OptionError = OptionError {
    field: "retryOn.statuses",
    expected: "an array of integer HTTP statuses in 100..=599",
    kind: ErrorKind::Type,
};

/// Checks one entry of `retryOn.statuses`.
pub fn check_status(value: f64) -> Result<u16, OptionError> {
    let status = integer_in(value, 100, 599).and_then(|s| u16::try_from(s).ok());
    status.ok_or(OptionError { kind: ErrorKind::Range, ..STATUSES })
}

/// Everything one operation runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub limits: Limits,
    pub backoff: Backoff,
    pub retry_on: RetryOn,
    pub max_body_bytes: u64,
    /// `None`: the retry quota is disabled.
    pub quota: Option<QuotaConfig>,
    /// Start-rate limit; `None`: unlimited.
    pub rate: Option<RateConfig>,
    /// Requests in flight at once; `None`: unlimited.
    pub concurrency: Option<u32>,
    /// Whether response bodies are read inside the attempt (rule 13).
    pub response_body: ResponseBody,
    /// With a shared budget (rule 9): the clients expected to share it; the
    /// fallback start rate is `rate` divided among them.
    pub fleet_size: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            limits: Limits { max_attempts: 3, total_ms: 30_000, attempt_ms: 10_000 },
            backoff: Backoff {
                base_ms: 100,
                cap_ms: 20_000,
                throttle_base_ms: 1_000,
                retry_after_spread: true,
            },
            retry_on: RetryOn::default(),
            max_body_bytes: 16 * 1024 * 1024,
            quota: Some(QuotaConfig::default()),
            rate: None,
            concurrency: None,
            response_body: ResponseBody::Auto,
            fleet_size: 4,
        }
    }
}

impl Options {
    /// Sets a numeric option from a JS number, checking its range.
    pub fn set(&mut self, field: Numeric, value: f64) -> Result<(), OptionError> {
        let v = field.check(value)?;
        // Every u32 field's range is within u32; saturation is unreachable.
        let small = u32::try_from(v).unwrap_or(u32::MAX);
        match field {
            Numeric::MaxAttempts => self.limits.max_attempts = small,
            Numeric::TotalMs => self.limits.total_ms = v,
            Numeric::AttemptMs => self.limits.attempt_ms = v,
            Numeric::BaseMs => self.backoff.base_ms = v,
            Numeric::CapMs => self.backoff.cap_ms = v,
            Numeric::ThrottleBaseMs => self.backoff.throttle_base_ms = v,
            Numeric::MaxBodyBytes => self.max_body_bytes = v,
            Numeric::Concurrency => self.concurrency = Some(small),
            Numeric::FleetSize => self.fleet_size = small,
            Numeric::RateRequests | Numeric::RatePerMs | Numeric::RateBurst => {
                let rate = self.rate.get_or_insert(RateConfig { requests: 1, per_ms: 1000, burst: 1 });
                match field {
                    Numeric::RateRequests => rate.requests = small,
                    Numeric::RatePerMs => rate.per_ms = v,
                    _ => rate.burst = small,
                }
            }
            quota_field => {
                let quota = self.quota.get_or_insert_with(QuotaConfig::default);
                let slot = match quota_field {
                    Numeric::QuotaCapacity => &mut quota.capacity,
                    Numeric::QuotaRetryCost => &mut quota.retry_cost,
                    Numeric::QuotaTimeoutCost => &mut quota.timeout_cost,
                    _ => &mut quota.success_refund,
                };
                *slot = small;
            }
        }
        Ok(())
    }

    pub fn set_flag(&mut self, flag: Flag, value: bool) {
        match flag {
            Flag::RetryAfterSpread => self.backoff.retry_after_spread = value,
            Flag::RetryOnTimeouts => self.retry_on.timeouts = value,
            Flag::RetryOnNetworkErrors => self.retry_on.network_errors = value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_outside_their_range_name_the_field_and_the_range() {
        let mut o = Options::default();
        let table: &[(Numeric, f64, bool)] = &[
            (Numeric::MaxAttempts, 0.0, false),
            (Numeric::MaxAttempts, 1.0, true),
            (Numeric::MaxAttempts, 100.0, true),
            (Numeric::MaxAttempts, 101.0, false),
            (Numeric::MaxAttempts, 2.5, false),
            (Numeric::MaxAttempts, f64::NAN, false),
            (Numeric::MaxAttempts, f64::INFINITY, false),
            (Numeric::TotalMs, -1.0, false),
            (Numeric::TotalMs, 0.0, false),
            (Numeric::TotalMs, 2_147_483_647.0, true),
            (Numeric::TotalMs, 2_147_483_648.0, false),
            (Numeric::BaseMs, 0.0, true),
            (Numeric::QuotaCapacity, 1e6, true),
            (Numeric::QuotaCapacity, 1e6 + 1.0, false),
        ];
        for &(field, value, ok) in table {
            let got = o.set(field, value);
            assert_eq!(got.is_ok(), ok, "{field:?} = {value}");
            if let Err(e) = got {
                assert_eq!(e.kind, ErrorKind::Range);
                assert!(!e.field.is_empty() && e.expected.contains(".."), "{e:?}");
            }
        }
        assert_eq!(Numeric::MaxAttempts.check(0.0).unwrap_err().field, "maxAttempts");
        assert_eq!(Numeric::QuotaRetryCost.check(-2.0).unwrap_err().field, "quota.retryCost");
    }

    #[test]
    fn setters_change_exactly_their_field() {
        let mut o = Options::default();
        o.set(Numeric::MaxAttempts, 7.0).unwrap();
        o.set(Numeric::CapMs, 300.0).unwrap();
        o.set(Numeric::QuotaCapacity, 20.0).unwrap();
        o.set_flag(Flag::RetryOnTimeouts, false);
        assert_eq!(o.limits.max_attempts, 7);
        assert_eq!(o.backoff.cap_ms, 300);
        assert_eq!(o.quota.unwrap().capacity, 20);
        assert!(!o.retry_on.timeouts && o.retry_on.network_errors);
        assert_eq!(o.limits.total_ms, Options::default().limits.total_ms);
        o.quota = None;
        o.set(Numeric::MaxAttempts, 2.0).unwrap();
        assert_eq!(o.quota, None, "a non-quota field leaves a disabled quota disabled");
    }

    #[test]
    fn integers_are_checked_against_their_bounds_exactly_even_above_2_pow_53() {
        // Found by fuzzing: bounds above 2^53 were compared as f64, which
        // rounds them, so values outside `min..=max` came back.
        let p53 = 1u64 << 53;
        let table: &[(f64, u64, u64, Option<u64>)] = &[
            (p53 as f64, p53 + 1, u64::MAX, None),
            ((1u64 << 60) as f64, 0, (1 << 60) - 1, None),
            (18_446_744_073_709_551_616.0, 0, u64::MAX, None),
            (p53 as f64, 0, p53, Some(p53)),
            ((1u64 << 63) as f64, 1 << 63, 1 << 63, Some(1 << 63)),
            (-0.0, 0, 5, Some(0)),
            (-1.0, 0, 5, None),
            (0.5, 0, 5, None),
            (4503599627370495.5, 0, u64::MAX, None),
            (f64::NAN, 0, u64::MAX, None),
            (f64::INFINITY, 0, u64::MAX, None),
        ];
        for &(value, min, max, expected) in table {
            assert_eq!(integer_in(value, min, max), expected, "{value} in {min}..={max}");
        }
    }

    #[test]
    fn statuses_must_be_http_statuses() {
        assert_eq!(check_status(503.0), Ok(503));
        for bad in [99.0, 600.0, 99999.0, 503.5, f64::NAN] {
            assert_eq!(check_status(bad).unwrap_err().kind, ErrorKind::Range, "{bad}");
        }
    }
}
