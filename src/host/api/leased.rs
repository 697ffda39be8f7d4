//! A shared budget (rule 9) as the page's module sees it: the policy's
//! [`SharedState`] when it has one. Its leased client — the rules that
//! spend grants, refill them ahead of need, fall back, release — runs in
//! the fleet's module (`crate::host::lease::fleet`, with the authority), which only a
//! policy with a shared budget loads: a page that never shares a budget
//! carries none of it (docs/fleet-budgets.md "Fleet budgets", "Architecture").
//!
//! Each budget call is one crossing by number (`policy::budget::lease::link`):
//! the glue's `leaseCall` (js/src/lease.js, lease-relay.js) relays it to the client's
//! module and its answer back, or answers NaN while there is no client.
//! Where the fleet's module loads synchronously (Node, Deno, Bun, workerd)
//! the client is there when the policy is made. In a browser it is fetched
//! when the policy is made (`tabBudget`, js/src/tabs.js), and until it is
//! there, or if it cannot load, the policy keeps the budget
//! `link::unlinked` says in memory: the documented fallback while it
//! loads, a budget of its own if it failed.

use alloc::rc::Rc;
use alloc::string::String;
use core::cell::OnceCell;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::host::operation::glue::{Glue, Held};
use crate::policy::backoff::BadRandom;
use crate::policy::budget::lease::link::{self, Unlinked};
use crate::policy::budget::quota::QuotaConfig;
use crate::policy::budget::rate::RateConfig;
use crate::policy::budget::{InMemory, Mode, SharedState};
use crate::policy::options::Options;
use crate::policy::throttle::{Admit, ThrottleConfig};

/// What `shared` gave: where requests go, and the label `stats()` shows.
/// Its functions are the executor's to hold and call, as `shared`'s
/// methods (`crate::host::operation::glue::Held::keep`), by number from the client.
#[derive(Clone)]
pub struct Exchange {
    pub function: Rc<Held>,
    /// `shared.attach(release)`, when the carrier has it: called once with
    /// a function that gives the policy's held tokens back at once (a tab
    /// budget calls it as its tab leaves).
    pub attach: Option<Rc<Held>>,
    pub scope: Option<String>,
}

pub struct Leased {
    /// The relay's number for this policy's client.
    handle: u32,
    glue: Glue,
    /// Held while the policy lives: the client calls them by number.
    exchange: Exchange,
    /// The policy's quota, rate, fleet size and throttle (for the budget of
    /// its own).
    config: (Option<QuotaConfig>, Option<RateConfig>, u32, Option<ThrottleConfig>),
    /// The budget while the client's module loads.
    loading: InMemory,
    /// Once it could not load: a budget of its own, and why.
    failed: OnceCell<(InMemory, String)>,
}

impl Leased {
    /// Has the relay find the fleet's module for `exchange`'s carrier and
    /// open a client there (now, or once the module has loaded).
    pub fn new(options: &Options, exchange: Exchange, glue: &Glue) -> Leased {
        let (quota, rate, fleet_size) = (options.quota, options.rate, options.fleet_size);
        let attach = exchange.attach.as_ref().map_or(0, |a| a.id());
        let [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9] = link::pack(quota, rate, options.throttle, fleet_size);
        let handle = glue.lease_open(exchange.function.id(), attach, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9);
        let (quota, rate) = link::unlinked(quota, rate, fleet_size, Unlinked::Loading);
        Leased {
            handle,
            glue: JsValue::clone(glue).unchecked_into(),
            exchange,
            config: (options.quota, options.rate, options.fleet_size, options.throttle),
            loading: InMemory::new(quota, rate),
            failed: OnceCell::new(),
        }
    }

    /// `op` answered by the client (`link`), else the budget kept while
    /// there is none. (Not inlined: one copy for every budget call.)
    #[inline(never)]
    fn ask(&self, op: u32, a: f64, b: f64) -> Result<f64, &InMemory> {
        if let Some((own, _)) = self.failed.get() {
            return Err(own);
        }
        let answer = self.glue.lease_call(self.handle, op, a, b);
        if !answer.is_nan() {
            return Ok(answer);
        }
        match self.glue.lease_value(self.handle, link::STATS, None).as_string() {
            None => Err(&self.loading),
            Some(reason) => {
                let (quota, rate, fleet_size, throttle) = self.config;
                let (quota, rate) = link::unlinked(quota, rate, fleet_size, Unlinked::Failed);
                Err(&self.failed.get_or_init(|| (InMemory::new(quota, rate).throttled(throttle), reason)).0)
            }
        }
    }

    /// The relay's number for this policy's client: `stats()` asks it for
    /// the client's stats (js/src/lease.js `sharedStats`).
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The label `stats().shared` shows, when `shared` gave one.
    pub fn scope(&self) -> Option<&str> {
        self.exchange.scope.as_deref()
    }

    /// The budget's mode, for a report: the client's, or `fallback`
    /// without one.
    pub fn mode(&self) -> Option<Mode> {
        self.ask(link::MODE, 0.0, 0.0).map_or(Some(Mode::Fallback), link::mode_back)
    }

    /// Gives every held token back (`policy.release()`): calls `done` when
    /// the authority answered or the client gave up; at once without a
    /// client.
    pub fn release(&self, done: &Function) {
        self.glue.lease_value(self.handle, link::RELEASE, Some(done));
    }
}

impl Drop for Leased {
    fn drop(&mut self) {
        self.glue.lease_value(self.handle, link::CLOSE, None);
    }
}

impl SharedState for Leased {
    fn spend_retry(&self, after_timeout: bool) -> Option<u32> {
        match self.ask(link::SPEND, f64::from(u8::from(after_timeout)), 0.0) {
            Ok(answer) => link::count_back(answer),
            Err(alone) => alone.spend_retry(after_timeout),
        }
    }

    fn on_success(&self, last_retry_cost: Option<u32>) {
        if let Err(alone) = self.ask(link::SUCCESS, link::count(last_retry_cost), 0.0) {
            alone.on_success(last_retry_cost);
        }
    }

    fn quota_level(&self) -> Option<u32> {
        match self.ask(link::LEVEL, 0.0, 0.0) {
            Ok(answer) => link::count_back(answer),
            Err(alone) => alone.quota_level(),
        }
    }

    fn reserve_start(&self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        match self.ask(link::RESERVE, link::ms(now_ms), link::ms(latest_ms)) {
            Ok(answer) => link::start_back(answer),
            Err(alone) => alone.reserve_start(now_ms, latest_ms),
        }
    }

    fn release_start(&self, start_ms: u64) {
        if let Err(alone) = self.ask(link::RELEASE_START, link::ms(start_ms), 0.0) {
            alone.release_start(start_ms);
        }
    }

    fn keep_start(&self, start_ms: u64, now_ms: u64) -> bool {
        match self.ask(link::KEEP, link::ms(start_ms), link::ms(now_ms)) {
            Ok(answer) => answer != 0.0,
            Err(alone) => alone.keep_start(start_ms, now_ms),
        }
    }

    /// The fleet's window decides (in its module); a random is drawn only
    /// when the client says it needs one (`link::ADMIT`).
    fn admit(&self, now_ms: u64, random: &mut dyn FnMut() -> f64) -> Result<Admit, BadRandom> {
        let now = link::ms(now_ms);
        let answer = match self.ask(link::ADMIT, now, link::NO_RANDOM) {
            Ok(needs) if needs == link::NO_RANDOM => self.ask(link::ADMIT, now, random()),
            other => other,
        };
        match answer {
            Ok(answer) => link::admitted_back(answer),
            Err(alone) => alone.admit(now_ms, random),
        }
    }

    fn sent(&self, now_ms: u64) {
        if let Err(alone) = self.ask(link::SENT, link::ms(now_ms), 0.0) {
            alone.sent(now_ms);
        }
    }

    fn answered(&self, now_ms: u64, accepted: bool, floor: Option<u64>) {
        let at = floor.unwrap_or(0);
        let outcome = link::start(if accepted { Ok(at) } else { Err(at) });
        if let Err(alone) = self.ask(link::ANSWERED, link::ms(now_ms), outcome) {
            alone.answered(now_ms, accepted, floor);
        }
    }
}
