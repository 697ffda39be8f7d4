//! The retry quota: a token bucket shared by every call of one policy.
//!
//! Why a budget beats a fixed retry count: "3 attempts per call" triples the
//! load on a server that is already failing, exactly when it can least take
//! it. A token bucket shared by all calls lets a healthy system retry freely
//! (successes refill it) and makes a failing one fall back to first attempts
//! only, so amplification tends to 1x instead of `maxAttempts`x.

use core::cell::Cell;
use serde::Serialize;

/// Retry quota settings (the AWS SDK's standard retry quota).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaConfig {
    pub capacity: u32,
    pub retry_cost: u32,
    pub timeout_cost: u32,
    /// Refilled by a success that needed no retry.
    pub success_refund: u32,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        QuotaConfig { capacity: 500, retry_cost: 5, timeout_cost: 10, success_refund: 1 }
    }
}

/// A token bucket: retries spend, successes refund, first attempts are free.
#[derive(Debug)]
pub struct Quota {
    config: QuotaConfig,
    level: Cell<u32>,
}

impl Quota {
    pub fn new(config: QuotaConfig) -> Quota {
        Quota { config, level: Cell::new(config.capacity) }
    }

    pub fn level(&self) -> u32 {
        self.level.get()
    }

    /// Back to a saved level (a restarted authority), at most the capacity.
    pub fn restore_level(&self, level: u32) {
        self.level.set(level.min(self.config.capacity));
    }

    /// The cost of a retry after this kind of failure.
    pub fn cost(&self, after_timeout: bool) -> u32 {
        if after_timeout {
            self.config.timeout_cost
        } else {
            self.config.retry_cost
        }
    }

    /// Takes `cost` tokens if they are there.
    pub fn try_spend(&self, cost: u32) -> bool {
        match self.level.get().checked_sub(cost) {
            Some(rest) => {
                self.level.set(rest);
                true
            }
            None => false,
        }
    }

    /// After a success: refund the last retry's cost, or the small
    /// success refund when the operation needed no retry.
    pub fn on_success(&self, last_retry_cost: Option<u32>) {
        let refund = last_retry_cost.unwrap_or(self.config.success_refund);
        let level = self.level.get().saturating_add(refund).min(self.config.capacity);
        self.level.set(level);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_spend_and_an_empty_bucket_refuses() {
        let q = Quota::new(QuotaConfig { capacity: 12, ..QuotaConfig::default() });
        assert!(q.try_spend(q.cost(false)));
        assert_eq!(q.level(), 7);
        assert!(!q.try_spend(q.cost(true)), "a timeout retry costs 10");
        assert_eq!(q.level(), 7, "a refused spend takes nothing");
        assert!(q.try_spend(5) && !q.try_spend(5));
        assert_eq!(q.level(), 2);
    }

    #[test]
    fn successes_refill_up_to_capacity() {
        let q = Quota::new(QuotaConfig::default());
        assert!(q.try_spend(10));
        q.on_success(Some(10));
        assert_eq!(q.level(), 500);
        assert!(q.try_spend(5));
        q.on_success(None);
        assert_eq!(q.level(), 496);
        for _ in 0..10 {
            q.on_success(None);
        }
        assert_eq!(q.level(), 500);
    }
}
