//! The retry quota against a model: the level is what the model says and
//! stays in `[0, capacity]` whatever is spent or refunded.

use saferetry::policy::budget::quota::{Quota, QuotaConfig};
use saferetry::policy::budget::{InMemory, SharedState};

/// One thing an operation does to the quota.
#[derive(Debug, Clone, Copy)]
pub enum QuotaOp {
    /// Pays for a retry after a timeout (`true`) or another failure.
    Spend(bool),
    /// A success, refunding what its last retry cost (or the small refund).
    Success(Option<u32>),
}

pub fn check(config: QuotaConfig, ops: &[QuotaOp]) {
    let quota = Quota::new(config);
    let shared = InMemory::new(Some(config), None);
    let mut model = u64::from(config.capacity);
    for &op in ops {
        match op {
            QuotaOp::Spend(after_timeout) => {
                let cost = if after_timeout { config.timeout_cost } else { config.retry_cost };
                assert_eq!(quota.cost(after_timeout), cost);
                let affordable = u64::from(cost) <= model;
                if affordable {
                    model -= u64::from(cost);
                }
                assert_eq!(quota.try_spend(cost), affordable, "spend {cost} at {model}");
                assert_eq!(shared.spend_retry(after_timeout), affordable.then_some(cost));
            }
            QuotaOp::Success(last_cost) => {
                let refund = last_cost.unwrap_or(config.success_refund);
                model = (model + u64::from(refund)).min(u64::from(config.capacity));
                quota.on_success(last_cost);
                shared.on_success(last_cost);
            }
        }
        assert_eq!(u64::from(quota.level()), model, "after {op:?}");
        assert_eq!(shared.quota_level(), Some(quota.level()));
        assert!(quota.level() <= config.capacity);
    }
}
