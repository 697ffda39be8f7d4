//! Following redirects hop by hop inside one attempt, where
//! `policy::redirect` says we follow them: js/src/hops.js performs each hop
//! (a `fetch` with `redirect: "manual"`, so a failure knows which hop it
//! happened on) and asks [`Chain`] — `policy::chain`, exported with plain
//! values in and out — what each response means and what the next hop
//! sends. The attempt awaits the whole chain as one promise; a failure is
//! classified here, by what the chain last did.

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use wasm_bindgen::prelude::*;

use crate::host::operation::glue::{Facts, Held};
use super::failure::{delivered_by, failed as failed_with, fetch_failed, not_sent, StepFailure};
use super::request::Prepared;
use crate::engine::Failed;
use crate::packed::Fields;
use crate::policy::chain::{self, Body, First, Seen, Stop, Target};
use crate::policy::classify::{Failure, Stage};
use crate::policy::redirect::stage_on_hop;
use crate::policy::runtime::{cross_origin_redirect_is_cors, Runtime};

// What js/src/hops.js reports failed (`Chain::failed`): the `fetch` call
// threw or rejected, reading its response threw, or reading the body again
// failed.
// (1, `fetch` rejected, is what anything else is classified as.)
const THREW: u8 = 0;
const READ: u8 = 2;
const AGAIN: u8 = 3;

// `Chain::seen`'s marks for the final response.
const REDIRECTED: u8 = 1;
const CORS: u8 = 2;

// `Chain::follow`'s answers: the next hop, or the error to end with.
const FOLLOW: u8 = 0;
const REFUSED: u8 = 1;
const UNREPLAYABLE: u8 = 2;

/// One attempt's redirect chain, as js/src/hops.js asks it. The attempt
/// keeps its own handle ([`fetch_following`]) to classify a failure.
#[wasm_bindgen]
pub struct Chain(Rc<Followed>);

pub struct Followed {
    chain: RefCell<chain::Chain>,
    /// What failed, once something did: the chain's own stop, or what
    /// hops.js reported.
    failed: Cell<Option<Result<u8, Stop>>>,
    /// The final response's marks, once the chain saw it.
    marks: Cell<u8>,
}

#[wasm_bindgen]
impl Chain {
    /// A response with `status` and `location` arrived: the `Location` to
    /// follow (to parse against its URL), or `undefined` for the final
    /// response, whose marks [`Chain::marks`] then answers. Text or
    /// nothing, never a lone JS value (see `exports::PolicyStats`).
    pub fn seen(&self, status: u16, location: Option<String>) -> Option<String> {
        match self.0.chain.borrow_mut().seen(status, location.as_deref()) {
            Seen::Redirect(location) => Some(location.into_owned()),
            Seen::Final { redirected, cors } => {
                self.0.marks.set(u8::from(redirected) * REDIRECTED + u8::from(cors) * CORS);
                None
            }
        }
    }

    /// The final response's marks ([`REDIRECTED`], [`CORS`]), once
    /// [`Chain::seen`] saw it.
    pub fn marks(&self) -> u8 {
        self.0.marks.get()
    }

    /// The redirect's target and the first request's referrer, packed
    /// (`crate::packed`) in this order: the origin of the response's URL,
    /// the `Location`'s scheme (with its colon) and origin, the redirect's
    /// `Referrer-Policy`; then, read at the first redirect, the first
    /// request's referrer and referrer policy, that referrer stripped for
    /// referrer use (href, origin) and the caller's environment stripped
    /// (href, origin). `bodied`: this hop's request is a `Request` with a
    /// body. The answer: `[FOLLOW, method, body, referrer,
    /// referrerPolicy, origin, ...headers to delete]` (body: 0 as it is, 1
    /// none, 2 read again), or `[REFUSED, why]`, or `[UNREPLAYABLE]`.
    pub fn follow(&self, packed: String, bodied: bool) -> Vec<JsValue> {
        let mut f = Fields(&packed);
        let mut next = || f.next().flatten();
        let (here, protocol, there, policy) = (next(), next(), next(), next());
        let target = Target { here, there: protocol.zip(there), policy, bodied };
        let (referrer, referrer_policy) = (next(), next());
        let stripped = next().zip(next());
        let first = First { referrer, policy: referrer_policy, stripped, client: next().zip(next()) };
        let step = match self.0.chain.borrow_mut().follow(&target, &first) {
            Ok(step) => step,
            Err(stop) => {
                self.0.failed.set(Some(Err(stop)));
                return match stop {
                    Stop::Refused(why) => alloc::vec![REFUSED.into(), why.message().into()],
                    Stop::Unreplayable => alloc::vec![UNREPLAYABLE.into()],
                };
            }
        };
        let body: u8 = match step.body {
            Body::Keep => 0,
            Body::Drop => 1,
            Body::Again => 2,
        };
        // Sent exactly as it is: `unsafe-url` keeps a stripped URL whole.
        let (referrer, referrer_policy) = match &step.referrer {
            Some(url) => (url.as_str(), "unsafe-url"),
            None => ("", "no-referrer"),
        };
        let mut answer = alloc::vec![
            FOLLOW.into(),
            step.method.as_str().into(),
            body.into(),
            referrer.into(),
            referrer_policy.into(),
            step.origin.as_deref().map_or(JsValue::UNDEFINED, JsValue::from_str),
        ];
        answer.extend(step.dropped.iter().map(|&name| JsValue::from_str(name)));
        answer
    }

    /// What failed (`THREW`, 1: rejected, `READ`, `AGAIN`), unless the
    /// chain stopped itself first.
    pub fn failed(&self, at: u8) {
        if self.0.failed.get().is_none() {
            self.0.failed.set(Some(Ok(at)));
        }
    }
}

/// The chain of an attempt whose first response (its `facts`) is a
/// redirect to follow hop by hop (js/src/hops.js performs each hop as the
/// chain says, from that response on): the handle hops.js is given, and
/// ours, to classify a failure ([`failed`]). `None` for any other response:
/// a call that is not redirected makes no chain. A redirect `fetch` would
/// refuse (see `policy::redirect::check_hop`) is a `TypeError` that
/// repeating cannot change.
pub fn redirected(prepared: &Prepared, runtime: Runtime, facts: &Facts) -> Option<(Chain, Rc<Followed>)> {
    // Without a `Location` the chain sees a final response (`chain::Chain::seen`):
    // nothing to make for it.
    facts.location.as_ref()?;
    let mut chain = chain::Chain::new(chain::Request {
        method: prepared.method.clone(),
        same_origin_mode: prepared.same_origin,
        streamed: prepared.streamed,
        again: prepared.is_request && prepared.replayable,
        cors_type: cross_origin_redirect_is_cors(runtime),
    });
    let Seen::Redirect(_) = chain.seen(facts.status, facts.location.as_deref()) else {
        return None;
    };
    let followed = Rc::new(Followed { chain: RefCell::new(chain), failed: Cell::new(None), marks: Cell::new(0) });
    Some((Chain(followed.clone()), followed))
}

/// The chain's `fetch` rejected (attempt `id`, failing with `f`): what
/// failed, by what the chain last did.
pub fn failed(prepared: &Prepared, runtime: Runtime, followed: &Followed, id: u32, f: StepFailure) -> Failed<Held> {
    let error = || Some(Held::new(id));
    let hop = followed.chain.borrow().hops();
    match followed.failed.get() {
        Some(Err(Stop::Refused(_))) => failed_with(Failure::Refused(Stage::MaybeDelivered), "redirect", "TypeError", error()),
        Some(Err(Stop::Unreplayable) | Ok(AGAIN)) => failed_with(
            Failure::Network(Stage::MaybeDelivered),
            "redirect-body-not-replayable",
            "TypeError",
            error(),
        ),
        Some(Ok(READ)) => delivered_by(id, f),
        Some(Ok(THREW)) => on_hop(not_sent(Held::new(id)), hop),
        None | Some(Ok(_)) => on_hop(fetch_failed(prepared, runtime, id, f), hop),
    }
}

/// A failure on a hop after the first: the request reached a server.
fn on_hop(mut f: Failed<Held>, hop: u32) -> Failed<Held> {
    f.failure = match f.failure {
        Failure::Network(stage) => Failure::Network(stage_on_hop(stage, hop)),
        Failure::Refused(stage) => Failure::Refused(stage_on_hop(stage, hop)),
        other => other,
    };
    f
}
