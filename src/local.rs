//! One value per module instance, where the crate has no `std` and so no
//! `thread_local!` (the shipped wasm modules, `src/lib.rs`).
//!
//! A wasm module built without the `atomics` feature runs on one thread:
//! nothing else can see the value while a closure given to [`Local::with`]
//! runs, which is all `thread_local!` promised here.

#[cfg(target_feature = "atomics")]
compile_error!("saferetry's wasm modules are single-threaded: build them without the atomics feature");

pub struct Local<T>(T);

// SAFETY: the module has one thread (no `atomics`: checked above), so the
// value is never shared between threads.
unsafe impl<T> Sync for Local<T> {}

impl<T> Local<T> {
    pub const fn new(value: T) -> Local<T> {
        Local(value)
    }

    /// `thread_local!`'s `with`.
    pub fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0)
    }
}
