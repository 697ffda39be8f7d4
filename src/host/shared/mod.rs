//! What every one of the six modules shares: calling into JavaScript and
//! reading its values (`bind`: `Reflect.get`, `Date.now`, `Math.random`, a
//! settled promise; `caller`: arrays of the caller's values), writing the
//! policy's values back (`convert`: numbers for the default and browser
//! modules, JSON text for the fleet's and the outbox's; `error`: an option's
//! `TypeError`/`RangeError`). They are here, not in a module's folder,
//! because the default module, the fleet's, the outbox's and the poll's
//! all link them (each only what its exports reach).
//!
//! Imports: nothing of `host` (only `crate::json` and `crate::policy`);
//! every other folder of `host` may import it.

#[cfg_attr(any(feature = "authority", feature = "outbox", feature = "poll"), allow(dead_code))]
pub(super) mod bind;
#[cfg(not(feature = "poll"))]
#[cfg_attr(any(feature = "authority", feature = "outbox"), allow(dead_code))]
pub(super) mod caller;
#[cfg_attr(any(feature = "authority", feature = "outbox", feature = "poll"), allow(dead_code))]
pub(super) mod convert;
mod error;
