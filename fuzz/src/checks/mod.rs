//! Invariants of `saferetry::policy`, one module per area. Each check takes
//! typed input, runs the policy, and panics (`assert!`) when an invariant
//! breaks: libFuzzer records the panic as a crash, proptest shrinks it.
//!
//! This directory is compiled twice: as the fuzz crate's library, and
//! included by `#[path]` from `tests/invariants.rs`. It depends on nothing
//! but `saferetry` and `std`, so both builds see the same code.

pub mod backoff_limits;
pub mod classify_options;
pub mod http_date;
pub mod plain;
pub mod quota;
pub mod rate;
pub mod rate_limit;
pub mod retry_after;
