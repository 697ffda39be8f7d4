//! saferetry: retry an HTTP request only when repeating it is proven safe.
//!
//! The crate has two halves (see DESIGN §3; "DESIGN rule N" and "DESIGN
//! §N" in this crate's comments are docs/design.md's, the design contract):
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
//! The shipped wasm modules are `no_std` (alloc, with talc as the
//! allocator, lol_alloc in a page's) and trap on a panic: the shipped code
//! has no panicking paths, a panic would trap the module for every later
//! call anyway, and without `std` no panic or allocation-failure message
//! is formatted, so no `core::fmt` is linked (docs/development.md "The
//! stack"). The feature `std` (the wasm test builds, whose harness needs
//! it, and the Redis module, whose gloo-timers brings it) links `std` and
//! its own panic handler instead.

#![cfg_attr(all(target_arch = "wasm32", not(feature = "std"), not(test)), no_std)]

extern crate alloc;

pub mod engine;
pub mod json;
pub mod packed;
pub mod policy;

#[cfg(target_arch = "wasm32")]
mod host;
#[cfg(target_arch = "wasm32")]
#[cfg_attr(any(feature = "authority", feature = "outbox", feature = "poll"), allow(dead_code))]
mod local;

/// A panic traps (no message is formatted): no shipped path panics.
#[cfg(all(target_arch = "wasm32", not(feature = "std"), not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

/// talc instead of std's dlmalloc: the same job in a fifth of the code
/// (the module is 2.6 KB gzip smaller; BENCHMARKS.md).
#[cfg(all(target_arch = "wasm32", not(feature = "browser")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// A page's module (bytes first: issue 37) allocates from one free list,
/// sorted by address and coalesced on free (lol_alloc): half of talc's
/// code, 0.6 KB gzip less for a page. Its walks are linear in the free
/// list, which a page's calls keep short: a successful call, a retried
/// one and 900 calls at once measured the same µs per call and the same
/// memory as talc (BENCHMARKS.md "The page's allocator").
#[cfg(all(target_arch = "wasm32", feature = "browser"))]
#[global_allocator]
// SAFETY: a wasm module of ours runs on one thread (no shared memory, no
// atomics): nothing allocates from two threads at once.
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };
