//! The default module's exports (`Policy` and its calls): `exports`
//! starts each operation as a machine and answers its stats; `options`
//! and `read` read the caller's options against `policy::schema`; `poll`
//! reads a `policy.poll()`'s spec for the poll's module; `leased` is a
//! policy's shared budget, reached by number in the fleet's module.
//!
//! Imports: `shared`, `operation`, `attempt`. Imported by nothing: the
//! exports are the top.

mod exports;
pub(super) mod leased;
pub(super) mod options;
mod poll;
pub(super) mod read;
