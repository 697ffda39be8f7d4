//! saferetry: retry an HTTP request only when repeating it is proven safe.
//!
//! The crate has two halves (see DESIGN §3):
//! - [`policy`] and [`engine`] are pure Rust: every decision is a function of
//!   data (the outcome of an attempt, the request's safety, the options, the
//!   clock's `now` and an injected random number). They run natively, on
//!   virtual time, in the tests.
//! - `host` (wasm32 only) translates between JavaScript and that data: each
//!   operation runs as a sans-IO machine (`host::machine`) that JS drives
//!   with events (a promise settled, a timer fired, the caller's abort) and
//!   that answers the work to do next; the executor (js/src/executor.js)
//!   performs it and decides nothing.
//!
//! The wasm build uses `std` (serde-wasm-bindgen and the machine's wakers need it)
//! with `panic = "abort"`: the shipped code has no panicking paths, and a
//! panic would trap the module for every later call.

extern crate alloc;

pub mod engine;
pub mod json;
pub mod packed;
pub mod policy;

#[cfg(target_arch = "wasm32")]
mod host;

/// talc instead of std's dlmalloc: the same job in a fifth of the code
/// (the module is 2.6 KB gzip smaller; BENCHMARKS.md).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
