//! Classification and option checks: an unsafe request is retried only
//! after a `not-sent` failure, nothing off the allowlist is retried, and an
//! option is accepted exactly when it is an integer inside its range.

use saferetry::policy::classify::RetryOn;
use saferetry::policy::classify::{
    classify, normalize_method, Attempted, Failure, Safety, Stage, Verdict, WaitKind,
};
use saferetry::policy::options::{integer_in, Numeric, Options};
use saferetry::policy::reason::Reason;
use saferetry::policy::retry_after::RetryAfter;

/// Every numeric option, from the groups the host reads them in.
pub fn fields() -> Vec<Numeric> {
    [&Numeric::TOP_LEVEL[..], &Numeric::QUOTA, &Numeric::RATE, &[Numeric::Concurrency, Numeric::FleetSize]]
        .concat()
}

pub fn check_classify(attempted: Attempted, safety: Safety, statuses: &[u16], timeouts: bool, network: bool) {
    let retry_on = RetryOn::new(statuses, timeouts, network);
    for s in statuses {
        assert_eq!(retry_on.status(*s), (100..=599).contains(s), "status {s}");
    }
    let verdict = classify(attempted, safety, &retry_on);
    let retried = matches!(verdict, Verdict::Retry(_));
    if safety == Safety::Unsafe && retried {
        assert_eq!(attempted, Attempted::Failed(Failure::Network(Stage::NotSent)), "unsafe retry");
    }
    match attempted {
        Attempted::Responded { status, retry_after, .. } => {
            let ok = (200..=299).contains(&status);
            assert_eq!(verdict == Verdict::Succeeded, ok, "{status}: {verdict:?}");
            if retried {
                assert!(retry_on.status(status) && safety.repeatable(), "{status} off the allowlist");
            }
            match (verdict, retry_after) {
                (Verdict::Retry(WaitKind::RetryAfter(floor)), Some(ra)) => {
                    assert_eq!(Some(floor), ra.floor_ms(), "the server's floor is passed on")
                }
                (Verdict::Retry(WaitKind::RetryAfter(_)), None) => panic!("a floor nobody sent"),
                (Verdict::Retry(_), Some(ra)) => panic!("{ra:?} ignored"),
                (_, Some(RetryAfter::Unsupported))
                    if !ok && retry_on.status(status) && safety.repeatable() =>
                {
                    assert_eq!(verdict, Verdict::Stop(Reason::UnsupportedRetryAfter))
                }
                _ => {}
            }
        }
        Attempted::Failed(failure) => {
            assert_ne!(verdict, Verdict::Succeeded);
            if retried {
                assert_eq!(verdict, Verdict::Retry(WaitKind::Backoff));
                let allowed = match failure {
                    Failure::Network(Stage::NotSent) => network,
                    Failure::Network(Stage::MaybeDelivered) => network && safety.repeatable(),
                    Failure::AttemptTimeout => timeouts && safety.repeatable(),
                    Failure::Refused(_) | Failure::Deadline | Failure::Cancelled | Failure::BodyTooLarge => {
                        false
                    }
                };
                assert!(allowed, "{failure:?} retried");
            }
            if let Failure::Refused(_) = failure {
                assert_eq!(verdict, Verdict::Stop(Reason::Refused), "a refusal repeats: never retried");
            }
            if verdict == Verdict::Stop(Reason::MaybeDelivered) {
                assert_eq!((failure, safety), (Failure::Network(Stage::MaybeDelivered), Safety::Unsafe));
            }
        }
    }
}

/// A method as `fetch` sends it, and its safety.
pub fn check_method(method: &str, has_key: bool) {
    let sent = normalize_method(method);
    assert!(sent.eq_ignore_ascii_case(method));
    let upper = method.to_ascii_uppercase();
    let normalised = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"].contains(&upper.as_str());
    assert_eq!(sent, if normalised { upper.as_str() } else { method });
    let idempotent = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(&sent);
    let expected = match (idempotent, has_key) {
        (true, _) => Safety::Idempotent,
        (false, true) => Safety::Keyed,
        (false, false) => Safety::Unsafe,
    };
    assert_eq!(Safety::of(sent, has_key), expected, "{method:?}");
}

/// `integer_in` against plain arithmetic, and `Options::set` on one field:
/// accepted values land in their field, refused ones change nothing.
pub fn check_option(value: f64, min: u64, max: u64, field: Numeric) {
    let integer = value.is_finite() && value.trunc() == value && value >= 0.0 && value < 2f64.powi(64);
    let expected = if integer {
        let exact = value as u64; // in range and integral: exact
        (min <= exact && exact <= max).then_some(exact)
    } else {
        None
    };
    assert_eq!(integer_in(value, min, max), expected, "{value} in {min}..={max}");

    let mut options = Options::default();
    let before = options.clone();
    match options.set(field, value) {
        Ok(()) => {
            assert_eq!(read(&options, field) as f64, value, "{field:?} = {value}");
            assert_eq!(field.check(value), Ok(read(&options, field)));
        }
        Err(e) => {
            assert_eq!(options, before, "a refused {field:?} changed the options");
            assert!(field.check(value).is_err() && !e.field.is_empty() && e.expected.contains(".."));
        }
    }
}

fn read(o: &Options, field: Numeric) -> u64 {
    let rate =
        o.rate.unwrap_or(saferetry::policy::budget::rate::RateConfig { requests: 0, per_ms: 0, burst: 0 });
    let quota = o.quota.unwrap_or_default();
    match field {
        Numeric::MaxAttempts => u64::from(o.limits.max_attempts),
        Numeric::TotalMs => o.limits.total_ms,
        Numeric::AttemptMs => o.limits.attempt_ms,
        Numeric::BaseMs => o.backoff.base_ms,
        Numeric::CapMs => o.backoff.cap_ms,
        Numeric::ThrottleBaseMs => o.backoff.throttle_base_ms,
        Numeric::MaxBodyBytes => o.max_body_bytes,
        Numeric::QuotaCapacity => u64::from(quota.capacity),
        Numeric::QuotaRetryCost => u64::from(quota.retry_cost),
        Numeric::QuotaTimeoutCost => u64::from(quota.timeout_cost),
        Numeric::QuotaSuccessRefund => u64::from(quota.success_refund),
        Numeric::Concurrency => o.concurrency.map_or(0, u64::from),
        Numeric::RateRequests => u64::from(rate.requests),
        Numeric::RatePerMs => rate.per_ms,
        Numeric::RateBurst => u64::from(rate.burst),
        Numeric::FleetSize => u64::from(o.fleet_size),
    }
}
