//! wasm32 only: translates between JavaScript and the policy.
//!
//! Nothing here decides anything: it reads JS values into policy data,
//! drives `fetch` and timers for the engine, and writes the engine's results
//! back as JS values.

mod authority;
mod bind;
mod caller;
mod clock;
mod convert;
mod error;
mod exports;
mod fleet;
mod handover;
mod hops;
mod options;
mod poll;
mod props;
mod replay;
mod request;
mod transport;
mod wire;
