//! The options, their defaults and their accepted ranges, as data.
//!
//! [`POLICY`] is the schema of a policy's options and of a call's
//! `init.retry` (a [`Kind::Scoped`] field differs between the two);
//! `policy::schema::read` checks a caller's object against it and
//! [`Options::apply`] takes what it read. The defaults are
//! [`Options::default`]'s.

use super::body::ResponseBody;
use super::budget::quota::QuotaConfig;
use super::budget::rate::RateConfig;
use super::classify::RetryOn;
use super::limits::{Backoff, Limits, MAX_TIMER_MS};
use super::schema::{at, Def, Kind, Unit, Value, TIMER_MS};
use super::schema::schema;
use super::throttle::{ThrottleConfig, MAX_WINDOW_MS, MIN_WINDOW_MS};

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

/// Everything one operation runs under.
#[derive(Debug, Clone, PartialEq)]
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
    /// Adaptive throttling (`policy::throttle`); `None`: off (on a call:
    /// opted out — its attempts still count in the policy's window).
    pub throttle: Option<ThrottleConfig>,
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
            throttle: Some(ThrottleConfig::default()),
            response_body: ResponseBody::Auto,
            fleet_size: 4,
        }
    }
}

/// An integer in 0..=1000000 (a quota's counts).
const COUNT: Kind = Kind::Int(Unit::Count, 0, 1_000_000);
/// A duration in ms a timer can hold, from 0.
const MS: Kind = Kind::Int(Unit::Ms, 0, MAX_TIMER_MS);

/// An idempotency key: sent as a header value, unchanged.
pub const KEY: Kind = Kind::Token(1, 255);

schema! {
    /// A policy's options, and a call's `init.retry`.
    pub POLICY as Policy, open: false;
    MaxAttempts "maxAttempts": Kind::Int(Unit::Count, 1, 100), Def::None;
    TotalMs "totalMs": TIMER_MS, Def::None;
    AttemptMs "attemptMs": TIMER_MS, Def::None;
    BaseMs "baseMs": MS, Def::None;
    CapMs "capMs": MS, Def::None;
    ThrottleBaseMs "throttleBaseMs": MS, Def::None;
    MaxBodyBytes "maxBodyBytes": Kind::Int(Unit::Bytes, 0, 1 << 32), Def::None;
    ResponseBody "responseBody": Kind::Word("auto,buffer,stream,"), Def::None;
    RetryOn "retryOn": Kind::Object(&RETRY_ON), Def::None;
    RetryAfterSpread "retryAfterSpread": Kind::Bool, Def::None;
    Quota "quota": Kind::Scoped(&Kind::Or(&Kind::Bool, &Kind::Object(&QUOTA)), &Kind::False), Def::None;
    Throttle "throttle": Kind::Scoped(&Kind::Or(&Kind::Bool, &Kind::Object(&THROTTLE)), &Kind::False), Def::None;
    Concurrency "concurrency": Kind::Scoped(&Kind::Int(Unit::Count, 1, 10_000), &Kind::PolicyOnly), Def::None;
    Rate "rate": Kind::Scoped(&Kind::Object(&RATE), &Kind::PolicyOnly), Def::None;
    Random "random": Kind::Function, Def::None;
    OnRetry "onRetry": Kind::Function, Def::None;
    Fetch "fetch": Kind::Function, Def::None;
    /// A policy makes a fresh key per call (`true`); a literal key is a call's.
    IdempotencyKey "idempotencyKey": Kind::Scoped(&Kind::Bool, &Kind::Or(&KEY, &Kind::Bool)), Def::None;
    NotBefore "notBefore": Kind::Scoped(&Kind::CallOnly, &Kind::Int(Unit::Epoch, 0, (1 << 53) - 1)), Def::None;
    Shared "shared": Kind::Scoped(&Kind::Object(&SHARED), &Kind::PolicyOnly), Def::None;
}

schema! {
    pub RETRY_ON as RetryOnField, open: false;
    Statuses "statuses": Kind::List(0, 1000, &Kind::Int(Unit::Count, 100, 599)), Def::None;
    Timeouts "timeouts": Kind::Bool, Def::None;
    NetworkErrors "networkErrors": Kind::Bool, Def::None;
}

schema! {
    /// The retry quota (`QuotaConfig`): absent counts keep their default.
    pub QUOTA as Quota, open: false;
    Capacity "capacity": COUNT, Def::None;
    RetryCost "retryCost": COUNT, Def::None;
    TimeoutCost "timeoutCost": COUNT, Def::None;
    SuccessRefund "successRefund": COUNT, Def::None;
}

schema! {
    /// Adaptive throttling (`ThrottleConfig`): absent fields keep their default.
    pub THROTTLE as ThrottleField, open: false;
    K "k": Kind::Num(1, 100), Def::None;
    WindowMs "windowMs": Kind::Int(Unit::Ms, MIN_WINDOW_MS, MAX_WINDOW_MS), Def::None;
}

schema! {
    pub RATE as Rate, open: false;
    Requests "requests": Kind::Int(Unit::Count, 1, 1_000_000), Def::Required;
    PerMs "perMs": TIMER_MS, Def::Int(1000);
    Burst "burst": Kind::Int(Unit::Count, 1, 1_000_000), Def::Int(1);
}

schema! {
    /// A shared budget: an interface, not an options bag (a carrier may
    /// have members of its own: only these are read).
    pub SHARED as Shared, open: true;
    Exchange "exchange": Kind::Function, Def::Required;
    Attach "attach": Kind::Function, Def::None;
    FleetSize "fleetSize": super::schema::FLEET_SIZE, Def::None;
    Scope "scope": Kind::Text(false), Def::None;
}

/// A u32 field's value (every such field's range is within u32).
fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Options {
    /// Takes what `schema::read` read of [`POLICY`] (on a policy or per
    /// call: the fields set override these options, the others stay).
    /// The options that are JS values (functions, the key, `notBefore`,
    /// `shared`'s members) are the host's to take.
    pub fn apply<V>(&mut self, values: &[Value<V>]) {
        let int = |f: Policy| at(values, f).and_then(Value::int);
        let flag = |f: Policy| at(values, f).and_then(Value::flag);
        let limits = &mut self.limits;
        let backoff = &mut self.backoff;
        let numbers: [(Policy, &mut u64); 6] = [
            (Policy::TotalMs, &mut limits.total_ms),
            (Policy::AttemptMs, &mut limits.attempt_ms),
            (Policy::BaseMs, &mut backoff.base_ms),
            (Policy::CapMs, &mut backoff.cap_ms),
            (Policy::ThrottleBaseMs, &mut backoff.throttle_base_ms),
            (Policy::MaxBodyBytes, &mut self.max_body_bytes),
        ];
        for (field, slot) in numbers {
            if let Some(n) = int(field) {
                *slot = n;
            }
        }
        if let Some(n) = int(Policy::MaxAttempts) {
            limits.max_attempts = small(n);
        }
        if let Some(body) = at(values, Policy::ResponseBody).and_then(Value::word).and_then(ResponseBody::parse) {
            self.response_body = body;
        }
        if let Some(spread) = flag(Policy::RetryAfterSpread) {
            backoff.retry_after_spread = spread;
        }
        if let Some(on) = at(values, Policy::RetryOn).and_then(Value::fields) {
            self.retry_on = retry_on(&self.retry_on, on);
        }
        match at(values, Policy::Quota) {
            Some(Value::Bool(false)) => self.quota = None,
            Some(Value::Bool(true)) => self.quota = Some(self.quota.unwrap_or_default()),
            Some(Value::Object(_, fields)) => self.quota = Some(quota(self.quota.unwrap_or_default(), fields)),
            _ => {}
        }
        match at(values, Policy::Throttle) {
            Some(Value::Bool(false)) => self.throttle = None,
            Some(Value::Bool(true)) => self.throttle = Some(self.throttle.unwrap_or_default()),
            Some(Value::Object(_, fields)) => self.throttle = Some(throttle(self.throttle.unwrap_or_default(), fields)),
            _ => {}
        }
        if let Some(n) = int(Policy::Concurrency) {
            self.concurrency = Some(small(n));
        }
        if let Some(rate) = at(values, Policy::Rate).and_then(Value::fields) {
            let int = |f: Rate| at(rate, f).and_then(Value::int);
            // `requests` is required; `perMs` and `burst` have defaults.
            if let (Some(requests), Some(per_ms), Some(burst)) = (int(Rate::Requests), int(Rate::PerMs), int(Rate::Burst)) {
                self.rate = Some(RateConfig { requests: small(requests), per_ms, burst: small(burst) });
            }
        }
        let shared = at(values, Policy::Shared).and_then(Value::fields);
        if let Some(n) = shared.and_then(|s| at(s, Shared::FleetSize)).and_then(Value::int) {
            self.fleet_size = small(n);
        }
    }
}

fn retry_on<V>(base: &RetryOn, on: &[Value<V>]) -> RetryOn {
    let mut r = base.clone();
    if let Some(items) = at(on, RetryOnField::Statuses).and_then(Value::items) {
        r = RetryOn::new(&[], r.timeouts, r.network_errors);
        for status in items {
            // Each one is in 100..=599 (`POLICY`).
            r.allow(status.int().map_or(0, |s| u16::try_from(s).unwrap_or(0)));
        }
    }
    let flag = |f: RetryOnField| at(on, f).and_then(Value::flag);
    r.timeouts = flag(RetryOnField::Timeouts).unwrap_or(r.timeouts);
    r.network_errors = flag(RetryOnField::NetworkErrors).unwrap_or(r.network_errors);
    r
}

fn throttle<V>(mut t: ThrottleConfig, fields: &[Value<V>]) -> ThrottleConfig {
    if let Some(k) = at(fields, ThrottleField::K).and_then(Value::num) {
        t.k = k;
    }
    if let Some(ms) = at(fields, ThrottleField::WindowMs).and_then(Value::int) {
        t.window_ms = ms;
    }
    t
}

fn quota<V>(mut q: QuotaConfig, fields: &[Value<V>]) -> QuotaConfig {
    let slots: [(Quota, &mut u32); 4] = [
        (Quota::Capacity, &mut q.capacity),
        (Quota::RetryCost, &mut q.retry_cost),
        (Quota::TimeoutCost, &mut q.timeout_cost),
        (Quota::SuccessRefund, &mut q.success_refund),
    ];
    for (field, slot) in slots {
        if let Some(n) = at(fields, field).and_then(Value::int) {
            *slot = small(n);
        }
    }
    q
}
