//! A shared budget's host side (rule 9): the policy's [`LeasedClient`]
//! and the caller's `shared.exchange`, which carries a request to the
//! fleet's authority (a Durable Object, a leader tab) and answers its grant.
//!
//! Nothing here decides: after every budget call the client is asked
//! whether a request is due (`pending_request`), and if so it is carried in
//! a task of its own — never on an operation's path. An exchange that
//! throws, rejects, answers something that is not a grant, or does not
//! answer within the client's `answer_timeout_ms` is reported as
//! unreachable, and the client falls back as `policy::budget::lease` says;
//! one that answers `{ unavailable: reason }` (no authority can run for this
//! client: a tab that cannot load the authority's module) is reported as
//! such, and `stats().shared.reason` shows the reason.
//! The client itself keeps at most one request in flight and gives up on it
//! after `answer_timeout_ms` by its own clock, so nothing here counts
//! exchanges: in workerd an exchange begun by a request that has ended may
//! never settle, nor its timer fire, and a counter here would then block
//! every later request.

use alloc::rc::Rc;
use alloc::string::String;
use core::cell::RefCell;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::{future_to_promise, spawn_local};

use super::bind::{date_now, math_random};
use super::caller::adopt;
use super::convert::to_js;
use super::expiry::expiry;
use super::wire::{self, Answer};
use crate::engine::{race, Either};
use crate::policy::budget::lease::{ClientConfig, LeaseRequest, LeasedClient, Mode};
use crate::policy::budget::SharedState;
use crate::policy::options::Options;

/// What `shared` gave: where requests go, and the label `stats()` shows.
#[derive(Clone)]
pub struct Exchange {
    pub function: Function,
    /// `shared.attach(release)`, when the carrier has it: called once with
    /// a function that gives the policy's held tokens back at once (a tab
    /// budget calls it as its tab leaves).
    pub attach: Option<Function>,
    /// The `shared` object itself: `exchange` is called as its method.
    pub this: JsValue,
    pub scope: Option<String>,
}

pub struct Fleet {
    client: LeasedClient,
    exchange: Exchange,
    answer_timeout_ms: u64,
    /// Why no authority can run, as the carrier said (until one answers).
    unavailable: RefCell<Option<String>>,
}

fn now_ms() -> u64 {
    date_now() as u64
}

impl Fleet {
    /// A client with a random 52-bit id (a JS number, unique in practice
    /// among the clients of one budget).
    pub fn new(options: &Options, exchange: Exchange) -> Rc<Fleet> {
        let client = (math_random() * 4_503_599_627_370_496.0) as u64;
        let config = ClientConfig::for_policy(client, options.quota, options.rate, options.fleet_size);
        let fleet = Rc::new(Fleet {
            client: LeasedClient::new(config),
            exchange,
            answer_timeout_ms: config.answer_timeout_ms,
            unavailable: RefCell::new(None),
        });
        if let Some(attach) = &fleet.exchange.attach {
            // Weak: the carrier keeps the function, not the policy.
            let weak = Rc::downgrade(&fleet);
            let release = Closure::<dyn FnMut()>::new(move || {
                if let Some(fleet) = weak.upgrade() {
                    let _ = fleet.release();
                }
            });
            let _ = attach.call1(&fleet.exchange.this, &release.into_js_value());
        }
        fleet
    }

    /// Sends the request the client says is due, if any (none while one is
    /// in flight and not yet given up on).
    fn pump(self: &Rc<Self>) {
        if let Some(request) = self.client.pending_request(now_ms()) {
            spawn_local(self.clone().carry(request));
        }
    }

    /// Gives every held token back: the client's last request, handed to
    /// the carrier before this returns (a page that is going away may run
    /// no task, nor microtask, after the event that released).
    pub fn release(self: &Rc<Self>) -> Promise {
        let request = self.client.release_all(now_ms());
        let sent = self.send(&request);
        let me = self.clone();
        future_to_promise(async move {
            me.settle(request.seq, sent).await;
            Ok(JsValue::UNDEFINED)
        })
    }

    async fn carry(self: Rc<Self>, request: LeaseRequest) {
        let sent = self.send(&request);
        self.settle(request.seq, sent).await;
    }

    /// Calls `shared.exchange` with the request as `{ client, seq, …,
    /// config }`: its answer, or `None` if it threw.
    fn send(&self, request: &LeaseRequest) -> Option<JsValue> {
        self.exchange.function.call1(&self.exchange.this, &to_js(request)).ok()
    }

    /// Awaits the answer to request `seq` (within `answer_timeout_ms`) and
    /// hands it to the client.
    async fn settle(&self, seq: u64, sent: Option<JsValue>) {
        let answer = match sent {
            Some(answer) => match race(adopt(&answer), expiry(self.answer_timeout_ms)).await {
                Either::Left(Ok(answer)) => wire::answer(&answer).ok(),
                _ => None,
            },
            None => None,
        };
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
}
