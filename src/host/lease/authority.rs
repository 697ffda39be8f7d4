//! `BudgetAuthority`: the fleet's authority (`policy::budget::lease`) for
//! whatever runs it in JavaScript — the Durable Object of
//! `saferetry/cloudflare`, the leader tab of `tabBudget`. It configures
//! itself from the `config` each request offers (the policies' own quota
//! and rate): the strictest offered within a grant's lifetime is in force
//! (`FleetConfig::strictest`), so it needs no configuration of its own,
//! follows a redeploy, and no single request can loosen or refill it.

use alloc::string::String;
use wasm_bindgen::prelude::*;

use super::wire;
use crate::host::shared::bind::date_now;
use crate::host::shared::convert::to_js;
use crate::json;
use crate::policy::budget::lease::{Authority, AuthorityConfig, AuthorityState, FleetConfig};
use crate::policy::number::integer_in;
use crate::policy::options::{ErrorKind, OptionError};

const NOW: OptionError = OptionError {
    field: "nowMs",
    expected: "an epoch time in milliseconds (0..=2^53-1), or left out for Date.now()",
    kind: ErrorKind::Range,
};

/// An authority with nothing in force until a request offers it.
pub fn fresh() -> Authority {
    Authority::new(AuthorityConfig::of(FleetConfig::default()))
}

/// An authority that goes on from a saved state, under the config it kept.
pub fn restored(state: &AuthorityState) -> Authority {
    Authority::restore(AuthorityConfig::of(state.config), state)
}

#[wasm_bindgen]
#[derive(Default)]
pub struct BudgetAuthority {
    /// `None` until the first request or restore says what is shared.
    inner: Option<Authority>,
}

#[wasm_bindgen]
impl BudgetAuthority {
    #[wasm_bindgen(constructor)]
    pub fn new() -> BudgetAuthority {
        BudgetAuthority::default()
    }

    /// Answers one client's request (see `LeaseRequest` and `LeaseGrant`
    /// in the types). Throws a `TypeError` naming the field on a malformed
    /// request, a `RangeError` on a bad `nowMs`; the authority is then
    /// unchanged.
    pub fn grant(&mut self, request: JsValue, now_ms: Option<f64>) -> Result<JsValue, JsValue> {
        let now = match now_ms {
            Some(ms) => integer_in(ms, 0, 9_007_199_254_740_991).ok_or(NOW)?,
            None => date_now() as u64,
        };
        let request = wire::request(&request)?;
        let grant = self.inner.get_or_insert_with(fresh).grant(&request, now);
        Ok(to_js(&grant))
    }

    /// A plain snapshot to persist, as JSON text (`undefined` before the
    /// first request). Text, as `config` and `stats`: no export answers a
    /// lone JS value (see `fleet::lease_value`); the JS class of
    /// js/src/authority-api.js parses it.
    pub fn state(&self) -> Option<String> {
        self.inner.as_ref().map(|a| json::to_string(&a.state()))
    }

    /// Goes on from a snapshot of `state()`: the level, the schedule, the
    /// clients. Throws a `TypeError` naming the field on a malformed one.
    pub fn restore(&mut self, state: JsValue) -> Result<(), JsValue> {
        self.inner = Some(restored(&wire::state(&state)?));
        Ok(())
    }

    /// Tokens in the shared bucket (`undefined` without a quota).
    #[wasm_bindgen(getter, js_name = quotaLevel)]
    pub fn quota_level(&self) -> Option<u32> {
        self.inner.as_ref().and_then(Authority::quota_level)
    }

    /// The quota and rate in force (`{ quota, rate }`, each `null` when
    /// none is kept; `undefined` before the first request), as JSON text.
    pub fn config(&self) -> Option<String> {
        self.inner.as_ref().map(|a| json::to_string(&a.config().fleet()))
    }

    /// `{ requests, duplicates, tokensGranted, tokensCredited, tokensRefunded, slotsGranted,
    /// differingConfigs, configChanges }`.
    /// As JSON text.
    pub fn stats(&self) -> String {
        json::to_string(&self.inner.as_ref().map(Authority::stats).unwrap_or_default())
    }
}
