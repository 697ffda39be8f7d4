//! saferetry: retry an HTTP request only when repeating it is proven safe.
//!
//! The crate has two halves (see DESIGN §3):
//! - [`policy`] and [`engine`] are pure Rust: every decision is a function of
//!   data (the outcome of an attempt, the request's safety, the options, the
//!   clock's `now` and an injected random number). They run natively, on
//!   virtual time, in the tests.
//! - `host` (wasm32 only) translates between JavaScript and that data: it
//!   drives the host's `fetch`, its timers and its `AbortSignal`s.
//!
//! Without the default `std` feature the wasm build is `no_std`: std's
//! formatting and panic machinery is most of a small module's size, and a
//! panic would trap the module for every later call. The shipped code has no
//! panicking paths; the handler below exists only because `no_std` requires
//! one.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod engine;
pub mod policy;

#[cfg(target_arch = "wasm32")]
mod host;

#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
mod bare {
    #[global_allocator]
    static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}
