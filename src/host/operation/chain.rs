//! One attempt's redirect chain as js/src/hops.js asks it (the default
//! module's; the browser's module, `--features browser`, has none:
//! `nochain.rs` in its place): [`Chain`] is `policy::chain`, exported with
//! plain values in and out — what each response means and what the next
//! hop sends. The mailbox (`super::io::follow`) holds it until the
//! executor takes it (`machineChain`); the attempt that made it
//! (`attempt::hops::redirected`) keeps its own handle, [`Followed`], to
//! classify a failure by what the chain last did (`attempt::hops::failed`).

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use wasm_bindgen::prelude::*;

use crate::packed::Fields;
use crate::policy::chain::{self, Body, First, Seen, Stop, Target};

// What js/src/hops.js reports failed (`Chain::failed`): the `fetch` call
// threw or rejected, reading its response threw, or reading the body again
// failed.
// (1, `fetch` rejected, is what anything else is classified as.)
pub(in crate::host) const THREW: u8 = 0;
pub(in crate::host) const READ: u8 = 2;
pub(in crate::host) const AGAIN: u8 = 3;

// `Chain::seen`'s marks for the final response.
const REDIRECTED: u8 = 1;
const CORS: u8 = 2;

// `Chain::follow`'s answers: the next hop, or the error to end with.
const FOLLOW: u8 = 0;
const REFUSED: u8 = 1;
const UNREPLAYABLE: u8 = 2;

/// One attempt's redirect chain, as js/src/hops.js asks it. The attempt
/// keeps its own handle (`attempt::hops::redirected`) to classify a failure.
#[wasm_bindgen]
pub struct Chain(pub(in crate::host) Rc<Followed>);

pub struct Followed {
    pub(in crate::host) chain: RefCell<chain::Chain>,
    /// What failed, once something did: the chain's own stop, or what
    /// hops.js reported.
    pub(in crate::host) failed: Cell<Option<Result<u8, Stop>>>,
    /// The final response's marks, once the chain saw it.
    pub(in crate::host) marks: Cell<u8>,
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
