//! The fleet's module (`--features authority`): the policies' leased
//! clients (`fleet`: a policy with a shared budget reaches its client
//! here by number), the authority (`authority`, `BudgetAuthority`) and the
//! readers of lease requests and saved state (`wire`); with `--features
//! redis`, the Redis budget's read–decide–write loop (`redis`) under its
//! own time limits (`expiry`).
//!
//! Imports: `shared` only (the default module's folders are not built
//! here). Imported by nothing: JavaScript reaches it through its exports.

mod authority;
#[cfg(feature = "redis")]
mod expiry;
mod fleet;
#[cfg(feature = "redis")]
mod redis;
mod wire;
