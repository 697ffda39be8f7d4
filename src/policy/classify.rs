//! After one attempt: succeed, retry (and which kind of wait), or stop.
//!
//! A failure is judged by how far the request got, not by its error's name:
//! only a `NotSent` failure proves the server did nothing. Anything else may
//! have been acted on, so it is repeated only when repeating is harmless
//! (an idempotent method, or an idempotency key the server deduplicates on).

use serde::Serialize;

use super::reason::Reason;
use super::retry_after::RetryAfter;

/// How far a failed request got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum Stage {
    /// Surely never reached the server (refused, DNS, unreachable).
    NotSent,
    /// The connection existed and then failed: the server may have acted.
    MaybeDelivered,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::NotSent => "not-sent",
            Stage::MaybeDelivered => "maybe-delivered",
        }
    }
}

/// Serialized by its public name.
impl From<Stage> for &'static str {
    fn from(s: Stage) -> &'static str {
        s.name()
    }
}

/// The method as `fetch` sends it: DELETE, GET, HEAD, OPTIONS, POST and PUT
/// are upper-cased whatever their case; any other name is sent as given.
pub fn normalize_method(method: &str) -> &str {
    const NORMALISED: [&str; 6] = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"];
    NORMALISED.iter().find(|m| m.eq_ignore_ascii_case(method)).map_or(method, |m| m)
}

/// Whether repeating the request is harmless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Safety {
    /// GET, HEAD, OPTIONS, TRACE, PUT, DELETE (RFC 9110 §9.2.2).
    Idempotent,
    /// A non-idempotent method sent with an idempotency key.
    Keyed,
    /// A non-idempotent method without a key: repeat only after `NotSent`.
    Unsafe,
}

impl Safety {
    /// Methods are compared case-sensitively after `fetch`'s normalisation
    /// (which upper-cases the standard ones); unknown methods are unsafe.
    pub fn of(method: &str, has_key: bool) -> Safety {
        const IDEMPOTENT: [&str; 6] = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"];
        if IDEMPOTENT.contains(&method) {
            Safety::Idempotent
        } else if has_key {
            Safety::Keyed
        } else {
            Safety::Unsafe
        }
    }

    pub fn repeatable(self) -> bool {
        self != Safety::Unsafe
    }
}

/// The allowlists. Anything not on them stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryOn {
    statuses: [u64; 10],
    pub timeouts: bool,
    pub network_errors: bool,
}

impl RetryOn {
    pub const DEFAULT_STATUSES: [u16; 6] = [408, 429, 500, 502, 503, 504];

    /// `statuses` outside 100..=599 are ignored here; option validation
    /// rejects them before they arrive.
    pub fn new(statuses: &[u16], timeouts: bool, network_errors: bool) -> RetryOn {
        let mut on = RetryOn { statuses: [0; 10], timeouts, network_errors };
        for &s in statuses {
            on.allow(s);
        }
        on
    }

    /// Adds `status` to the allowlist (ignored outside 100..=599).
    pub fn allow(&mut self, status: u16) {
        if let (true, Some(word)) = ((100..=599).contains(&status), self.statuses.get_mut(usize::from(status / 64))) {
            *word |= 1 << (status % 64);
        }
    }

    pub fn status(&self, status: u16) -> bool {
        self.statuses.get(usize::from(status / 64)).is_some_and(|word| word & (1 << (status % 64)) != 0)
    }
}

impl Default for RetryOn {
    fn default() -> Self {
        RetryOn::new(&Self::DEFAULT_STATUSES, true, true)
    }
}

/// What one attempt ended in, as the policy needs to see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempted {
    Responded {
        status: u16,
        /// The parsed `Retry-After`/`Retry-After-Ms`, when readable.
        retry_after: Option<RetryAfter>,
        /// A cross-origin response whose `Retry-After` may be hidden by CORS.
        retry_after_hidden: bool,
    },
    Failed(Failure),
}

/// A failure without a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Network(Stage),
    /// The host refused the request in a way that will repeat (an invalid
    /// request, a redirect its mode forbids, an integrity mismatch): never
    /// retried, whatever the stage (`policy::runtime::refused`).
    Refused(Stage),
    /// Our per-attempt timer fired (the request may have been delivered).
    AttemptTimeout,
    /// Our total deadline fired.
    Deadline,
    /// The caller cancelled.
    Cancelled,
    /// The body exceeded `maxBodyBytes`.
    BodyTooLarge,
}

/// Which wait precedes a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum WaitKind {
    /// Full jitter on `baseMs`.
    Backoff,
    /// Full jitter on the larger throttling base: a 429 without Retry-After,
    /// or a response whose Retry-After CORS may be hiding.
    Throttle,
    /// The server's value (ms, `u64::MAX` = infinite) as a floor.
    RetryAfter(u64),
}

impl WaitKind {
    pub fn name(self) -> &'static str {
        match self {
            WaitKind::Backoff => "backoff",
            WaitKind::Throttle => "throttle",
            WaitKind::RetryAfter(_) => "retry-after",
        }
    }
}

/// Serialized by its public name.
impl From<WaitKind> for &'static str {
    fn from(k: WaitKind) -> &'static str {
        k.name()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Succeeded,
    Retry(WaitKind),
    Stop(Reason),
}

/// The decision after one attempt, before limits and budgets are applied.
pub fn classify(attempted: Attempted, safety: Safety, retry_on: &RetryOn) -> Verdict {
    match attempted {
        Attempted::Responded { status, .. } if (200..=299).contains(&status) => Verdict::Succeeded,
        Attempted::Responded { status, .. } if !retry_on.status(status) || !safety.repeatable() => {
            Verdict::Stop(Reason::HttpStop)
        }
        // A 403 is a spent rate limit only when a header says when it resets.
        Attempted::Responded { status: 403, retry_after: None, .. } => Verdict::Stop(Reason::HttpStop),
        Attempted::Responded { status, retry_after, retry_after_hidden } => match retry_after {
            Some(RetryAfter::Unsupported) => Verdict::Stop(Reason::UnsupportedRetryAfter),
            Some(ra) => Verdict::Retry(WaitKind::RetryAfter(ra.floor_ms().unwrap_or(u64::MAX))),
            None if status == 429 || retry_after_hidden => Verdict::Retry(WaitKind::Throttle),
            None => Verdict::Retry(WaitKind::Backoff),
        },
        Attempted::Failed(failure) => classify_failure(failure, safety, retry_on),
    }
}

fn classify_failure(failure: Failure, safety: Safety, retry_on: &RetryOn) -> Verdict {
    let retry_if = |allowed: bool, otherwise: Reason| {
        if allowed {
            Verdict::Retry(WaitKind::Backoff)
        } else {
            Verdict::Stop(otherwise)
        }
    };
    match failure {
        Failure::Network(Stage::NotSent) => retry_if(retry_on.network_errors, Reason::NetworkError),
        Failure::Network(Stage::MaybeDelivered) if !safety.repeatable() => {
            Verdict::Stop(Reason::MaybeDelivered)
        }
        Failure::Network(Stage::MaybeDelivered) => retry_if(retry_on.network_errors, Reason::NetworkError),
        Failure::AttemptTimeout => retry_if(retry_on.timeouts && safety.repeatable(), Reason::AttemptTimeout),
        Failure::Refused(_) => Verdict::Stop(Reason::Refused),
        Failure::Deadline => Verdict::Stop(Reason::Deadline),
        Failure::Cancelled => Verdict::Stop(Reason::Cancelled),
        Failure::BodyTooLarge => Verdict::Stop(Reason::BodyTooLarge),
    }
}

#[cfg(test)]
mod tests {
    use super::Failure::*;
    use super::Safety::*;
    use super::Stage::*;
    use super::*;

    fn status(status: u16) -> Attempted {
        Attempted::Responded { status, retry_after: None, retry_after_hidden: false }
    }

    #[test]
    fn methods_map_to_safety_as_rfc_9110_says() {
        for m in ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"] {
            assert_eq!(Safety::of(m, false), Idempotent, "{m}");
        }
        assert_eq!(Safety::of("POST", false), Unsafe);
        assert_eq!(Safety::of("PATCH", false), Unsafe);
        assert_eq!(Safety::of("POST", true), Keyed);
        assert_eq!(Safety::of("get", false), Unsafe, "non-normalised methods are unknown");
        assert_eq!(Safety::of("PROPFIND", false), Unsafe);
    }

    #[test]
    fn methods_are_normalised_as_fetch_does() {
        assert_eq!(normalize_method("get"), "GET");
        assert_eq!(normalize_method("Post"), "POST");
        assert_eq!(normalize_method("delete"), "DELETE");
        assert_eq!(normalize_method("patch"), "patch", "fetch does not normalise PATCH");
        assert_eq!(Safety::of(normalize_method("put"), false), Idempotent);
        assert_eq!(Safety::of(normalize_method("patch"), false), Unsafe);
    }

    #[test]
    fn a_403_is_retried_only_when_a_header_says_when_the_quota_resets() {
        let with_403 = RetryOn::new(&[403], true, true);
        assert_eq!(classify(status(403), Idempotent, &with_403), Verdict::Stop(Reason::HttpStop));
        let reset = Attempted::Responded {
            status: 403,
            retry_after: Some(RetryAfter::Delay(2000)),
            retry_after_hidden: false,
        };
        assert_eq!(classify(reset, Idempotent, &with_403), Verdict::Retry(WaitKind::RetryAfter(2000)));
        assert_eq!(classify(reset, Idempotent, &RetryOn::default()), Verdict::Stop(Reason::HttpStop));
    }

    #[test]
    fn classification_table() {
        let d = RetryOn::default();
        let table: &[(Attempted, Safety, Verdict)] = &[
            (Attempted::Failed(Network(NotSent)), Unsafe, Verdict::Retry(WaitKind::Backoff)),
            (Attempted::Failed(Network(MaybeDelivered)), Unsafe, Verdict::Stop(Reason::MaybeDelivered)),
            (Attempted::Failed(Network(MaybeDelivered)), Keyed, Verdict::Retry(WaitKind::Backoff)),
            (Attempted::Failed(Network(MaybeDelivered)), Idempotent, Verdict::Retry(WaitKind::Backoff)),
            (Attempted::Failed(AttemptTimeout), Unsafe, Verdict::Stop(Reason::AttemptTimeout)),
            (Attempted::Failed(AttemptTimeout), Keyed, Verdict::Retry(WaitKind::Backoff)),
            (Attempted::Failed(Deadline), Idempotent, Verdict::Stop(Reason::Deadline)),
            (Attempted::Failed(Cancelled), Idempotent, Verdict::Stop(Reason::Cancelled)),
            (Attempted::Failed(BodyTooLarge), Idempotent, Verdict::Stop(Reason::BodyTooLarge)),
            (status(200), Unsafe, Verdict::Succeeded),
            (status(204), Idempotent, Verdict::Succeeded),
            (status(307), Unsafe, Verdict::Stop(Reason::HttpStop)),
            (status(0), Unsafe, Verdict::Stop(Reason::HttpStop)),
            (status(404), Idempotent, Verdict::Stop(Reason::HttpStop)),
            (status(501), Idempotent, Verdict::Stop(Reason::HttpStop)),
            (status(501), Keyed, Verdict::Stop(Reason::HttpStop)),
            (status(503), Idempotent, Verdict::Retry(WaitKind::Backoff)),
            (status(503), Keyed, Verdict::Retry(WaitKind::Backoff)),
            (status(503), Unsafe, Verdict::Stop(Reason::HttpStop)),
            (status(429), Idempotent, Verdict::Retry(WaitKind::Throttle)),
            (status(408), Idempotent, Verdict::Retry(WaitKind::Backoff)),
        ];
        for (i, &(attempted, safety, expected)) in table.iter().enumerate() {
            assert_eq!(classify(attempted, safety, &d), expected, "row {i}: {attempted:?} {safety:?}");
        }
    }

    #[test]
    fn retry_after_decides_the_wait_of_a_retryable_status() {
        let d = RetryOn::default();
        let with = |retry_after, hidden| Attempted::Responded {
            status: 503,
            retry_after,
            retry_after_hidden: hidden,
        };
        assert_eq!(
            classify(with(Some(RetryAfter::Delay(1000)), false), Idempotent, &d),
            Verdict::Retry(WaitKind::RetryAfter(1000))
        );
        assert_eq!(
            classify(with(Some(RetryAfter::Infinite), false), Idempotent, &d),
            Verdict::Retry(WaitKind::RetryAfter(u64::MAX))
        );
        assert_eq!(
            classify(with(Some(RetryAfter::Unsupported), false), Idempotent, &d),
            Verdict::Stop(Reason::UnsupportedRetryAfter)
        );
        assert_eq!(classify(with(None, true), Idempotent, &d), Verdict::Retry(WaitKind::Throttle));
    }

    #[test]
    fn allowlists_are_configurable_and_cannot_widen_unsafe_requests() {
        let none = RetryOn::new(&[], false, false);
        assert_eq!(classify(status(503), Idempotent, &none), Verdict::Stop(Reason::HttpStop));
        assert_eq!(
            classify(Attempted::Failed(Network(MaybeDelivered)), Idempotent, &none),
            Verdict::Stop(Reason::NetworkError)
        );
        assert_eq!(
            classify(Attempted::Failed(AttemptTimeout), Idempotent, &none),
            Verdict::Stop(Reason::AttemptTimeout)
        );
        let wide = RetryOn::new(&[404, 501, 599, 100], true, true);
        assert_eq!(classify(status(404), Idempotent, &wide), Verdict::Retry(WaitKind::Backoff));
        assert_eq!(classify(status(404), Unsafe, &wide), Verdict::Stop(Reason::HttpStop));
        assert!(wide.status(599) && wide.status(100) && !wide.status(503));
        let out_of_range = RetryOn::new(&[0, 99, 600, 65535], true, true);
        assert!(!out_of_range.status(0) && !out_of_range.status(600) && !out_of_range.status(65535));
    }
}
