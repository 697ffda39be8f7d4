//! The browser's module (`--features browser`, `saferetry_web`) in place of
//! `chain.rs`: its attempts never follow redirects hop by hop
//! (`attempt/nohops.rs`), so no chain is ever made or held.

/// What an attempt hands js/src/attempts.js for its hops: never one here.
/// A number, so that `machineChain` answers no lone JS value (see
/// `exports::PolicyStats`).
pub type Chain = u32;

/// An attempt's chain, which this module never starts.
pub enum Followed {}
