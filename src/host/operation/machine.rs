//! One operation as a sans-IO machine: JS reports an event, the machine
//! runs the engine until it waits again, and answers with the work to do
//! next (its mailbox, `super::io`).
//!
//! Why a machine and not a future on wasm-bindgen-futures: the futures
//! executor, `JsFuture`, gloo's timers and a wasm closure per listener were
//! the floor of the old shape (docs/benchmarks-history.md "Sans-IO spike"); here the
//! engine's future is polled only when something happened, by the export
//! that reports it, and the waiting — promises, timers, the caller's
//! signal, `online` — is the executor's (js/src/executor.js).
//!
//! The one wake-up that does not come from JS: a concurrency permit
//! released by one operation for another that waits in the policy's gate
//! (`policy::budget::concurrency`). Each machine polls with a waker that
//! records its id; the executor takes the ids after every event
//! ([`take_woken`]) and reports a wake-up to those machines.

use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::sync::Arc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::sync::atomic::{AtomicU32, Ordering};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use alloc::task::Wake;
use crate::local::Local;
use wasm_bindgen::prelude::*;

use super::io::{Io, Plain, CURRENT};
use super::outcome::Outcome;

static WOKEN: Local<RefCell<Vec<u32>>> = Local::new(RefCell::new(Vec::new()));
static NEXT_ID: Local<Cell<u32>> = Local::new(Cell::new(0));

/// A machine's waker: records the machine's id for the executor (an
/// atomic only because a `Waker` must be `Sync`: a pooled waker takes the
/// id of the machine it serves next).
struct Woken(AtomicU32);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        WOKEN.with(|w| w.borrow_mut().push(self.0.load(Ordering::Relaxed)));
    }
}

/// The mailbox and waker of the operation that ended last, for the next
/// one to start with (two allocations and their lists' growth less per
/// call; calls made one after another, the common case, reuse them all):
/// only those nothing else holds any more.
static SPARE: Local<Cell<Option<Spare>>> = Local::new(Cell::new(None));
type Spare = (Rc<Io>, Arc<Woken>);

/// Work kinds besides the mailbox's (`super::io`): wake machine `id` (a
/// permit it waited for was released); listen to `online` (`value` true)
/// or stop.
const WAKE: u32 = 3;
const ONLINE: u32 = 4;

type Run<T> = Pin<Box<dyn Future<Output = T>>>;

/// One operation: the engine's future, polled when something happened.
/// `T` is what it ends with (an [`Outcome`]; the wasm tests' futures end
/// with plain values).
pub struct Machine<T = Outcome> {
    id: u32,
    io: Rc<Io>,
    run: Option<Run<T>>,
    output: Option<T>,
    /// The call whose signal the executor listens to (0: none).
    call: u32,
    woken: Arc<Woken>,
    /// Whether the executor listens to `online` for this machine.
    listening: Cell<bool>,
}

impl<T: 'static> Machine<T> {
    /// A machine for `run`, polled once at once (so a `fetch` is called
    /// before the export that started it returns). `call`: the call
    /// (js/src/attempts.js) whose signal the executor listens to, or 0.
    pub fn start(run: impl Future<Output = T> + 'static, call: u32) -> Machine<T> {
        let id = NEXT_ID.with(|n| {
            // Never 0 (the executor's "none"), below 2^31 (`exports::AT_ONCE`).
            n.set((n.get().wrapping_add(1) & 0x7fff_ffff).max(1));
            n.get()
        });
        let pooled = SPARE.with(Cell::take);
        let (io, woken) = match pooled {
            Some((io, woken)) => {
                woken.0.store(id, Ordering::Relaxed);
                (io, woken)
            }
            None => (Rc::new(Io::new()), Arc::new(Woken(AtomicU32::new(id)))),
        };
        let listening = Cell::new(false);
        let mut m = Machine { id, io, run: Some(Box::pin(run)), output: None, call, woken, listening };
        m.step();
        m
    }

    /// Whether the operation has ended (its output not yet taken).
    pub fn ended(&self) -> bool {
        self.output.is_some()
    }

    /// The output, once the operation ended (taken once).
    pub fn output(&mut self) -> Option<T> {
        self.output.take()
    }

    /// Polls the engine until it waits again: whether it has ended.
    fn step(&mut self) -> bool {
        let Some(run) = &mut self.run else {
            return self.output.is_some();
        };
        let previous = CURRENT.with(|c| c.replace(Some(self.io.clone())));
        let waker = Waker::from(self.woken.clone());
        let polled = run.as_mut().poll(&mut Context::from_waker(&waker));
        CURRENT.with(|c| c.replace(previous));
        match polled {
            Poll::Ready(output) => {
                // Dropping the engine's future releases what it held.
                self.run = None;
                self.output = Some(output);
                true
            }
            Poll::Pending => false,
        }
    }

    /// The work since the last event, flat, onto `work`: `[kind, id, arg,
    /// more, …]` (`super::io`'s kinds, then [`WAKE`] machine `id` and
    /// [`ONLINE`]: listen if `arg` is 1, else stop); nothing when there is
    /// none.
    pub fn work_into(&self, work: &mut Vec<u32>) {
        self.io.take_work(work);
        WOKEN.with(|w| work.extend(w.borrow_mut().drain(..).flat_map(|id| [WAKE, id, 0, 0])));
        let online = self.io.wants_online();
        if self.listening.replace(online) != online {
            work.extend([ONLINE, 0, u32::from(online), 0]);
        }
    }

    /// [`Machine::work_into`] a list of its own (the tests read it).
    #[cfg(test)]
    pub fn work(&self) -> Vec<u32> {
        let mut work = Vec::new();
        self.work_into(&mut work);
        work
    }

    /// The step of wait `id` settled (`ok`: fulfilled) with `value`, a
    /// plain value (an attempt's facts, a length, a failure's).
    pub fn on_settled(&mut self, id: u32, ok: bool, value: Plain) -> bool {
        self.io.answer(id, if ok { Ok(value) } else { Err(value) });
        self.step()
    }

    /// The redirect chain a [`super::io::FETCH`] of attempt `id` with the
    /// `CHAIN` bit starts with (js/src/hops.js follows it).
    pub fn chain(&self, id: u32) -> Option<super::chain::Chain> {
        self.io.chain(id)
    }

    /// Timer `id` fired.
    pub fn on_timer(&mut self, id: u32) -> bool {
        self.io.answer(id, Ok(Plain::Value(JsValue::UNDEFINED)));
        self.step()
    }

    /// The host's `online` event.
    pub fn on_online(&mut self) -> bool {
        self.io.online();
        self.step()
    }

    /// The caller's signal aborted, or a permit woke this machine.
    pub fn on_event(&mut self) -> bool {
        self.step()
    }
}

impl<T> Drop for Machine<T> {
    /// Its mailbox and waker are the spare once nothing else holds them
    /// (its future dropped first: what it held of the mailbox with it).
    fn drop(&mut self) {
        self.run = None;
        spare(&mut self.io, &mut self.woken);
    }
}

/// Keeps an ended machine's mailbox, emptied, and its waker as the
/// [`SPARE`] when nothing else holds them (one place, not inlined where
/// each machine is let go).
#[inline(never)]
fn spare(io: &mut Rc<Io>, woken: &mut Arc<Woken>) {
    let (Some(mailbox), Some(_)) = (Rc::get_mut(io), Arc::get_mut(woken)) else {
        return;
    };
    mailbox.reset();
    SPARE.with(|s| s.set(Some((io.clone(), woken.clone()))));
}

// ---- The machines as the executor drives them, by number ----
//
// The executor names a machine by its id and reads its work out of one
// buffer in wasm memory (`workBuffer`): an event is one call with plain
// numbers, and its answer one number — no JS object per machine, per
// event or per work list (each would be an allocation and, for an exported
// struct, a `FinalizationRegistry` entry).

/// The machines running, by id (a few at a time: a list).
static MACHINES: Local<RefCell<Vec<Machine>>> = Local::new(RefCell::new(Vec::new()));

/// Work quads the buffer holds; more wait for the next read (`MORE`).
const BUFFER_QUADS: usize = 32;
/// Past the quads: a started machine's first answer (as an event's) and
/// the call whose signal's `abort` is an event for it (0: none), which
/// js/src/executor.js `begin` reads; then an ended operation's response and
/// cause (`answer_pair`), and where the numbers answered last are
/// (`answer_numbers`): apart from the work, which the executor performs
/// after reading them.
const START: usize = BUFFER_QUADS * 4;
const CALL: usize = START + 1;
const RESPONSE: usize = CALL + 1;
const CAUSE: usize = RESPONSE + 1;
const NUMBERS_AT: usize = CAUSE + 1;
const NUMBERS_LEN: usize = NUMBERS_AT + 1;
static BUFFER: Local<RefCell<[u32; NUMBERS_LEN + 1]>> = Local::new(RefCell::new([0; NUMBERS_LEN + 1]));
/// Work not yet read, per machine, past what the buffer held.
type Left = Vec<(u32, Vec<u32>)>;
static LEFT: Local<RefCell<Left>> = Local::new(RefCell::new(Vec::new()));
/// An event's work on its way to the buffer: one list for every event,
/// whose room stays (an event allocates nothing for its work).
static WORK: Local<RefCell<Vec<u32>>> = Local::new(RefCell::new(Vec::new()));
/// The report's strings of the operation that ended last, until the
/// executor takes them (`outcomeText`).
static TEXT: Local<RefCell<String>> = Local::new(RefCell::new(String::new()));

/// A work read's answer: the number of quads in the buffer, with these
/// bits: the operation ended, its outcome handed over with this answer
/// (`hand_over`); more work waits for the next read; the machine is not
/// there (a late report); the ended operation's report has strings, which
/// `outcomeText` answers.
const ENDED: u32 = 0x100;
const MORE: u32 = 0x200;
const GONE: u32 = 0x400;
const TEXT_WAITS: u32 = 0x800;

/// Starts keeping machine `m` for the executor, which drives it: its
/// number. Its first work is published at once, with what the executor
/// reads before it (`START` and `CALL`): no crossing of its own.
pub fn keep(m: Machine) -> u32 {
    let id = m.id;
    let call = m.call;
    let answer = answered(m, publish_work);
    BUFFER.with(|b| {
        let mut b = b.borrow_mut();
        b[START] = answer;
        b[CALL] = call;
    });
    id
}

/// Runs `event` on machine `id`, taken out while it runs (an operation
/// started inside it is kept meanwhile), then publishes its work.
fn on(id: u32, event: impl FnOnce(&mut Machine) -> bool) -> u32 {
    // Unknown (it ended, or a report came late): nothing to do.
    let Some(mut m) = taken(id) else {
        return GONE;
    };
    event(&mut m);
    answered(m, publish_work)
}

/// Machine `id`, no longer kept (none when it is not).
fn taken(id: u32) -> Option<Machine> {
    MACHINES.with(|ms| {
        let mut ms = ms.borrow_mut();
        let at = ms.iter().position(|m| m.id == id)?;
        Some(ms.swap_remove(at))
    })
}

/// Machine `m`'s answer as `publish` makes it: with its outcome once it
/// ended and the executor has all its work (the machine let go), else
/// with `m` kept for its next event or read.
fn answered(m: Machine, publish: impl FnOnce(&Machine) -> u32) -> u32 {
    let answer = publish(&m);
    if m.ended() && answer & MORE == 0 {
        return answer | hand_over(m);
    }
    MACHINES.with(|ms| ms.borrow_mut().push(m));
    answer
}

/// Publishes machine `m`'s work since the last read: an event's answer.
fn publish_work(m: &Machine) -> u32 {
    WORK.with(|w| {
        let mut work = w.borrow_mut();
        work.clear();
        m.work_into(&mut work);
        publish(m.id, &work)
    })
}

/// Writes what fits of `work` into the buffer, keeps the rest.
fn publish(id: u32, work: &[u32]) -> u32 {
    let (now, left) = work.split_at_checked(BUFFER_QUADS * 4).unwrap_or((work, &[]));
    BUFFER.with(|b| {
        if let Some(to) = b.borrow_mut().get_mut(..now.len()) {
            to.copy_from_slice(now);
        }
    });
    let quads = (now.len() / 4) as u32;
    if left.is_empty() {
        return quads;
    }
    LEFT.with(|l| l.borrow_mut().push((id, left.to_vec())));
    quads | MORE
}

/// Hands machine `m`'s outcome over, the machine let go: the ids of its
/// last response and its cause (the host's error, a cancel's reason; 0:
/// none; js/src/attempts.js `handed`, `thrown`) in the buffer
/// ([`answer_pair`]), its data (`{ kind, reason, message, retryAt?,
/// notBefore?, report }`) as numbers ([`answer_numbers`]) and the report's
/// strings, kept for `outcomeText` when there are any
/// (`crate::host::shared::convert::outcome`; js/src/shape.js). The bits of
/// an answer that says so. The same event's answer carries it: no
/// crossing of its own for an operation that ends.
pub fn hand_over(mut m: Machine) -> u32 {
    let outcome = m.output();
    drop(m);
    let Some(outcome) = outcome else {
        return GONE;
    };
    TEXT.with(|t| {
        let mut text = t.borrow_mut();
        text.clear();
        let mut ids = (0, 0);
        answer_numbers(|n| ids = outcome.hand_over(n, &mut text));
        answer_pair(ids.0, ids.1);
        ENDED | if text.is_empty() { 0 } else { TEXT_WAITS }
    })
}

/// The report's strings of the operation whose outcome was handed over
/// last (empty once taken).
#[wasm_bindgen(js_name = outcomeText)]
pub fn outcome_text() -> String {
    TEXT.with(|t| core::mem::take(&mut *t.borrow_mut()))
}

/// Two numbers for the executor, in the buffer past its work (an
/// outcome's response and cause: `super::outcome`).
fn answer_pair(a: u32, b: u32) {
    BUFFER.with(|buf| {
        let mut buf = buf.borrow_mut();
        buf[RESPONSE] = a;
        buf[CAUSE] = b;
    });
}

/// Numbers for the glue (js/src/shape.js: an outcome, a state, the
/// stats), in one list kept in the module's memory.
static NUMBERS: Local<RefCell<Vec<f64>>> = Local::new(RefCell::new(Vec::new()));

/// Writes the numbers `fill` pushes, with their address and count in the
/// buffer past its work (js/src/shape.js `numbers`, read before anything
/// else runs).
pub fn answer_numbers(fill: impl FnOnce(&mut Vec<f64>)) {
    NUMBERS.with(|n| {
        let mut n = n.borrow_mut();
        n.clear();
        fill(&mut n);
        BUFFER.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf[NUMBERS_AT] = n.as_ptr() as u32;
            buf[NUMBERS_LEN] = n.len() as u32;
        });
    });
}

/// The address of the work buffer in the module's memory.
#[wasm_bindgen(js_name = workBuffer)]
pub fn work_buffer() -> *const u32 {
    BUFFER.with(|b| b.as_ptr().cast())
}

/// Machine `id`'s work since its last read: the rest of a read that
/// answered `MORE`.
#[wasm_bindgen(js_name = machineWork)]
pub fn machine_work(id: u32) -> u32 {
    let left = LEFT.with(|l| {
        let mut l = l.borrow_mut();
        let at = l.iter().position(|(m, _)| *m == id)?;
        Some(l.swap_remove(at).1)
    });
    let Some(work) = left else {
        return on(id, |_| false);
    };
    match taken(id) {
        Some(m) => answered(m, |_| publish(id, &work)),
        None => publish(id, &work),
    }
}

/// The step machine `id` awaits as `wait` settled (`ok`: fulfilled) with
/// `value`: a value other than text or a number (a timer's `undefined`),
/// or a text the text buffer does not take ([`on_text`]: too long, or not
/// ASCII).
#[wasm_bindgen(js_name = onSettled)]
pub fn on_settled(id: u32, wait: u32, ok: bool, value: JsValue) -> u32 {
    settled(id, wait, ok, Plain::Value(value))
}

/// A step settled, whichever export reported it: one copy of the event's
/// path in the module, not one per export (each inlined its own: +1 KB).
#[inline(never)]
fn settled(id: u32, wait: u32, ok: bool, value: Plain) -> u32 {
    on(id, |m| m.on_settled(wait, ok, value))
}

/// The same, with a number (a length, a status, an attempt's facts as a
/// code): passed as one, not as a value read back through an import.
#[wasm_bindgen(js_name = onNumber)]
pub fn on_number(id: u32, wait: u32, ok: bool, value: f64) -> u32 {
    settled(id, wait, ok, Plain::Number(value))
}

/// Bytes of text an event can carry in the text buffer (js/src/executor.js
/// `settled` writes an ASCII text that fits, as `textBytes` says; any
/// other goes as a value).
const TEXT_BYTES: usize = 1024;
/// Where the executor writes a step's text (ASCII) before [`on_text`]: no
/// import to read it, no allocation to pass it.
static TEXT_IN: Local<RefCell<[u8; TEXT_BYTES]>> = Local::new(RefCell::new([0; TEXT_BYTES]));

/// The address of the text buffer in the module's memory.
#[wasm_bindgen(js_name = textBuffer)]
pub fn text_buffer() -> *const u8 {
    TEXT_IN.with(|t| t.as_ptr().cast())
}

/// The text buffer's size in bytes: read by the executor once, so what it
/// writes never outgrows the buffer.
#[wasm_bindgen(js_name = textBytes)]
pub fn text_bytes() -> usize {
    TEXT_BYTES
}

/// The same, with the text of `len` bytes the executor wrote into the text
/// buffer: ASCII (js/src/executor.js `copied`; any other text goes as a
/// value, which wasm-bindgen passes as UTF-8), read byte by byte, so the
/// module links no UTF-8 validator for it (0.3 KB gzip of a page). Were a
/// byte not ASCII, the text would end before it, not trap.
#[wasm_bindgen(js_name = onText)]
pub fn on_text(id: u32, wait: u32, ok: bool, len: usize) -> u32 {
    let text = TEXT_IN.with(|t| {
        let t = t.borrow();
        let bytes = t.get(..len).unwrap_or_default();
        // One allocation, as long as the text: collected alone, the string
        // would grow (and copy) several times on the way.
        let mut text = String::with_capacity(bytes.len());
        text.extend(bytes.iter().take_while(|b| b.is_ascii()).map(|&b| char::from(b)));
        text
    });
    settled(id, wait, ok, Plain::Text(text))
}

#[wasm_bindgen(js_name = onTimer)]
pub fn on_timer(id: u32, timer: u32) -> u32 {
    on(id, |m| m.on_timer(timer))
}

#[wasm_bindgen(js_name = onOnline)]
pub fn on_online(id: u32) -> u32 {
    on(id, Machine::on_online)
}

#[wasm_bindgen(js_name = onEvent)]
pub fn on_event(id: u32) -> u32 {
    on(id, Machine::on_event)
}

/// The redirect chain of machine `id`'s attempt `attempt` (see [`Machine::chain`]).
#[wasm_bindgen(js_name = machineChain)]
pub fn machine_chain(id: u32, attempt: u32) -> Option<super::chain::Chain> {
    MACHINES.with(|ms| ms.borrow().iter().find(|m| m.id == id).and_then(|m| m.chain(attempt)))
}

// The machine's mechanics on their own, in wasm (`cargo test --target
// wasm32-unknown-unknown --lib`, tier wasm-node): what each wait asks of the
// executor, and what each event resumes. The engine's decisions are tested
// natively; the whole, in every runtime, by the e2e tiers.
#[cfg(test)]
mod tests {
    use super::super::glue::install;
    use super::super::io::{sleep, step, AWAIT_HELD, CLEAR_TIMER, CLONE, CONTROLLED, FETCH, SET_TIMER};
    use crate::host::attempt::transport::Attempt;
    use super::*;
    use crate::engine::{race, Either, Slept};
    use crate::policy::budget::concurrency::Gate;
    use wasm_bindgen_test::wasm_bindgen_test;

    thread_local! {
        /// The executor's side, as far as these machines ask it: whether
        /// call 7's signal has aborted (`fired`), and what was let go
        /// (`ended`), as js/src/attempts.js `aborted` and `end`.
        static GLUE: JsValue = {
            let make = js_sys::Function::new_no_args(
                "return { fired: false, ended: [], aborted(id) { return id === 7 && this.fired; }, end(id) { this.ended.push(id); } }",
            );
            let glue = make.call0(&JsValue::UNDEFINED).unwrap_or_else(|_| unreachable!());
            install(glue.unchecked_ref());
            glue
        };
    }

    /// The events as the tests read them: the output once the operation
    /// ended, else `undefined`.
    trait Events {
        fn answered(&mut self, ended: bool) -> JsValue;
        fn settled(&mut self, id: u32, ok: bool, value: JsValue) -> JsValue;
        fn timer(&mut self, id: u32) -> JsValue;
        fn online(&mut self) -> JsValue;
        fn event(&mut self) -> JsValue;
    }

    impl Events for Machine<JsValue> {
        fn answered(&mut self, ended: bool) -> JsValue {
            if ended { self.output().unwrap_or(JsValue::UNDEFINED) } else { JsValue::UNDEFINED }
        }
        fn settled(&mut self, id: u32, ok: bool, value: JsValue) -> JsValue {
            let ended = self.on_settled(id, ok, Plain::Value(value));
            self.answered(ended)
        }
        fn timer(&mut self, id: u32) -> JsValue {
            let ended = self.on_timer(id);
            self.answered(ended)
        }
        fn online(&mut self) -> JsValue {
            let ended = self.on_online();
            self.answered(ended)
        }
        fn event(&mut self) -> JsValue {
            let ended = self.on_event();
            self.answered(ended)
        }
    }

    /// Field `key` of the test glue.
    fn glue(key: &str) -> JsValue {
        GLUE.with(|g| js_sys::Reflect::get(g, &JsValue::from_str(key)).unwrap_or_else(|_| unreachable!()))
    }

    fn ended() -> Vec<u32> {
        js_sys::Array::from(&glue("ended")).iter().filter_map(|v| v.as_f64()).map(|n| n as u32).collect()
    }

    #[wasm_bindgen_test]
    fn an_attempt_is_a_fetch_for_the_executor_followed_by_the_wait_for_its_step() {
        let run = async {
            let attempt = Attempt::start(3, 9, CONTROLLED | CLONE);
            JsValue::from(step(attempt.id()).await.is_ok())
        };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        let id = work[1];
        assert!(id >= 0x8000_0000, "the machine's own half of the ids");
        assert_eq!(work, [FETCH | CONTROLLED | CLONE, id, 3, 9, AWAIT_HELD, work[5], id, 0], "start, then await");
        assert!(m.chain(id).is_none(), "no chain until a redirect");
        assert_eq!(m.settled(work[5], true, JsValue::from("facts")), JsValue::TRUE);
    }

    #[wasm_bindgen_test]
    fn an_attempt_dropped_before_the_executor_read_its_start_is_never_started() {
        let before = ended(); // (the test glue installed first)
        let run = async {
            let attempt = Attempt::start(3, 0, CONTROLLED);
            let id = attempt.id();
            drop(attempt);
            sleep(100, 0, false).await;
            JsValue::from(id)
        };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        assert_eq!(work[0], SET_TIMER, "no start left, only the sleep: {work:?}");
        assert_eq!(work.len(), 4);
        let id = m.timer(work[1]).as_f64().unwrap_or(0.0) as u32;
        assert!(!before.contains(&id) && ended().contains(&id), "what it named is let go");
    }

    #[wasm_bindgen_test]
    fn a_sleep_sets_one_timer_clamped_to_2_pow_31_minus_1_and_ends_when_that_timer_fires() {
        let mut m = Machine::start(async { JsValue::from(sleep(u64::MAX, 0, false).await == Slept::Elapsed) }, 0);
        let work = m.work();
        assert_eq!(work, [SET_TIMER, work[1], 2_147_483_647, 0]);
        assert!(m.timer(work[1] + 1).is_undefined(), "another timer");
        assert_eq!(m.timer(work[1]), JsValue::TRUE);
    }

    #[wasm_bindgen_test]
    fn a_sleep_dropped_before_it_fires_clears_its_timer() {
        let run = async { JsValue::from(matches!(race(step(4), sleep(100, 0, false)).await, Either::Left(_))) };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        assert_eq!((work[0], work[2], work[4], work[6]), (AWAIT_HELD, 4, SET_TIMER, 100));
        assert_eq!(m.settled(work[1], true, JsValue::NULL), JsValue::TRUE, "the step won");
        assert_eq!(m.work(), [CLEAR_TIMER, work[5], 0, 0]);
    }

    #[wasm_bindgen_test]
    fn an_online_wait_has_the_executor_listen_to_online_until_it_ends() {
        let mut m = Machine::start(async { JsValue::from(sleep(5000, 0, true).await == Slept::Elapsed) }, 0);
        let work = m.work();
        assert_eq!(work[4..], [ONLINE, 0, 1, 0]);
        assert_eq!(m.online(), JsValue::TRUE);
        assert_eq!(m.work(), [CLEAR_TIMER, work[1], 0, 0, ONLINE, 0, 0, 0]);
    }

    #[wasm_bindgen_test]
    fn the_caller_s_abort_ends_a_sleep_as_cancelled_and_clears_its_timer() {
        assert_eq!(glue("fired"), JsValue::FALSE, "not aborted yet");
        let mut m = Machine::start(async { JsValue::from(sleep(1000, 7, false).await == Slept::Cancelled) }, 7);
        let work = m.work();
        assert_eq!(work[0], SET_TIMER, "not aborted yet: a timer");
        let fired = GLUE.with(|g| js_sys::Reflect::set(g, &JsValue::from_str("fired"), &JsValue::TRUE));
        fired.unwrap_or_else(|_| unreachable!());
        assert_eq!(m.event(), JsValue::TRUE);
        assert_eq!(m.work(), [CLEAR_TIMER, work[1], 0, 0]);
    }

    #[wasm_bindgen_test]
    fn a_machine_let_go_mid_wait_leaves_nothing_to_the_next_one_s_work() {
        let mut a = Machine::start(async { JsValue::from(sleep(100, 0, true).await == Slept::Elapsed) }, 0);
        assert_eq!(a.work()[4..], [ONLINE, 0, 1, 0], "a waits for a timer and `online`");
        drop(a); // its sleep's clearing is queued on its own mailbox
        let mut b = Machine::start(async { JsValue::from(sleep(5000, 0, false).await == Slept::Elapsed) }, 0);
        let work = b.work();
        assert_eq!(work, [SET_TIMER, work[1], 5000, 0], "b's own timer only");
        b.online();
        assert!(b.work().is_empty(), "an `online` event does not end b's sleep");
        assert_eq!(b.timer(work[1]), JsValue::TRUE);
    }

    #[wasm_bindgen_test]
    fn a_permit_released_by_one_operation_wakes_the_machine_waiting_for_it() {
        let gate = Gate::new(1);
        let (first, second) = (gate.clone(), gate);
        let mut a = Machine::start(
            async move {
                let _permit = first.acquire().await;
                let _ = step(1).await;
                JsValue::from("a")
            },
            0,
        );
        let mut b = Machine::start(
            async move {
                let _permit = second.acquire().await;
                JsValue::from("b")
            },
            0,
        );
        assert!(!b.ended(), "b waits for a's permit");
        let work = a.work();
        assert_eq!(a.settled(work[1], true, JsValue::NULL), JsValue::from("a"));
        assert!(a.work().chunks(4).any(|w| w == [WAKE, b.id, 0, 0]), "the executor is told to wake b");
        assert_eq!(b.event(), JsValue::from("b"));
    }
}
