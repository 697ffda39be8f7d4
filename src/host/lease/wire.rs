//! Reads the fleet's plain messages back from JavaScript: a lease request
//! (into `BudgetAuthority.grant`), a grant (out of `shared.exchange`), an
//! authority's saved state (into `restore`), all in the fleet's module
//! (`--features authority`: the authority and the leased client, a module
//! of its own: see `host`). They come from caller code
//! (an exchange, storage), so they are read like options, field by field
//! through `catch` getters, every integer checked to be one in range.
//!
//! Why not serde-wasm-bindgen's `from_value`, which writes these values
//! out: its errors format the value they refused, which links Rust's float
//! formatting into the module: measured with `scripts/build.sh`, the
//! package was 110.8 KB gzip with `Deserialize` derived for these types and
//! 89.1 KB with these readers.

use alloc::string::String;
use js_sys::TypeError;
use wasm_bindgen::JsValue;

use alloc::vec::Vec;

use crate::host::shared::bind::get;
use crate::host::shared::caller::list;
use crate::policy::budget::lease::{
    AuthorityState, AuthorityStats, FleetConfig, FleetWindow, Grant, HolderState, LeaseRequest,
    ThrottleReport,
};
use crate::policy::budget::quota::QuotaConfig;
use crate::policy::budget::rate::RateConfig;
use crate::policy::number::integer_in;
use crate::policy::throttle::{Counts, WindowState, BUCKETS, MAX_WINDOW_MS, MIN_WINDOW_MS};

/// A field that is not what it must be: `object.key`.
pub struct Malformed {
    pub object: &'static str,
    pub key: &'static str,
    pub expected: &'static str,
}

impl From<Malformed> for JsValue {
    fn from(e: Malformed) -> JsValue {
        let mut message = String::from("saferetry: `");
        message.push_str(e.object);
        if !e.key.is_empty() {
            message.push('.');
            message.push_str(e.key);
        }
        message.push_str("` must be ");
        message.push_str(e.expected);
        TypeError::new(&message).into()
    }
}

const SAFE: u64 = 9_007_199_254_740_991;

/// One object's fields.
struct Fields<'a> {
    js: &'a JsValue,
    object: &'static str,
}

impl Fields<'_> {
    fn of<'a>(js: &'a JsValue, object: &'static str) -> Result<Fields<'a>, Malformed> {
        if js.is_object() {
            Ok(Fields { js, object })
        } else {
            Err(Malformed { object, key: "", expected: "an object" })
        }
    }

    fn wrong(&self, key: &'static str, expected: &'static str) -> Malformed {
        Malformed { object: self.object, key, expected }
    }

    fn int(&self, key: &'static str) -> Result<u64, Malformed> {
        let v = get(self.js, key).as_f64().and_then(|n| integer_in(n, 0, SAFE));
        v.ok_or(self.wrong(key, "an integer in 0..=2^53-1"))
    }

    fn small(&self, key: &'static str) -> Result<u32, Malformed> {
        let v = get(self.js, key).as_f64().and_then(|n| integer_in(n, 0, u64::from(u32::MAX)));
        v.and_then(|n| u32::try_from(n).ok()).ok_or(self.wrong(key, "an integer in 0..=4294967295"))
    }

    /// `K` (`throttle.k`): a number in 1..=100.
    fn k(&self, key: &'static str) -> Result<f64, Malformed> {
        let v = get(self.js, key).as_f64().filter(|n| (1.0..=100.0).contains(n));
        v.ok_or(self.wrong(key, "a number in 1..=100"))
    }

    fn flag(&self, key: &'static str) -> Result<bool, Malformed> {
        get(self.js, key).as_bool().ok_or(self.wrong(key, "a boolean"))
    }

    /// `null` or missing is `None`.
    fn maybe<T>(
        &self,
        key: &'static str,
        read: impl FnOnce(&JsValue) -> Result<T, Malformed>,
    ) -> Result<Option<T>, Malformed> {
        let v = get(self.js, key);
        if v.is_null() || v.is_undefined() {
            Ok(None)
        } else {
            read(&v).map(Some)
        }
    }
}

pub fn request(js: &JsValue) -> Result<LeaseRequest, Malformed> {
    let f = Fields::of(js, "request")?;
    Ok(LeaseRequest {
        client: f.int("client")?,
        seq: f.int("seq")?,
        want_tokens: f.small("wantTokens")?,
        holding_tokens: f.small("holdingTokens")?,
        returned_total: f.int("returnedTotal")?,
        refunded_total: f.int("refundedTotal")?,
        // Absent from a client of an older version: nothing reported spent.
        spent_total: f.maybe("spentTotal", |_| f.int("spentTotal"))?.unwrap_or(0),
        want_slots: f.small("wantSlots")?,
        // Absent from a client of an older version: not known to hold one.
        leased: f.maybe("leased", |_| f.flag("leased"))?.unwrap_or(false),
        config: config(&get(js, "config"), "request.config")?,
        // Absent from a client of an older version, or one that does not
        // throttle: no counts.
        throttle: f.maybe("throttle", |t| {
            let t = Fields::of(t, "request.throttle")?;
            let window_ms = t.int("windowMs")?;
            if !(u64::from(MIN_WINDOW_MS)..=MAX_WINDOW_MS).contains(&window_ms) {
                return Err(t.wrong("windowMs", "an integer in 10..=600000"));
            }
            Ok(ThrottleReport {
                k: t.k("k")?,
                window_ms,
                requests: t.int("requests")?,
                accepts: t.int("accepts")?,
            })
        })?,
    })
}

/// What `shared.exchange` answered: the authority's grant, or the
/// carrier's word that no authority can run for this client
/// (`{ unavailable: reason }`, a tab that cannot load the authority's
/// module), with its reason.
pub enum Answer {
    Grant(Grant),
    Unavailable(String),
}

pub fn answer(js: &JsValue) -> Result<Answer, Malformed> {
    match crate::host::shared::bind::get_string(js, "unavailable") {
        Some(reason) => Ok(Answer::Unavailable(reason)),
        None => grant(js).map(Answer::Grant),
    }
}

fn grant(js: &JsValue) -> Result<Grant, Malformed> {
    let f = Fields::of(js, "grant")?;
    Ok(Grant {
        client: f.int("client")?,
        seq: f.int("seq")?,
        duplicate: f.flag("duplicate")?,
        tokens: f.small("tokens")?,
        slots: f.small("slots")?,
        first_slot_ms: f.int("firstSlotMs")?,
        last_slot_ms: f.int("lastSlotMs")?,
        ttl_ms: f.int("ttlMs")?,
        // Absent from an authority of an older version, or to a request
        // without counts: no picture of the fleet's window.
        window: f.maybe("window", |w| {
            let w = Fields::of(w, "grant.window")?;
            Ok(FleetWindow {
                requests: w.int("requests")?,
                accepts: w.int("accepts")?,
                retry_ms: w.int("retryMs")?,
            })
        })?,
    })
}

pub fn config(js: &JsValue, object: &'static str) -> Result<FleetConfig, Malformed> {
    let f = Fields::of(js, object)?;
    let quota = f.maybe("quota", |q| {
        let q = Fields::of(q, "config.quota")?;
        Ok(QuotaConfig {
            capacity: q.small("capacity")?,
            retry_cost: q.small("retryCost")?,
            timeout_cost: q.small("timeoutCost")?,
            success_refund: q.small("successRefund")?,
        })
    })?;
    let rate = f.maybe("rate", |r| {
        let r = Fields::of(r, "config.rate")?;
        Ok(RateConfig { requests: r.small("requests")?, per_ms: r.int("perMs")?, burst: r.small("burst")? })
    })?;
    Ok(FleetConfig { quota, rate })
}

pub fn state(js: &JsValue) -> Result<AuthorityState, Malformed> {
    let f = Fields::of(js, "state")?;
    let holders = list(&get(js, "holders"), 100_000).ok_or(f.wrong("holders", "an array"))?;
    let holders = holders.iter().map(|h| holder(&h)).collect::<Result<Vec<_>, _>>()?;
    let stats = get(js, "stats");
    let s = Fields::of(&stats, "state.stats")?;
    Ok(AuthorityState {
        config: config(&get(js, "config"), "state.config")?,
        level: f.maybe("level", |_| f.small("level"))?,
        schedule_ms: f.maybe("scheduleMs", |_| f.int("scheduleMs"))?,
        holders,
        // Absent from a state kept by an older version: as if just resumed.
        resumed_ms: f.maybe("resumedMs", |_| f.int("resumedMs"))?.unwrap_or(0),
        stats: AuthorityStats {
            requests: s.int("requests")?,
            duplicates: s.int("duplicates")?,
            tokens_granted: s.int("tokensGranted")?,
            tokens_credited: s.int("tokensCredited")?,
            tokens_refunded: s.int("tokensRefunded")?,
            tokens_reclaimed: s.maybe("tokensReclaimed", |_| s.int("tokensReclaimed"))?.unwrap_or(0),
            slots_granted: s.int("slotsGranted")?,
            // Absent from a state kept by an older version: none counted.
            differing_configs: s.maybe("differingConfigs", |_| s.int("differingConfigs"))?.unwrap_or(0),
            config_changes: s.maybe("configChanges", |_| s.int("configChanges"))?.unwrap_or(0),
        },
        // Absent from a state kept by an older version: no window yet.
        window: f.maybe("window", |w| {
            let w = Fields::of(w, "state.window")?;
            let buckets = list(&get(w.js, "buckets"), BUCKETS as u32)
                .ok_or(w.wrong("buckets", "an array of at most 10"))?;
            Ok(WindowState {
                window_ms: w.int("windowMs")?,
                head_ms: w.int("headMs")?,
                buckets: buckets
                    .iter()
                    .map(|b| counts(&b, "state.window.buckets[]"))
                    .collect::<Result<Vec<_>, _>>()?,
            })
        })?,
    })
}

fn counts(js: &JsValue, object: &'static str) -> Result<Counts, Malformed> {
    let f = Fields::of(js, object)?;
    Ok(Counts { requests: f.int("requests")?, accepts: f.int("accepts")? })
}

fn holder(js: &JsValue) -> Result<HolderState, Malformed> {
    let f = Fields::of(js, "state.holders[]")?;
    Ok(HolderState {
        client: f.int("client")?,
        last_seq: f.int("lastSeq")?,
        holding: f.small("holding")?,
        returned: f.int("returned")?,
        refunded: f.int("refunded")?,
        // Absent from a state kept by an older version: none known.
        spent: f.maybe("spent", |_| f.int("spent"))?.unwrap_or(0),
        reclaimed: f.maybe("reclaimed", |_| f.small("reclaimed"))?.unwrap_or(0),
        seen_ms: f.int("seenMs")?,
        // Absent from a state kept by an older version: no offer known.
        config: f.maybe("config", |c| config(c, "state.holders[].config"))?.unwrap_or_default(),
        // Absent from a state kept by an older version: not known yet.
        counted: f.maybe("counted", |c| counts(c, "state.holders[].counted"))?,
    })
}
