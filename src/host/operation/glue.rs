//! The executor's helpers (core.js `glue`, most of them js/src/attempts.js),
//! each one crossing from wasm into JS where reading or building the same
//! thing from here took one crossing per property
//! (docs/benchmarks-history.md "Crossings"). The objects they act on stay
//! in JavaScript, named by number: a call (its input, `init` copy and signal), an attempt (its
//! `AbortController`, response, body), a thrown value ([`Held`]). A helper
//! performs one step on them and answers plain values — the response's
//! status, type and the headers the policy reads packed in one string
//! ([`Facts`]), a length, a failure's fields. What the values mean, and
//! what to do about them, is decided here and in `policy`.

use alloc::string::String;
use core::cell::RefCell;
use js_sys::{Array, Function};
use crate::local::Local;
use wasm_bindgen::prelude::*;


use crate::packed::Fields;

#[wasm_bindgen]
extern "C" {
    /// The object core.js hands to `Policy`'s constructor.
    pub type Glue;

    /// `aborted(call)`: whether the call's signal has aborted.
    #[wasm_bindgen(method, structural)]
    fn aborted(this: &Glue, call: u32) -> bool;

    /// `reason(call)`: holds the reason the call's signal aborted with.
    #[wasm_bindgen(method, structural)]
    pub fn reason(this: &Glue, call: u32) -> u32;

    /// `requestHeader(call, isRequest, name)`: one header of the call's
    /// request (its `Request`'s, else its `init.headers`').
    #[wasm_bindgen(method, structural, js_name = requestHeader)]
    pub fn request_header(this: &Glue, call: u32, is_request: bool, name: &str) -> Option<String>;

    /// `replayKeep(call)`: the call sends the bytes its copy read from now
    /// on; false when the `Request` constructor refused them.
    #[wasm_bindgen(method, structural, js_name = replayKeep)]
    pub fn replay_keep(this: &Glue, call: u32) -> bool;

    /// `rateFacts(id)`: the rate-limit headers of attempt `id`'s response
    /// (in [`Facts::parse`]'s order), or `!` and the failure of reading them.
    #[wasm_bindgen(method, structural, js_name = rateFacts)]
    fn rate_facts(this: &Glue, id: u32) -> String;

    /// `head(id, n)`: the first `n` bytes of attempt `id`'s body, decoded
    /// as UTF-8 (bytes that are not, as U+FFFD).
    #[wasm_bindgen(method, structural)]
    pub fn head(this: &Glue, id: u32, n: u32) -> String;

    /// `header(id, name)`: a header of attempt `id`'s response.
    #[wasm_bindgen(method, structural)]
    pub fn header(this: &Glue, id: u32, name: &str) -> Option<String>;

    /// `rebuild(id, abort)`: attempt `id`'s response again around the
    /// bytes read, with its status, status text, headers, URL,
    /// `redirected` and type; with `abort` 1 or 2, reading that body once
    /// the caller's signal aborted fails (1: with an `AbortError`, 2: with
    /// the signal's reason; see `policy::runtime::body_abort`); with 4
    /// added, the bytes are held and a body stream made only when asked
    /// for, with 8 added to that, the `Response` built with them as well
    /// (`policy::runtime::holding`).
    #[wasm_bindgen(method, structural)]
    pub fn rebuild(this: &Glue, id: u32, abort: u8);

    /// `handOver(id)`: attempt `id`'s response again around the chunks
    /// read, then the rest of its body, pulled as the caller reads; `""`,
    /// or the failure of building it.
    #[wasm_bindgen(method, structural, js_name = handOver)]
    pub fn hand_over(this: &Glue, id: u32) -> String;

    /// `end(id, how)`: ends what `id` holds (`how`: [`CANCEL`], [`ABORT`],
    /// [`KEEP`]).
    #[wasm_bindgen(method, structural)]
    fn end(this: &Glue, id: u32, how: u8);

    /// `hold(value)`: holds a thrown value (or a reason) for the machine.
    #[wasm_bindgen(method, structural)]
    fn hold(this: &Glue, value: &JsValue) -> u32;

    /// `keep(f, self)`: holds one of the caller's functions (an option's
    /// `random`, `onRetry`, `fetch`; a shared budget's `exchange` and
    /// `attach`, with their object as `self`) for the machine.
    #[wasm_bindgen(method, structural)]
    fn keep(this: &Glue, f: &JsValue, self_: &JsValue) -> u32;

    /// `invoke(id, value)`: calls the caller's function the executor holds
    /// as `id` (`keep`, or a `run`'s subscriber) with `value`, on its
    /// object if it has one: what it returned, or threw.
    #[wasm_bindgen(catch, method, structural)]
    fn invoke(this: &Glue, id: u32, value: &JsValue) -> Result<JsValue, JsValue>;

    /// `shown(id, retry)`: calls the subscriber (or, with `retry`,
    /// `onRetry`) the executor holds as `id` with the state whose numbers
    /// are in the buffer (`machine::answer_numbers`), as js/src/shape.js
    /// makes it an object; what it threw is ignored.
    #[wasm_bindgen(catch, method, structural)]
    fn shown(this: &Glue, id: u32, retry: bool) -> Result<(), JsValue>;

    /// `prepare(call, isRequest, headers, key, fate, fold, url)`
    /// (js/src/request.js): the steps `request::prepare` decided, taken on
    /// the call the executor holds; answers `[hasKey, integrity,
    /// crossOrigin, refused, body]`. Throws what `Headers` throws for a key
    /// it refuses.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(catch, method, structural)]
    pub fn prepare(
        this: &Glue,
        call: u32,
        is_request: bool,
        headers: u8,
        key: Option<&str>,
        fate: bool,
        fold: bool,
        url: &str,
    ) -> Result<Array, JsValue>;

    /// `abortBefore(call, isRequest)` (js/src/request.js): the call of a
    /// signal that had aborted sends its Request, its body cancelled with
    /// the reason; throws what the Request constructor throws.
    #[wasm_bindgen(catch, method, structural, js_name = abortBefore)]
    pub fn abort_before(this: &Glue, call: u32, is_request: bool) -> Result<(), JsValue>;

    /// `leaseOpen(exchange, attach, ...config)` (js/src/lease.js): finds
    /// the fleet's module for the carrier whose `exchange` the executor
    /// holds as `exchange` and opens the policy's leased client there, now
    /// or once the module has loaded (`crate::host::api::leased`); the relay's number
    /// for it. `config`: `policy::budget::lease::link::pack`'s ten
    /// numbers (as numbers: an array would bring its copying helpers into
    /// the page's glue).
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(method, structural, js_name = leaseOpen)]
    pub fn lease_open(
        this: &Glue,
        exchange: u32,
        attach: u32,
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
    ) -> u32;

    /// `leaseCall(handle, op, a, b)`: the client's answer to a budget call
    /// (`link`), NaN while there is no client.
    #[wasm_bindgen(method, structural, js_name = leaseCall)]
    pub fn lease_call(this: &Glue, handle: u32, op: u32, a: f64, b: f64) -> f64;

    /// `leaseValue(handle, op, done)`: the client's stats, or releases it
    /// (calling `done` once the authority answered or the client gave up;
    /// at once without a client), or closes it (`link`); without a client,
    /// why its module could not load (a string), `undefined` while it loads.
    #[wasm_bindgen(method, structural, js_name = leaseValue)]
    pub fn lease_value(this: &Glue, handle: u32, op: u32, done: Option<&Function>) -> JsValue;

    /// `navigator.onLine` when the host has it (a boolean), else nothing.
    #[wasm_bindgen(method, structural, js_name = onLine)]
    pub fn on_line(this: &Glue) -> Option<bool>;
}

/// The glue, for what is ended on drop ([`Held`]): one object, core.js's.
static GLUE: Local<RefCell<Option<Glue>>> = Local::new(RefCell::new(None));

/// Keeps `glue` for [`Held`]'s drop (every `Policy` is given the same one).
pub fn install(glue: &Glue) {
    GLUE.with(|g| {
        if g.borrow().is_none() {
            *g.borrow_mut() = Some(JsValue::clone(glue).unchecked_into());
        }
    });
}

/// The next attempt id the machine gives: its own half of the ids
/// (js/src/attempts.js gives the other, below 2^31).
static NEXT: Local<core::cell::Cell<u32>> = Local::new(core::cell::Cell::new(0));

/// A fresh id for an attempt the machine starts (`super::io::FETCH`): in
/// 2^31..2^32, apart from the executor's own.
pub fn reserve() -> u32 {
    NEXT.with(|n| {
        let id = n.get().wrapping_add(1) & 0x7fff_ffff;
        n.set(id);
        id | 0x8000_0000
    })
}

/// `end`'s bits: cancel a body nobody read, abort the attempt, keep the
/// record (its failure is still ours).
pub const CANCEL: u8 = 1;
pub const ABORT: u8 = 2;
pub const KEEP: u8 = 4;

/// Added to `rebuild`'s `abort`: the bytes are held, a body stream made
/// only when asked for (`policy::runtime::Holding::Held`); with `BESIDE`
/// added as well, the `Response` is built with them too
/// (`Holding::HeldBeside`).
pub const HELD: u8 = 4;
pub const BESIDE: u8 = 8;

/// Whether call `id`'s signal has aborted (0: a call without one).
pub fn aborted(id: u32) -> bool {
    id != 0 && GLUE.with(|g| g.borrow().as_ref().is_some_and(|glue| glue.aborted(id)))
}

/// Calls the caller's function the executor holds as `id` with `value`
/// (see `invoke`): what it returned, or threw.
pub fn invoke(id: u32, value: &JsValue) -> Result<JsValue, JsValue> {
    GLUE.with(|g| match &*g.borrow() {
        Some(glue) => glue.invoke(id, value),
        None => Err(JsValue::UNDEFINED),
    })
}

/// Shows the state in the buffer to the function the executor holds as
/// `id` (see `shown`).
pub fn shown(id: u32, retry: bool) {
    GLUE.with(|g| {
        if let Some(glue) = &*g.borrow() {
            let _ = glue.shown(id, retry);
        }
    });
}

/// Ends what the executor holds as `id` (see `end`).
pub fn end(id: u32, how: u8) {
    GLUE.with(|g| {
        if let Some(glue) = &*g.borrow() {
            glue.end(id, how);
        }
    });
}

/// A value the executor holds for the machine (js/src/attempts.js): an
/// attempt whose step failed, or a thrown value. The machine has only its
/// number; dropped, the executor lets go of it.
#[derive(Debug)]
pub struct Held(u32);

impl Held {
    /// What `id` holds, from here on the machine's to end.
    pub fn new(id: u32) -> Held {
        Held(id)
    }

    /// Holds `value` (an error of ours: a body cut short, no redirect hops).
    pub fn hold(glue: &Glue, value: &JsValue) -> Held {
        Held(glue.hold(value))
    }

    /// Holds one of the caller's functions for [`invoke`], to be called on
    /// `self_` (or none: `undefined`); the glue is installed (`Policy::new`
    /// does that first).
    pub fn keep(f: &JsValue, self_: &JsValue) -> Held {
        Held(GLUE.with(|g| g.borrow().as_ref().map_or(0, |glue| glue.keep(f, self_))))
    }

    pub fn id(&self) -> u32 {
        self.0
    }

    /// Its id, for the caller (who takes it: not ended here).
    pub fn take(self) -> u32 {
        let id = self.0;
        core::mem::forget(self);
        id
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        end(self.0, 0);
    }
}

pub use crate::packed::Facts;

impl Facts {
    /// On a throttling status, the rate-limit headers too, in `rateFacts`'
    /// order (the same three first, then `ratelimit`,
    /// `x-ratelimit-remaining`, `x-rate-limit-remaining`,
    /// `x-ratelimit-reset`, `x-rate-limit-reset`,
    /// `x-ratelimit-reset-after`): every other response pays one crossing,
    /// not two. `Err`: the failure of reading them, packed.
    pub fn rate_limit(&mut self, glue: &Glue, id: u32) -> Result<(), String> {
        if !crate::policy::rate_limit::throttling(self.status) {
            return Ok(());
        }
        let packed = glue.rate_facts(id);
        if let Some(failure) = packed.strip_prefix("!") {
            return Err(String::from(failure));
        }
        let mut f = Fields(&packed);
        f.nth(2); // past the three the step's facts had
        let h = &mut self.floor_headers;
        h.ratelimit = f.string();
        let (remaining, other_remaining) = (f.string(), f.string());
        h.remaining = remaining.or(other_remaining);
        let (reset, other_reset) = (f.string(), f.string());
        h.reset = reset.or(other_reset);
        h.reset_after = f.string();
        Ok(())
    }
}
