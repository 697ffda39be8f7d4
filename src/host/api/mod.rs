//! The default module's exports (`Policy` and its calls): `exports`
//! starts each operation as a machine and answers its stats; `options`
//! and `read` read the caller's options against `policy::schema` (`read`'s
//! `checkOptions` every other options object, a `policy.poll()`'s spec
//! among them); `leased` is a policy's shared budget, reached by number in
//! the fleet's module.
//!
//! Imports: `shared`, `operation`, `attempt`. Imported by nothing: the
//! exports are the top.

mod exports;
pub(super) mod leased;
pub(super) mod options;
pub(super) mod read;
