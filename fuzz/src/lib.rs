//! The policy's invariants, checked by the fuzz targets in `fuzz_targets/`.
//! The same checks run under proptest in the main crate's
//! `tests/invariants.rs` (which includes `checks/` by path), so CI asserts
//! on every change what the fuzzer asserts for hours.

pub mod checks;
