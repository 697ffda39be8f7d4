//! A shared budget's host side (rule 9): the policy's [`LeasedClient`]
//! and the caller's `shared.exchange`, which carries a request to the
//! fleet's authority (a Durable Object, a leader tab) and answers its grant.
//!
//! Nothing here waits and nothing in JS decides. After every budget call
//! the client is asked whether a request is due (`pending_request`); if so
//! it is handed to the executor (js/src/executor.js `exchange`, through the
//! glue), which calls `shared.exchange` as its method in a microtask —
//! never on an operation's path — adopts any thenable as `await` would,
//! sets a timer of the client's `answer_timeout_ms`, and reports whichever
//! comes first to this fleet's [`Lease`]: the answer, the rejection or
//! throw (`onExchange`), or the timer (`onTimer`). The rules are here: an
//! exchange that threw, rejected, answered something that is not a grant,
//! or whose timer fired first is reported to the client as unreachable,
//! and the client falls back as `policy::budget::lease` says; one that
//! answers `{ unavailable: reason }` (no authority can run for this client:
//! a tab that cannot load the authority's module) is reported as such, and
//! `stats().shared.reason` shows the reason.
//!
//! The client itself keeps at most one request in flight and gives up on it
//! after `answer_timeout_ms` by its own clock, so nothing here counts
//! exchanges: in workerd an exchange begun by a request that has ended may
//! never settle, nor its timer fire, and a counter here would then block
//! every later request (DESIGN §3).
//!
//! The module therefore links no futures executor and no timer crate: this
//! used to be a task of its own on wasm-bindgen-futures bounded by a
//! gloo-timers `Timeout`, and a page loaded 3.4 KB gzip more (wasm 73.9 →
//! 70.7 KB, its glue 9.0 → 8.6 KB; README "The stack").

use alloc::rc::{Rc, Weak};
use alloc::string::String;
use core::cell::RefCell;
use js_sys::{Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::bind::{date_now, math_random};
use super::convert::to_js;
use super::glue::{Glue, Held};
use super::wire::{self, Answer};
use crate::policy::budget::lease::{ClientConfig, LeaseRequest, LeasedClient, Mode};
use crate::policy::budget::SharedState;
use crate::policy::limits::timer_ms;
use crate::policy::options::Options;

/// What `shared` gave: where requests go, and the label `stats()` shows.
/// Its functions are the executor's to hold and call, as `shared`'s
/// methods (`super::glue::Held::keep`).
#[derive(Clone)]
pub struct Exchange {
    pub function: Rc<Held>,
    /// `shared.attach(release)`, when the carrier has it: called once with
    /// a function that gives the policy's held tokens back at once (a tab
    /// budget calls it as its tab leaves).
    pub attach: Option<Rc<Held>>,
    pub scope: Option<String>,
}

pub struct Fleet {
    client: LeasedClient,
    exchange: Exchange,
    glue: Glue,
    /// This fleet's [`Lease`], as JS holds it (the executor reports to it).
    lease: JsValue,
    answer_timeout_ms: u64,
    /// Why no authority can run, as the carrier said (until one answers).
    unavailable: RefCell<Option<String>>,
}

fn now_ms() -> u64 {
    date_now() as u64
}

/// Where the executor reports a fleet's exchanges, and what `attach`'s
/// release calls. Weak: neither the carrier (which keeps the release) nor
/// an exchange still out (which may never settle, in workerd) keeps the
/// policy alive; once the policy is gone, a report is ignored.
#[wasm_bindgen]
pub struct Lease(Weak<Fleet>);

#[wasm_bindgen]
impl Lease {
    /// The exchange of request `seq` answered `value` (`ok`), or threw or
    /// rejected with it.
    #[wasm_bindgen(js_name = onExchange)]
    pub fn on_exchange(&self, seq: f64, ok: bool, value: JsValue) {
        if let Some(fleet) = self.0.upgrade() {
            let answer = if ok { wire::answer(&value).ok() } else { None };
            fleet.settle(seq as u64, answer);
        }
    }

    /// The answer timer of request `seq` fired first: unreachable.
    #[wasm_bindgen(js_name = onTimer)]
    pub fn on_timer(&self, seq: f64) {
        if let Some(fleet) = self.0.upgrade() {
            fleet.settle(seq as u64, None);
        }
    }

    /// Gives every held token back (`attach`'s release): as
    /// `policy.release()`.
    pub fn release(&self) -> Promise {
        match self.0.upgrade() {
            Some(fleet) => fleet.release(),
            None => Promise::resolve(&JsValue::UNDEFINED),
        }
    }
}

impl Fleet {
    /// A client with a random 52-bit id (a JS number, unique in practice
    /// among the clients of one budget).
    pub fn new(options: &Options, exchange: Exchange, glue: &Glue) -> Rc<Fleet> {
        let client = (math_random() * 4_503_599_627_370_496.0) as u64;
        let config = ClientConfig::for_policy(client, options.quota, options.rate, options.fleet_size);
        let fleet = Rc::new_cyclic(|weak| Fleet {
            client: LeasedClient::new(config),
            exchange,
            glue: JsValue::clone(glue).unchecked_into(),
            lease: Lease(weak.clone()).into(),
            answer_timeout_ms: config.answer_timeout_ms,
            unavailable: RefCell::new(None),
        });
        if let Some(attach) = &fleet.exchange.attach {
            // A carrier whose `attach` throws still carries requests.
            let _ = fleet.glue.attach(attach.id(), &fleet.lease);
        }
        fleet
    }

    /// Sends the request the client says is due, if any (none while one is
    /// in flight and not yet given up on), in a microtask.
    fn pump(&self) {
        if let Some(request) = self.client.pending_request(now_ms()) {
            let _ = self.send(&request, false);
        }
    }

    /// Gives every held token back: the client's last request, handed to
    /// the carrier before this returns (a page that is going away may run
    /// no task, nor microtask, after the event that released). Resolves
    /// once its answer or its timer was reported.
    pub fn release(&self) -> Promise {
        let request = self.client.release_all(now_ms());
        self.send(&request, true)
    }

    /// Has the executor carry `request` to `shared.exchange` (`now`: before
    /// this returns, else in a microtask) under its answer timer.
    fn send(&self, request: &LeaseRequest, now: bool) -> Promise {
        self.glue.exchange(
            &self.lease,
            self.exchange.function.id(),
            &to_js(request),
            request.seq as f64,
            timer_ms(self.answer_timeout_ms) as f64,
            now,
        )
    }

    /// Hands the client what became of request `seq`: an answer read from
    /// JS, or `None` (threw, rejected, not a grant, timed out).
    fn settle(&self, seq: u64, answer: Option<Answer>) {
        match answer {
            Some(Answer::Grant(grant)) => {
                self.unavailable.replace(None);
                self.client.on_grant(&grant, now_ms());
            }
            Some(Answer::Unavailable(reason)) => {
                self.unavailable.replace(Some(reason));
                self.client.on_no_authority(seq, now_ms());
            }
            None => self.client.on_failed(seq, now_ms()),
        }
    }

    /// `stats().shared`: the client's counters and the scope.
    pub fn stats(&self) -> JsValue {
        let Some(stats) = self.client.stats() else { return JsValue::UNDEFINED };
        let js = to_js(&stats);
        let texts = [("scope", self.exchange.scope.clone()), ("reason", self.unavailable.borrow().clone())];
        for (key, text) in texts {
            if let Some(text) = text {
                let _ = Reflect::set(&js, &JsValue::from_str(key), &JsValue::from_str(&text));
            }
        }
        js
    }

    pub fn mode(&self) -> Option<Mode> {
        self.client.stats().map(|s| s.mode)
    }
}

/// The policy's [`SharedState`] when it has a shared budget: the client's,
/// plus a look at whether a request is due after each call.
pub struct Leased(pub Rc<Fleet>);

impl SharedState for Leased {
    fn spend_retry(&self, after_timeout: bool) -> Option<u32> {
        let paid = self.0.client.spend_retry(after_timeout);
        self.0.pump();
        paid
    }

    fn on_success(&self, last_retry_cost: Option<u32>) {
        self.0.client.on_success(last_retry_cost);
        self.0.pump();
    }

    fn quota_level(&self) -> Option<u32> {
        self.0.client.quota_level()
    }

    fn reserve_start(&self, now_ms: u64, latest_ms: u64) -> Result<u64, u64> {
        let start = self.0.client.reserve_start(now_ms, latest_ms);
        self.0.pump();
        start
    }

    fn release_start(&self, start_ms: u64) {
        self.0.client.release_start(start_ms);
    }

    fn keep_start(&self, start_ms: u64, now_ms: u64) -> bool {
        self.0.client.keep_start(start_ms, now_ms)
    }
}
