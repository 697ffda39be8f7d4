//! One attempt's mechanics (the default module's): `request` prepares the
//! caller's request once per operation (its method, key, replayable
//! body); `transport` runs one attempt as steps of the mailbox (`fetch`,
//! the body as `policy::body` decides) and hands a response over;
//! `replay` keeps a streamed body for the next attempt; `hops` follows
//! redirects hop by hop where `policy::redirect` says we do, over the
//! mailbox's `operation::chain` (`nohops` in its place in the browser's
//! module, `--features browser`); `failure` classifies a step's failure
//! for both the attempt and its hops.
//!
//! Imports: `shared` and `operation` (the mailbox, `glue`, `chain`).
//! Imported by `api` only (the exports run attempts; `options` reads the
//! caller's idempotency key into `request::Key`).

pub(super) mod failure;
#[cfg(not(feature = "browser"))]
pub(super) mod hops;
#[cfg(feature = "browser")]
#[path = "nohops.rs"]
pub(super) mod hops;
pub(super) mod replay;
pub(super) mod request;
pub(super) mod transport;
