//! wasm32 only: translates between JavaScript and the policy.
