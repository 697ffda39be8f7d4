//! Spike (issue 19 item 4): the sans-IO shape. The same engine, driven as a
//! synchronous state machine from JavaScript instead of as a future run by
//! wasm-bindgen-futures.
//!
//! [`engine::run`](crate::engine::run) is generic over a `Transport` and a
//! `Clock`. Here both are *mailboxes* ([`machine`]): sending an attempt or
//! sleeping registers what the loop is waiting for and stays pending until
//! JavaScript reports what happened (`onResponse`, `onError`, `onTimer`,
//! `onAbort`). After each report the machine polls the engine's future once,
//! with a no-op waker, and answers the next action: fetch (with the
//! attempt's timer), sleep, done or fail. So every decision is the engine's
//! and the policy's, unchanged, and the wasm module holds no futures
//! machinery, no timers and no JS objects: a small JS executor
//! (`spike/src/executor.js`) performs each action.
//!
//! Built as its own wasm module (`--features sansio`, `SANSIO=1 scripts/build.sh`);
//! the package's modules do not contain it.

pub mod machine;

#[cfg(target_arch = "wasm32")]
mod exports;

// The shipped host's one conversion of option errors to JS errors and of
// results to JS values, reused as they are.
#[cfg(target_arch = "wasm32")]
#[path = "host/convert.rs"]
mod convert;
#[cfg(target_arch = "wasm32")]
#[path = "host/error.rs"]
mod error;
