//! What an operation is to a submit-then-poll (`policy::poll::Poll`): the
//! submit of a task, or one of its status queries. Both are ordinary
//! operations of the engine ([`super::run`]) on the policy's budgets (its
//! rate limit and concurrency gate); this says how each differs from a
//! plain call. The loop around them is `policy::poll::Poll`, in a module
//! of its own.

use super::Budget;
use crate::policy::options::Options;
use crate::policy::state::Phase;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Plain,
    /// The submit: never repeated unless surely not sent (the
    /// non-idempotent rules), and its success is not the end.
    Submit,
    /// Status query `poll`, with `left_ms` of the polling budget left.
    Query {
        poll: u32,
        left_ms: u64,
    },
}

impl Role {
    /// The role the executor names: 0 a plain call, 1 a submit, `n + 1`
    /// status query `n` (`left_ms`: what is left of the polling budget).
    pub fn of(code: u32, left_ms: u64) -> Role {
        match code {
            0 => Role::Plain,
            1 => Role::Submit,
            n => Role::Query { poll: n.saturating_sub(1), left_ms },
        }
    }

    /// The state a subscriber is shown for the operation's `phase`: a
    /// plain call's every one; a submit's but its success (polling
    /// follows); a query's only its request, as poll `poll`'s (no limit:
    /// `maxAttempts` 0) — the waits between polls and the end are the
    /// poll's own to show.
    pub fn shown(self, phase: Phase) -> Option<Phase> {
        match (self, phase) {
            (Role::Plain, p) => Some(p),
            (Role::Submit, Phase::Succeeded) => None,
            (Role::Submit, p) => Some(p),
            (Role::Query { poll, .. }, Phase::Requesting { .. }) => {
                Some(Phase::Requesting { attempt: poll, max: 0 })
            }
            (Role::Query { .. }, _) => None,
        }
    }

    /// A query's options: one attempt, within what is left of the polling
    /// budget and never longer than `attemptMs`, never throttled (the
    /// submit was asked; a query belongs to its task). `None`: the call's own.
    pub fn options(self, options: &Options) -> Option<Options> {
        let Role::Query { left_ms, .. } = self else {
            return None;
        };
        let mut one = options.clone();
        one.limits.max_attempts = 1;
        one.limits.total_ms = one.limits.attempt_ms.min(left_ms).max(1);
        one.throttle = None;
        Some(one)
    }

    /// A query belongs to its submit's operation: not counted in the
    /// stats (polls are not retries), and its success refills no retry
    /// quota.
    pub fn budget(self, budget: Budget<'_>) -> Budget<'_> {
        match self {
            Role::Query { .. } => Budget { counted: false, quota: false, ..budget },
            _ => budget,
        }
    }

    pub fn is_query(self) -> bool {
        matches!(self, Role::Query { .. })
    }
}
