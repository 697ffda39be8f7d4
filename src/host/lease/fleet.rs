//! A shared budget's leased client (rule 9), in the fleet's module (the
//! authority's, `--features authority`; the Redis module has it too): the
//! policy's [`LeasedClient`] and the carrier's `shared.exchange`, which
//! carries a request to the fleet's authority (a Durable Object, a leader
//! tab, Redis) and answers its grant. A page that never shares a budget
//! never loads it: the policy, in the page's module, reaches its client
//! here by number (`crate::host::api::leased`, `policy::budget::lease::link`), one
//! call of `leaseCall` per budget call, relayed by js/src/lease-relay.js.
//!
//! Nothing here waits and nothing in JS decides. After every budget call
//! the client is asked whether a request is due (`pending_request`); if so
//! it is handed to the executor (js/src/executor.js `exchange`, through the
//! relay), which calls `shared.exchange` as its method in a microtask —
//! never on an operation's path — adopts any thenable as `await` would,
//! sets a timer of the client's `answer_timeout_ms`, and reports whichever
//! comes first to this client's [`Lease`]: the answer, the rejection or
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
//! 70.7 KB, its glue 9.0 → 8.6 KB; docs/development.md "The stack").

use alloc::rc::{Rc, Weak};
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use js_sys::Function;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::wire::{self, Answer};
use crate::host::shared::bind::{date_now, math_random, settled};
use crate::host::shared::convert::to_js;
use crate::json;
use crate::local::Local;
use crate::policy::backoff::BadRandom;
use crate::policy::budget::lease::link;
use crate::policy::budget::lease::{ClientConfig, LeaseRequest, LeaseStats, LeasedClient};
use crate::policy::budget::SharedState;
use crate::policy::limits::timer_ms;
use crate::policy::throttle::Admit;

#[wasm_bindgen]
extern "C" {
    /// What performs the client's work (js/src/lease-relay.js `perform`).
    pub type LeaseGlue;

    /// `exchange(lease, exchange, request, seq, ms, now)`: the executor
    /// calls the `exchange` it holds as `shared`'s method with `request`
    /// (`now`: at once, else in a microtask), adopts its answer as `await`
    /// would, and reports to `lease` whichever comes first: how it settled
    /// (or the throw), or a timer of `ms` (js/src/executor.js); then calls
    /// `done`, if given.
    #[wasm_bindgen(method, structural)]
    #[allow(clippy::too_many_arguments)]
    fn exchange(
        this: &LeaseGlue,
        lease: &JsValue,
        exchange: u32,
        request: &JsValue,
        seq: f64,
        ms: f64,
        now: bool,
        done: Option<&Function>,
    );

    /// `attach(id, lease)`: calls the `shared.attach` the executor holds as
    /// `id` with a function that calls `lease.release()`: what it
    /// returned, or threw.
    #[wasm_bindgen(catch, method, structural)]
    fn attach(this: &LeaseGlue, id: u32, lease: &JsValue) -> Result<JsValue, JsValue>;
}

struct Fleet {
    client: LeasedClient,
    /// The carrier's `exchange`, as the page's executor holds it (js/src/attempts.js).
    exchange: u32,
    glue: LeaseGlue,
    /// This client's [`Lease`], as JS holds it (the executor reports to it).
    lease: JsValue,
    answer_timeout_ms: u64,
    /// Why no authority can run, as the carrier said (until one answers).
    unavailable: RefCell<Option<String>>,
}

fn now_ms() -> u64 {
    date_now() as u64
}

/// Where the executor reports a client's exchanges, and what `attach`'s
/// release calls. Weak: neither the carrier (which keeps the release) nor
/// an exchange still out (which may never settle, in workerd) keeps the
/// client alive; once its policy closed it, a report is ignored.
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

    /// Gives every held token back (`attach`'s release), as
    /// `policy.release()`, and calls `done` once that was reported. (A
    /// callback, not a promise: no export answers a lone JS value, see
    /// [`lease_value`].)
    pub fn release(&self, done: &Function) {
        match self.0.upgrade() {
            Some(fleet) => fleet.release(Some(done)),
            None => settled(done),
        }
    }
}

/// The clients of this module's policies, by number (1 and up).
static CLIENTS: Local<RefCell<Vec<Option<Rc<Fleet>>>>> = Local::new(RefCell::new(Vec::new()));

/// Where client `id` is kept.
fn index(id: u32) -> Option<usize> {
    usize::try_from(id).ok()?.checked_sub(1)
}

/// Client `id`, while its policy has it open.
fn client(id: u32) -> Option<Rc<Fleet>> {
    CLIENTS.with(|c| c.borrow().get(index(id)?).cloned().flatten())
}

/// A policy's client: `exchange` and `attach` (0: none) are the carrier's
/// functions as the page's executor holds them, `glue` what performs the
/// exchanges, `c0`… its quota, rate, throttle and fleet size
/// (`link::pack`). Its number.
#[allow(clippy::too_many_arguments)]
#[wasm_bindgen(js_name = leaseOpen)]
pub fn lease_open(
    exchange: u32,
    attach: u32,
    glue: LeaseGlue,
    c0: f64,
    c1: f64,
    c2: f64,
    c3: f64,
    c4: f64,
    c5: f64,
    c6: f64,
    c7: f64,
    c8: f64,
    c9: f64,
) -> u32 {
    let packed = [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9];
    let (quota, rate, fleet_size) = link::unpack(&packed);
    let throttle = link::unpack_throttle(&packed);
    let config = ClientConfig { throttle, ..ClientConfig::for_policy(random_id(), quota, rate, fleet_size) };
    let fleet = Fleet::new(config, exchange, glue);
    let id = CLIENTS.with(|c| {
        let mut clients = c.borrow_mut();
        let free = clients.iter().position(Option::is_none);
        let index = free.unwrap_or(clients.len());
        match clients.get_mut(index) {
            Some(slot) => *slot = Some(fleet.clone()),
            None => clients.push(Some(fleet.clone())),
        }
        u32::try_from(index).map_or(0, |i| i.saturating_add(1))
    });
    if attach != 0 {
        // A carrier whose `attach` throws still carries requests.
        let _ = fleet.glue.attach(attach, &fleet.lease);
    }
    id
}

/// A budget call of client `id`'s policy (`link`'s `op` and numbers); NaN
/// once it is closed.
#[wasm_bindgen(js_name = leaseCall)]
pub fn lease_call(id: u32, op: u32, a: f64, b: f64) -> f64 {
    let Some(fleet) = client(id) else { return f64::NAN };
    let leased = Leased(&fleet);
    match op {
        link::SPEND => link::count(leased.spend_retry(a != 0.0)),
        link::SUCCESS => {
            leased.on_success(link::count_back(a));
            0.0
        }
        link::LEVEL => link::count(leased.quota_level()),
        link::RESERVE => link::start(leased.reserve_start(link::ms_back(a), link::ms_back(b))),
        link::RELEASE_START => {
            leased.release_start(link::ms_back(a));
            0.0
        }
        link::KEEP => f64::from(u8::from(leased.keep_start(link::ms_back(a), link::ms_back(b)))),
        link::MODE => link::mode(fleet.client.stats().map(|s| s.mode)),
        link::ADMIT => {
            // Without a random (`NO_RANDOM`), a client that needs one
            // refuses the draw, and that is what is answered.
            let mut needed = false;
            let answer = leased.admit(link::ms_back(a), &mut || {
                needed = true;
                b
            });
            if needed && b == link::NO_RANDOM {
                link::NO_RANDOM
            } else {
                link::admitted(answer)
            }
        }
        link::SENT => {
            leased.sent(link::ms_back(a));
            0.0
        }
        link::ANSWERED => {
            let (accepted, floor) = match link::start_back(b) {
                Ok(floor) => (true, floor),
                Err(floor) => (false, floor),
            };
            leased.answered(link::ms_back(a), accepted, Some(floor).filter(|&f| f > 0));
            0.0
        }
        _ => f64::NAN,
    }
}

/// Client `id`'s `stats().shared` as JSON text (without the scope, which
/// its policy adds), or releases it (calling `done` once reported), or
/// closes it (`link::STATS`, `link::RELEASE`, `link::CLOSE`: a report for
/// it is then ignored). Text or nothing, never a JS value: no export of
/// ours answers a lone JS value (a wasm `externref` result). V8 11.3
/// (Node 20) inlines such a call into optimized JS and, if that code is
/// deoptimized while the call runs (an object built inside it changed a
/// field's type, as `reason` appearing in the stats did), aborts the
/// process (`Fatal error … unreachable code` in
/// `Deoptimizer::DoComputeBuiltinContinuation`, issue 38; the `crash-node`
/// tier checks every export of every shipped module).
#[wasm_bindgen(js_name = leaseValue)]
pub fn lease_value(id: u32, op: u32, done: Option<Function>) -> Option<String> {
    let fleet = client(id);
    match (fleet, op) {
        (Some(fleet), link::STATS) => fleet.stats(),
        (Some(fleet), link::RELEASE) => {
            fleet.release(done.as_ref());
            None
        }
        (Some(fleet), link::CLOSE) => {
            // Taken out here, dropped (with `fleet`) after the borrow ends.
            CLIENTS.with(|c| index(id).and_then(|i| c.borrow_mut().get_mut(i).and_then(Option::take)));
            drop(fleet);
            None
        }
        (None, link::RELEASE) => {
            if let Some(done) = &done {
                settled(done);
            }
            None
        }
        _ => None,
    }
}

/// `stats().shared` as the fleet's module writes it: the client's counters
/// and why no authority can run, when a carrier said so.
#[derive(Serialize)]
struct SharedStats<'a> {
    #[serde(flatten)]
    counters: LeaseStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// A random 52-bit id (a JS number, unique in practice among the clients
/// of one budget).
fn random_id() -> u64 {
    (math_random() * 4_503_599_627_370_496.0) as u64
}

impl Fleet {
    fn new(config: ClientConfig, exchange: u32, glue: LeaseGlue) -> Rc<Fleet> {
        Rc::new_cyclic(|weak| Fleet {
            client: LeasedClient::new(config),
            exchange,
            glue,
            lease: Lease(weak.clone()).into(),
            answer_timeout_ms: config.answer_timeout_ms,
            unavailable: RefCell::new(None),
        })
    }

    /// Sends the request the client says is due, if any (none while one is
    /// in flight and not yet given up on), in a microtask.
    fn pump(&self) {
        if let Some(request) = self.client.pending_request(now_ms()) {
            self.send(&request, false, None);
        }
    }

    /// Gives every held token back: the client's last request, handed to
    /// the carrier before this returns (a page that is going away may run
    /// no task, nor microtask, after the event that released). Calls
    /// `done` once its answer or its timer was reported.
    fn release(&self, done: Option<&Function>) {
        let request = self.client.release_all(now_ms());
        self.send(&request, true, done);
    }

    /// Has the executor carry `request` to `shared.exchange` (`now`: before
    /// this returns, else in a microtask) under its answer timer, and call
    /// `done`, if given, once it reported.
    fn send(&self, request: &LeaseRequest, now: bool, done: Option<&Function>) {
        self.glue.exchange(
            &self.lease,
            self.exchange,
            &to_js(request),
            request.seq as f64,
            timer_ms(self.answer_timeout_ms) as f64,
            now,
            done,
        );
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

    /// `stats().shared`, less the scope, as JSON text: the client's
    /// counters, and why no authority can run when a carrier said so.
    fn stats(&self) -> Option<String> {
        let counters = self.client.stats()?;
        let reason = self.unavailable.borrow();
        Some(json::to_string(&SharedStats { counters, reason: reason.as_deref() }))
    }
}

/// The client as its policy's [`SharedState`]: plus a look at whether a
/// request is due after each call.
struct Leased<'a>(&'a Fleet);

impl SharedState for Leased<'_> {
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

    fn admit(&self, now_ms: u64, random: &mut dyn FnMut() -> f64) -> Result<Admit, BadRandom> {
        let admit = self.0.client.admit(now_ms, random);
        self.0.pump();
        admit
    }

    fn sent(&self, now_ms: u64) {
        self.0.client.sent(now_ms);
        self.0.pump();
    }

    fn answered(&self, now_ms: u64, accepted: bool, floor: Option<u64>) {
        self.0.client.answered(now_ms, accepted, floor);
        self.0.pump();
    }
}
