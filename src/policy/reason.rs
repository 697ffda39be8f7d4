//! Why a logical operation ended: `report.reason` and `RetryError.reason`.

use serde::Serialize;

/// The end of an operation. Every name is one of DESIGN §1's stop reasons,
/// plus `succeeded` for a 2xx, `invalid-random` for an injected `random()`
/// that returned something outside `[0, 1)`, and `task-failed` for a polled
/// task that its verdict hook called fatal, `offline` when the host
/// reported itself offline until the budget ran out, and `refused` when
/// `fetch` refused the request in a way that will repeat (the rejection is
/// then the host's own error), and `throttled` when adaptive throttling
/// (`policy::throttle`) rejected the first attempt: nothing was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum Reason {
    Succeeded,
    HttpStop,
    AttemptsExhausted,
    WaitExceedsBudget,
    UnsupportedRetryAfter,
    AttemptTimeout,
    Deadline,
    Cancelled,
    MaybeDelivered,
    NetworkError,
    RetryQuotaExhausted,
    QueueExceedsBudget,
    BodyNotReplayable,
    BodyTooLarge,
    InvalidRandom,
    /// A poll's verdict said the task failed.
    TaskFailed,
    /// The host stayed offline for the rest of the budget.
    Offline,
    /// The host refused the request in a way that repeating cannot change.
    Refused,
    /// Adaptive throttling rejected the first attempt locally: the
    /// upstream has been refusing most requests; nothing was sent.
    Throttled,
}

impl Reason {
    /// The public, kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Succeeded => "succeeded",
            Reason::HttpStop => "http-stop",
            Reason::AttemptsExhausted => "attempts-exhausted",
            Reason::WaitExceedsBudget => "wait-exceeds-budget",
            Reason::UnsupportedRetryAfter => "unsupported-retry-after",
            Reason::AttemptTimeout => "attempt-timeout",
            Reason::Deadline => "deadline",
            Reason::Cancelled => "cancelled",
            Reason::MaybeDelivered => "maybe-delivered",
            Reason::NetworkError => "network-error",
            Reason::RetryQuotaExhausted => "retry-quota-exhausted",
            Reason::QueueExceedsBudget => "queue-exceeds-budget",
            Reason::BodyNotReplayable => "body-not-replayable",
            Reason::BodyTooLarge => "body-too-large",
            Reason::InvalidRandom => "invalid-random",
            Reason::TaskFailed => "task-failed",
            Reason::Offline => "offline",
            Reason::Refused => "refused",
            Reason::Throttled => "throttled",
        }
    }
}

/// Serialized by its public name.
impl From<Reason> for &'static str {
    fn from(r: Reason) -> &'static str {
        r.name()
    }
}
