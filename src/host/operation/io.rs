//! An operation's mailbox: what the engine waits for, as the JS executor
//! (js/src/executor.js) is to perform it.
//!
//! The engine (`engine::run`) is written as async Rust, but nothing here
//! runs it on a futures executor: [`super::machine::Machine`] polls it once
//! per event the executor reports, and after each poll the executor reads
//! the new work off this mailbox — an attempt to start (its `fetch`), a
//! body to read, a step of either to await, a timer to set or clear, the
//! global `online` event to listen to — performs it, and reports back.
//! Work is numbers only: what it acts on is held by the executor
//! (js/src/attempts.js) and named by number. So the module holds no
//! futures executor, no timer, no JS callback and no JS value: every wait
//! is the executor's, every decision the engine's and the policy's.
//!
//! The futures below find their operation's mailbox in [`CURRENT`], set
//! while that operation is polled (the machine restores the previous one
//! after, so an operation started from inside another's callback keeps
//! its own).

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use crate::local::Local;
use wasm_bindgen::JsValue;

use super::glue::aborted;
use super::chain::Chain;
use crate::engine::Slept;
use crate::packed::Facts;
use crate::policy::limits::timer_ms;

/// Work for the executor, as `(kind, id, arg, more)` (`more` 0 unless
/// said): set timer `id` of `arg` ms, clear timer `id`; await, as wait
/// `id`, the step in progress of what the executor holds as `arg`
/// (js/src/attempts.js `pending`: an attempt's send or body read,
/// answered with plain values). (Kinds 3 and 4 are `super::machine`'s.)
pub const SET_TIMER: u32 = 1;
pub const CLEAR_TIMER: u32 = 2;
pub const AWAIT_HELD: u32 = 6;
/// Start attempt `id` of call `arg` (js/src/attempts.js `attempt`): the
/// `fetch` the executor holds as `more` (0: the call's own), with the
/// kind's bits added: [`CLONE`] a clone of the call's `Request` (a 307/308
/// reads its body again), [`CONTROLLED`] under an `AbortController` of its
/// own, [`MANUAL`] with `redirect: "manual"` (we follow redirects hop by
/// hop: its facts carry the `Location`), [`JOIN`] its body, if handed
/// over as a stream, follows the caller's signal after the hand-over (one
/// listener per signal aborts the attempt's controller; otherwise the
/// caller's abort reaches the attempt through the machine).
/// [`LENGTH`] and [`TYPE`] say which of the body's headers its facts carry
/// (`Content-Length` and `Content-Encoding`; `Content-Type`): only those the
/// response body mode reads. [`HAS_BODY`]: its facts say whether the
/// response has a body; without it they say it has, and the machine knows
/// (src/host/attempt/transport.rs `attempt`). Its step ([`step`]) answers
/// as any attempt's; a start that threw fails it as thrown.
pub const FETCH: u32 = 64;
pub const CLONE: u32 = 1;
pub const CONTROLLED: u32 = 2;
pub const MANUAL: u32 = 4;
pub const JOIN: u32 = 8;
pub const LENGTH: u32 = 16;
pub const TYPE: u32 = 32;
pub const HAS_BODY: u32 = 128;
/// Attempt `id`'s response was a redirect its chain follows: the executor
/// follows it hop by hop (js/src/hops.js, with the chain `Machine::chain`
/// gives), and the attempt's step answers the final response's facts.
pub const FOLLOW: u32 = 21;
/// Read attempt `id`'s body (js/src/attempts.js): whole (`arrayBuffer()`),
/// while it streams up to `arg + more · 2^32` bytes, or its next chunk.
/// Its step ([`step`]) answers the length (−1: past the bound, or the end
/// of the chunks).
pub const READ_WHOLE: u32 = 16;
pub const READ_UP_TO: u32 = 17;
pub const READ_NEXT: u32 = 18;
/// Read a copy of call `id`'s `Request` body (a re-send's,
/// `crate::host::attempt::replay`): up to the bound, or whole (where the host shows no
/// body stream); its [`step`] answers the length, −1 past the bound.
pub const COPY_UP_TO: u32 = 19;
pub const COPY_WHOLE: u32 = 20;
/// Attempt `id`'s FETCH step reads the body whole too (`arrayBuffer()`),
/// one event instead of two, when its response is one this rule names: a
/// 2xx of the host's own origin with a body (never a 204 or 205, whose
/// body is null even where the facts do not ask), no `Content-Encoding`, a
/// `Content-Length` of digits from 1 to `arg + more · 2^32`, and for
/// [`WHOLE_JSON`] a `Content-Type` of `application/json` (with or without
/// parameters). The executor applies it as given (js/src/attempts.js
/// `readsWhole`); the facts then end with the length read ([`super::glue::Facts`]'s
/// `read`). Any other response's facts come first, as without it.
pub const WHOLE: u32 = 22;
pub const WHOLE_JSON: u32 = 23;

/// A step's answer as the executor reports it (js/src/executor.js
/// `settled`): the text it packed (an attempt's facts, a failure:
/// src/packed.rs), copied into the module's memory by JS, not read through
/// an import; a number (a length, a status, an attempt's facts as a code:
/// [`Facts::coded`]), passed as one; or any other value (a
/// timer's `undefined`, a text too long for the copy).
pub enum Plain {
    Text(String),
    Number(f64),
    Value(JsValue),
}

impl Plain {
    /// The text, or the value's when it is a string ("" otherwise).
    pub fn into_text(self) -> String {
        match self {
            Plain::Text(text) => text,
            Plain::Number(_) => String::new(),
            Plain::Value(v) => v.as_string().unwrap_or_default(),
        }
    }

    /// An attempt's step answer read as its facts: a number
    /// ([`Facts::coded`]), else packed text ([`Facts::parse`]).
    pub fn facts(self) -> Facts {
        match self {
            Plain::Number(code) => Facts::coded(code),
            text => Facts::parse(&text.into_text()),
        }
    }

    /// The value's number, when it is one.
    pub fn number(&self) -> Option<f64> {
        match self {
            Plain::Text(_) => None,
            Plain::Number(n) => Some(*n),
            Plain::Value(v) => v.as_f64(),
        }
    }
}

/// How a step settled (a plain value), or (for a timer) that it fired.
pub type Answer = Result<Plain, Plain>;

#[derive(Default)]
pub struct Io {
    next_id: Cell<u32>,
    /// New work since the executor last read it, in order.
    work: RefCell<Vec<u32>>,
    /// The redirect chains of attempts started and not yet taken.
    chains: RefCell<Vec<(u32, Chain)>>,
    /// Every wait in progress (an await or a timer), by id, with its answer
    /// once the executor reported it. A report for a wait that is not here
    /// (the loser of a race, dropped) is ignored: nothing it carries (a late
    /// `Response`) is kept.
    waits: RefCell<Vec<(u32, Option<Answer>)>>,
    /// Sleeps that also end when the host comes online.
    online_waits: Cell<u32>,
    /// The host came online while such a sleep waited.
    came_online: Cell<bool>,
}

/// The mailbox of the operation being polled.
pub static CURRENT: Local<RefCell<Option<Rc<Io>>>> = Local::new(RefCell::new(None));

fn current() -> Option<Rc<Io>> {
    CURRENT.with(|c| c.borrow().clone())
}

impl Io {
    /// A mailbox with room for the work of a call's first event (its
    /// attempt's start, the wait for its step and its timer: three quads),
    /// grown only by a longer one.
    pub fn new() -> Io {
        Io { work: RefCell::new(Vec::with_capacity(16)), ..Io::default() }
    }

    /// Empties an ended operation's mailbox for the next one, keeping its
    /// lists' room (`super::machine`'s spare).
    pub fn reset(&mut self) {
        self.next_id.set(0);
        self.work.get_mut().clear();
        self.chains.get_mut().clear();
        self.waits.get_mut().clear();
        self.online_waits.set(0);
        self.came_online.set(false);
    }

    /// A new wait, and its id.
    fn wait(&self) -> u32 {
        let id = self.next_id.get().wrapping_add(1);
        self.next_id.set(id);
        self.waits.borrow_mut().push((id, None));
        id
    }

    pub fn push(&self, kind: u32, id: u32, arg: u32) {
        self.push4(kind, id, arg, 0);
    }

    fn push4(&self, kind: u32, id: u32, arg: u32, more: u32) {
        self.work.borrow_mut().extend([kind, id, arg, more]);
    }

    /// The redirect chain of attempt `id`, for the executor (once).
    pub fn chain(&self, id: u32) -> Option<Chain> {
        let mut chains = self.chains.borrow_mut();
        let at = chains.iter().position(|(i, _)| *i == id)?;
        Some(chains.swap_remove(at).1)
    }

    /// Attempt `id` is no longer the machine's: its start and reads are
    /// not performed when the executor has not read them yet, and its
    /// chain is let go.
    pub fn unqueue(&self, id: u32) {
        self.chain(id);
        let mut work = self.work.borrow_mut();
        let mut at = 0;
        while at + 4 <= work.len() {
            let kind = work[at];
            let acts = kind >= FETCH || matches!(kind, FOLLOW | WHOLE | WHOLE_JSON) || (READ_WHOLE..=READ_NEXT).contains(&kind);
            if acts && work[at + 1] == id {
                work.drain(at..at + 4);
            } else {
                at += 4;
            }
        }
    }

    /// Moves the work since last asked onto `out`, flat (see
    /// `Machine::work_into`); the list keeps its room for the next event's.
    pub fn take_work(&self, out: &mut Vec<u32>) {
        let mut work = self.work.borrow_mut();
        out.extend_from_slice(&work);
        work.clear();
    }

    /// Whether a sleep waits for the host to come online.
    pub fn wants_online(&self) -> bool {
        self.online_waits.get() > 0
    }

    /// Wait `id` was answered (a step settled, a timer fired); false when
    /// no such wait is in progress (one dropped: its answer is ignored).
    pub fn answer(&self, id: u32, result: Answer) -> bool {
        match self.waits.borrow_mut().iter_mut().find(|(i, _)| *i == id) {
            Some((_, answer)) => {
                *answer = Some(result);
                true
            }
            None => false,
        }
    }

    /// The host's `online` event.
    pub fn online(&self) {
        self.came_online.set(self.wants_online());
    }

    fn answered(&self, id: u32) -> bool {
        self.waits.borrow().iter().any(|(i, answer)| *i == id && answer.is_some())
    }

    /// Ends wait `id`: its answer, if it had one.
    fn end(&self, id: u32) -> Option<Answer> {
        let mut waits = self.waits.borrow_mut();
        let at = waits.iter().position(|(i, _)| *i == id)?;
        waits.swap_remove(at).1
    }
}

/// A wait on the executor as the engine awaits it: the executor performs
/// the work and reports how it ended. Dropped unanswered (the attempt's
/// timer won), its answer is ignored.
pub struct Awaited {
    /// What the executor holds as the step to await ([`AWAIT_HELD`]).
    id: u32,
    armed: Option<(Rc<Io>, u32)>,
}

/// Awaits the step in progress of what the executor holds as `id`: the
/// machine hands over no promise, only the number.
pub fn step(id: u32) -> Awaited {
    Awaited { id, armed: None }
}

/// Starts attempt `id` of call `call` through the executor ([`FETCH`]);
/// `None` outside a machine. The attempt's owner keeps the mailbox, to
/// take the start back if it is dropped first ([`Io::unqueue`]).
pub fn fetch(id: u32, call: u32, fetch: u32, bits: u32) -> Option<Rc<Io>> {
    let io = current()?;
    io.push4(FETCH | bits, id, call, fetch);
    Some(io)
}

/// Has the executor follow attempt `id`'s redirect hop by hop as `chain`
/// says ([`FOLLOW`]); its [`step`] answers the final response's facts.
#[cfg_attr(feature = "browser", allow(dead_code))]
pub fn follow(id: u32, chain: Chain) {
    if let Some(io) = current() {
        io.chains.borrow_mut().push((id, chain));
        io.push(FOLLOW, id, 0);
    }
}

/// Has the executor read attempt `id`'s body whole in its FETCH step when
/// the response is one [`WHOLE`]'s rule names, up to `bound` bytes
/// declared (`json`: [`WHOLE_JSON`]'s).
pub fn whole(id: u32, bound: u64, json: bool) {
    if let Some(io) = current() {
        io.push4(if json { WHOLE_JSON } else { WHOLE }, id, bound as u32, (bound >> 32) as u32);
    }
}

/// Has the executor read attempt `id`'s body ([`READ_WHOLE`],
/// [`READ_UP_TO`] `max` bytes, [`READ_NEXT`]), or a copy of call `id`'s
/// ([`COPY_UP_TO`], [`COPY_WHOLE`]); its [`step`] answers.
pub fn read(id: u32, kind: u32, max: u64) {
    if let Some(io) = current() {
        io.push4(kind, id, max as u32, (max >> 32) as u32);
    }
}

impl Future for Awaited {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some((io, id)) = &self.armed {
            let Some(answer) = io.answered(*id).then(|| io.end(*id)).flatten() else {
                return Poll::Pending;
            };
            self.armed = None;
            return Poll::Ready(answer);
        }
        let Some(io) = current() else {
            // Polled outside a machine: nothing can ever report it.
            return Poll::Ready(Err(Plain::Text("saferetry: awaited outside an operation".into())));
        };
        let id = io.wait();
        io.push(AWAIT_HELD, id, self.id);
        self.armed = Some((io, id));
        Poll::Pending
    }
}

impl Drop for Awaited {
    fn drop(&mut self) {
        if let Some((io, id)) = &self.armed {
            io.end(*id);
        }
    }
}

/// A wait of `ms` that the abort of call `call`'s signal ends at once (`Cancelled`; 0: no call),
/// and with `online` also the host's `online` event (`Elapsed`). A wait of
/// 0 sets no timer; a timer is cleared when its sleep is dropped. Every
/// delay is clamped to 2^31−1 ms, which `setTimeout` would otherwise treat
/// as 0.
pub struct Sleep {
    ms: u64,
    call: u32,
    online: bool,
    armed: Option<(Rc<Io>, u32)>,
}

pub fn sleep(ms: u64, call: u32, online: bool) -> Sleep {
    Sleep { ms, call, online, armed: None }
}

impl Sleep {
    fn disarm(&mut self) {
        if let Some((io, id)) = self.armed.take() {
            if io.end(id).is_none() {
                io.push(CLEAR_TIMER, id, 0);
            }
            if self.online {
                io.online_waits.set(io.online_waits.get().saturating_sub(1));
            }
        }
    }
}

impl Future for Sleep {
    type Output = Slept;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Slept> {
        if aborted(self.call) {
            self.disarm();
            return Poll::Ready(Slept::Cancelled);
        }
        if self.ms == 0 {
            return Poll::Ready(Slept::Elapsed);
        }
        match &self.armed {
            Some((io, id)) => {
                let came_online = self.online && io.came_online.replace(false);
                if !came_online && !io.answered(*id) {
                    return Poll::Pending;
                }
                // Its timer is cleared unless that is what fired.
                self.disarm();
                Poll::Ready(Slept::Elapsed)
            }
            None => {
                let Some(io) = current() else {
                    return Poll::Ready(Slept::Cancelled);
                };
                let id = io.wait();
                // `timer_ms` clamps to 2^31−1: it fits.
                io.push(SET_TIMER, id, timer_ms(self.ms) as u32);
                if self.online {
                    io.online_waits.set(io.online_waits.get() + 1);
                }
                self.armed = Some((io, id));
                Poll::Pending
            }
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.disarm();
    }
}
