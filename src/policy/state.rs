//! The states a UI shows, and the rule that turns a stop reason into one.
//!
//! Every operation ends, in bounded time, in exactly one terminal state; a
//! terminal state never changes again. `try-later` means "nothing is wrong
//! with the request; the server or the budget needs time", `failed` means
//! "trying again blindly would be wrong or useless".

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::classify::Safety;
use super::reason::Reason;

/// Why an operation is waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum WaitWhy {
    Backoff,
    Throttle,
    RetryAfter,
    RateLimit,
    Queue,
    Offline,
    /// Between two polls of a submitted task.
    Poll,
}

impl WaitWhy {
    pub fn name(self) -> &'static str {
        match self {
            WaitWhy::Backoff => "backoff",
            WaitWhy::Throttle => "throttle",
            WaitWhy::RetryAfter => "retry-after",
            WaitWhy::RateLimit => "rate-limit",
            WaitWhy::Queue => "queue",
            WaitWhy::Offline => "offline",
            WaitWhy::Poll => "poll",
        }
    }
}

/// Serialized by its public name.
impl From<WaitWhy> for &'static str {
    fn from(w: WaitWhy) -> &'static str {
        w.name()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Requesting {
        attempt: u32,
        max: u32,
    },
    /// Before attempt `attempt`, until `until_ms` (epoch ms).
    Waiting {
        attempt: u32,
        until_ms: u64,
        wait_ms: u64,
        why: WaitWhy,
    },
    Succeeded,
    TryLater {
        retry_at: Option<u64>,
        reason: Reason,
    },
    /// `redirect`: the final response was a redirect that was deliberately
    /// not followed (the caller asked for `redirect: "manual"`).
    Failed {
        reason: Reason,
        redirect: bool,
    },
    Cancelled,
}

impl Phase {
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Requesting { .. } => "requesting",
            Phase::Waiting { .. } => "waiting",
            Phase::Succeeded => "succeeded",
            Phase::TryLater { .. } => "try-later",
            Phase::Failed { .. } => "failed",
            Phase::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, Phase::Succeeded | Phase::TryLater { .. } | Phase::Failed { .. } | Phase::Cancelled)
    }

    /// The terminal state for a stop reason. Timeouts are worth another
    /// try later only when repeating the request is harmless.
    pub fn terminal(reason: Reason, retry_at: Option<u64>, safety: Safety, status: Option<u16>) -> Phase {
        match reason {
            Reason::Succeeded => Phase::Succeeded,
            Reason::Cancelled => Phase::Cancelled,
            Reason::AttemptsExhausted
            | Reason::WaitExceedsBudget
            | Reason::UnsupportedRetryAfter
            | Reason::RetryQuotaExhausted
            | Reason::QueueExceedsBudget
            | Reason::NetworkError
            | Reason::Offline
            | Reason::Throttled => Phase::TryLater { retry_at, reason },
            Reason::AttemptTimeout | Reason::Deadline if safety.repeatable() => {
                Phase::TryLater { retry_at, reason }
            }
            _ => {
                let redirect = matches!(status, Some(0 | 301 | 302 | 303 | 307 | 308));
                Phase::Failed { reason, redirect }
            }
        }
    }
}

/// A UI state: `{ state, ... }` with what that state needs (written by
/// hand: `message` is derived from the phase, and `retryAt` of `try-later`
/// is `null` when unknown rather than absent).
impl Serialize for Phase {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("State", 5)?;
        o.serialize_field("state", self.name())?;
        match *self {
            Phase::Requesting { attempt, max } => {
                o.serialize_field("attempt", &attempt)?;
                o.serialize_field("maxAttempts", &max)?;
            }
            Phase::Waiting { attempt, until_ms, wait_ms, why } => {
                o.serialize_field("attempt", &attempt)?;
                o.serialize_field("until", &(until_ms as f64))?;
                o.serialize_field("waitMs", &(wait_ms as f64))?;
                o.serialize_field("why", &why)?;
            }
            Phase::TryLater { retry_at, reason } => {
                o.serialize_field("retryAt", &retry_at.map(|at| at as f64))?;
                o.serialize_field("reason", &reason)?;
                o.serialize_field("message", message(reason))?;
            }
            Phase::Failed { reason, .. } => {
                o.serialize_field("reason", &reason)?;
                o.serialize_field("message", phase_message(self, reason))?;
            }
            Phase::Idle | Phase::Succeeded | Phase::Cancelled => {}
        }
        o.end()
    }
}

/// The sentence for a terminal state: a redirect that was deliberately not
/// followed is no refusal, whatever its reason's general sentence says.
pub fn phase_message(phase: &Phase, reason: Reason) -> &'static str {
    match phase {
        Phase::Failed { redirect: true, .. } => {
            "The server redirected the request, and the redirect was not followed, as the request asked."
        }
        _ => message(reason),
    }
}

/// A short sentence for a person, per reason.
pub fn message(reason: Reason) -> &'static str {
    match reason {
        Reason::Succeeded => "Done.",
        Reason::HttpStop => "The server refused the request; trying again will not help.",
        Reason::AttemptsExhausted => "The server is not answering properly right now.",
        Reason::WaitExceedsBudget => "The server asked us to wait longer than this operation may take.",
        Reason::UnsupportedRetryAfter => "The server asked us to wait, in a form we cannot read.",
        Reason::AttemptTimeout => "The server took too long to answer.",
        Reason::Deadline => "This took too long.",
        Reason::Cancelled => "Cancelled.",
        Reason::MaybeDelivered => {
            "The connection broke after the request was sent; it may have been received, so it was not sent again."
        }
        Reason::NetworkError => "The network is not reachable right now.",
        Reason::RetryQuotaExhausted => "Too many requests are failing; retries are paused for now.",
        Reason::QueueExceedsBudget => "Too busy to start this request in time.",
        Reason::BodyNotReplayable => "The request body could not be sent again.",
        Reason::BodyTooLarge => "The response was larger than allowed.",
        Reason::InvalidRandom => "The configured random() returned a value outside [0, 1).",
        Reason::TaskFailed => "The task failed.",
        Reason::Offline => "You are offline; nothing was sent.",
        Reason::Refused => "The request cannot succeed as it is; trying again would fail the same way.",
        Reason::Throttled => "The server is refusing most requests right now; this one was not sent.",
    }
}

/// Drives the phase: every transition goes through here, and once terminal
/// nothing moves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateMachine {
    phase: Phase,
}

impl Default for StateMachine {
    fn default() -> Self {
        StateMachine { phase: Phase::Idle }
    }
}

impl StateMachine {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Moves to `next`; returns it when the move happened.
    pub fn advance(&mut self, next: Phase) -> Option<Phase> {
        if self.phase.is_terminal() || next == Phase::Idle {
            return None;
        }
        self.phase = next;
        Some(next)
    }
}

// Native only: they use proptest or serde_json, which the wasm tests do not have.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_map_to_the_states_a_ui_shows() {
        let table = [
            (Reason::Succeeded, Safety::Unsafe, "succeeded"),
            (Reason::Cancelled, Safety::Idempotent, "cancelled"),
            (Reason::AttemptsExhausted, Safety::Idempotent, "try-later"),
            (Reason::WaitExceedsBudget, Safety::Idempotent, "try-later"),
            (Reason::RetryQuotaExhausted, Safety::Idempotent, "try-later"),
            (Reason::AttemptTimeout, Safety::Idempotent, "try-later"),
            (Reason::AttemptTimeout, Safety::Unsafe, "failed"),
            (Reason::Deadline, Safety::Keyed, "try-later"),
            (Reason::Deadline, Safety::Unsafe, "failed"),
            (Reason::MaybeDelivered, Safety::Unsafe, "failed"),
            (Reason::HttpStop, Safety::Idempotent, "failed"),
            (Reason::BodyTooLarge, Safety::Idempotent, "failed"),
        ];
        for (reason, safety, name) in table {
            assert_eq!(Phase::terminal(reason, None, safety, None).name(), name, "{reason:?} {safety:?}");
            assert!(!message(reason).is_empty());
        }
    }

    #[test]
    fn only_a_deliberately_unfollowed_redirect_is_described_as_one() {
        let stop = |safety, status| Phase::terminal(Reason::HttpStop, None, safety, Some(status));
        for status in [0, 307, 303] {
            assert!(phase_message(&stop(Safety::Unsafe, status), Reason::HttpStop).contains("redirected"));
        }
        assert!(phase_message(&stop(Safety::Keyed, 307), Reason::HttpStop).contains("redirected"));
        let not_modified = stop(Safety::Idempotent, 304);
        assert_eq!(phase_message(&not_modified, Reason::HttpStop), message(Reason::HttpStop));
        assert_eq!(phase_message(&stop(Safety::Unsafe, 404), Reason::HttpStop), message(Reason::HttpStop));
    }

    /// The states `subscribe` shows (README): `retryAt` of `try-later` is
    /// `null` when unknown, never absent; a terminal state carries its
    /// sentence.
    #[test]
    fn states_serialize_to_their_public_shape() {
        use serde_json::json;
        let shown = |p: Phase| serde_json::to_value(p).unwrap();
        assert_eq!(
            shown(Phase::Requesting { attempt: 2, max: 3 }),
            json!({ "state": "requesting", "attempt": 2, "maxAttempts": 3 })
        );
        assert_eq!(
            shown(Phase::Waiting { attempt: 2, until_ms: 1_000, wait_ms: 50, why: WaitWhy::RetryAfter }),
            json!({ "state": "waiting", "attempt": 2, "until": 1_000.0, "waitMs": 50.0, "why": "retry-after" })
        );
        let later = Phase::TryLater { retry_at: None, reason: Reason::AttemptsExhausted };
        assert_eq!(
            shown(later),
            json!({ "state": "try-later", "retryAt": null, "reason": "attempts-exhausted",
                    "message": message(Reason::AttemptsExhausted) })
        );
        let redirect = Phase::Failed { reason: Reason::HttpStop, redirect: true };
        assert_eq!(
            shown(redirect),
            json!({ "state": "failed", "reason": "http-stop", "message": phase_message(&redirect, Reason::HttpStop) })
        );
        assert_eq!(shown(Phase::Succeeded), json!({ "state": "succeeded" }));
        assert_eq!(shown(Phase::Cancelled), json!({ "state": "cancelled" }));
    }

    #[test]
    fn a_terminal_state_never_changes() {
        let mut m = StateMachine::default();
        assert_eq!(m.advance(Phase::Requesting { attempt: 1, max: 3 }).map(|p| p.name()), Some("requesting"));
        assert_eq!(m.advance(Phase::Idle), None);
        assert!(m.advance(Phase::Cancelled).is_some());
        assert_eq!(m.advance(Phase::Succeeded), None);
        assert_eq!(m.advance(Phase::Requesting { attempt: 2, max: 3 }), None);
        assert_eq!(m.phase(), Phase::Cancelled);
    }
}
