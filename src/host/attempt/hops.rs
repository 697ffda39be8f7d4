//! Following redirects hop by hop inside one attempt, where
//! `policy::redirect` says we follow them: js/src/hops.js performs each hop
//! (a `fetch` with `redirect: "manual"`, so a failure knows which hop it
//! happened on) and asks the attempt's chain (`operation::chain::Chain`,
//! `policy::chain` exported with plain values in and out) what each
//! response means and what the next hop sends. The attempt awaits the
//! whole chain as one promise; a failure is classified here, by what the
//! chain last did.

use alloc::rc::Rc;
use core::cell::{Cell, RefCell};

use crate::host::operation::chain::{Chain, Followed, AGAIN, READ, THREW};
use crate::host::operation::glue::{Facts, Held};
use super::failure::{delivered_by, failed as failed_with, fetch_failed, not_sent, StepFailure};
use super::request::Prepared;
use crate::engine::Failed;
use crate::policy::chain::{self, Seen, Stop};
use crate::policy::classify::{Failure, Stage};
use crate::policy::redirect::stage_on_hop;
use crate::policy::runtime::{cross_origin_redirect_is_cors, Runtime};

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
