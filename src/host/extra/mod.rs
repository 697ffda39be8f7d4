//! The modules loaded at a first use, each alone: the durable outbox's
//! rules (`outbox`, `--features outbox`, `OutboxRules`) and
//! submit-then-poll's loop (`poller`, `--features poll`, `Poller`).
//!
//! Imports: `shared` only. Imported by nothing: JavaScript reaches each
//! through its exports.

#[cfg(feature = "outbox")]
mod outbox;
#[cfg(feature = "poll")]
mod poller;
