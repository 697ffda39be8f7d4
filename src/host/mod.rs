//! wasm32 only: translates between JavaScript and the policy.
//!
//! Nothing here decides anything: it reads JS values into policy data,
//! drives `fetch` and timers for the engine, and writes the engine's results
//! back as JS values.
//!
//! One crate, two wasm modules (DESIGN §3, "Pay for what you use"): the
//! default build exports the policy, the engine, the host and the leased
//! client (`Policy`); `--features authority` builds the fleet's authority
//! alone (`BudgetAuthority`, the readers of lease requests and of its saved
//! state), which only `saferetry/cloudflare`, a leader tab and
//! `import { BudgetAuthority }` load. Each module links only what its
//! exports reach; the helpers the two share are compiled into both.

#[cfg(feature = "authority")]
mod authority;
#[cfg_attr(feature = "authority", allow(dead_code))]
mod bind;
#[cfg_attr(feature = "authority", allow(dead_code))]
mod caller;
#[cfg_attr(feature = "authority", allow(dead_code))]
mod convert;
mod error;
mod wire;

#[cfg(not(feature = "authority"))]
mod clock;
#[cfg(not(feature = "authority"))]
mod exports;
#[cfg(not(feature = "authority"))]
mod fleet;
#[cfg(not(feature = "authority"))]
mod glue;
#[cfg(not(feature = "authority"))]
mod handover;
#[cfg(not(feature = "authority"))]
mod hops;
#[cfg(not(feature = "authority"))]
mod options;
#[cfg(not(feature = "authority"))]
mod outcome;
#[cfg(not(feature = "authority"))]
mod poll;
#[cfg(not(feature = "authority"))]
mod props;
#[cfg(not(feature = "authority"))]
mod replay;
#[cfg(not(feature = "authority"))]
mod request;
#[cfg(not(feature = "authority"))]
mod transport;
