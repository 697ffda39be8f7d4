//! Pure decisions, as data in and data out. Nothing here knows JavaScript,
//! reads a clock or draws a random number: `now` and `random` are parameters,
//! so every rule is exact under test.

pub mod backoff;
pub mod body;
pub mod budget;
pub mod classify;
pub mod limits;
pub mod options;
pub mod poll;
pub mod rate_limit;
pub mod reason;
pub mod redirect;
pub mod report;
pub mod retry;
pub mod retry_after;
pub mod runtime;
pub mod state;
