//! One operation as a sans-IO machine: JS reports an event, the machine
//! runs the engine until it waits again, and answers with the work to do
//! next (its mailbox, `super::io`).
//!
//! Why a machine and not a future on wasm-bindgen-futures: the futures
//! executor, `JsFuture`, gloo's timers and a wasm closure per listener were
//! the floor of the old shape (BENCHMARKS.md "Sans-IO spike"); here the
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
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use alloc::task::Wake;
use crate::local::Local;
use wasm_bindgen::prelude::*;

use super::glue::Held;
use super::io::{Io, CURRENT};

static WOKEN: Local<RefCell<Vec<u32>>> = Local::new(RefCell::new(Vec::new()));
static NEXT_ID: Local<Cell<u32>> = Local::new(Cell::new(0));

/// A machine's waker: records the machine's id for the executor.
struct Woken(u32);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        WOKEN.with(|w| w.borrow_mut().push(self.0));
    }
}

/// Work kinds besides the mailbox's (`super::io`): wake machine `id` (a
/// permit it waited for was released); listen to `online` (`value` true)
/// or stop.
const WAKE: u32 = 3;
const ONLINE: u32 = 4;

type Run = Pin<Box<dyn Future<Output = JsValue>>>;

#[wasm_bindgen]
pub struct Machine {
    id: u32,
    io: Rc<Io>,
    run: Option<Run>,
    output: Option<JsValue>,
    /// The call whose signal the executor listens to (0: none).
    call: u32,
    waker: Waker,
    /// Whether the executor listens to `online` for this machine.
    listening: Cell<bool>,
}

impl Machine {
    /// A machine for `run`, polled once at once (so a `fetch` is called
    /// before the export that started it returns). `call`: the call
    /// (js/src/attempts.js) whose signal the executor listens to, or 0.
    pub fn start(run: impl Future<Output = JsValue> + 'static, call: u32) -> Machine {
        let id = NEXT_ID.with(|n| {
            n.set(n.get().wrapping_add(1));
            n.get()
        });
        let waker = Waker::from(Arc::new(Woken(id)));
        let listening = Cell::new(false);
        let mut m =
            Machine { id, io: Rc::default(), run: Some(Box::pin(run)), output: None, call, waker, listening };
        m.step();
        m
    }

    /// The output, when the operation ended in its first poll.
    pub fn ended(&self) -> Option<JsValue> {
        self.output.clone()
    }

    /// Polls the engine until it waits again; the output once it ended.
    fn step(&mut self) -> JsValue {
        let Some(run) = &mut self.run else {
            return JsValue::UNDEFINED;
        };
        let previous = CURRENT.with(|c| c.replace(Some(self.io.clone())));
        let polled = run.as_mut().poll(&mut Context::from_waker(&self.waker));
        CURRENT.with(|c| c.replace(previous));
        match polled {
            Poll::Ready(output) => {
                // Dropping the engine's future releases what it held.
                self.run = None;
                self.output = Some(output.clone());
                output
            }
            Poll::Pending => JsValue::UNDEFINED,
        }
    }
}

#[wasm_bindgen]
impl Machine {
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The call whose signal's `abort` is an event (`onEvent`; 0: none).
    #[wasm_bindgen(getter)]
    pub fn call(&self) -> u32 {
        self.call
    }

    /// The operation's output, once it ended (taken once).
    pub fn output(&mut self) -> JsValue {
        self.output.take().unwrap_or(JsValue::UNDEFINED)
    }

    /// The work since the last event, flat: `[kind, id, arg, more, …]`
    /// (`super::io`'s kinds, then [`WAKE`] machine `id` and [`ONLINE`]:
    /// listen if `arg` is 1, else stop); empty when there is none. Numbers
    /// only (a typed array, copied out of wasm memory).
    pub fn work(&self) -> Vec<u32> {
        let mut work = self.io.take_work();
        WOKEN.with(|w| work.extend(w.borrow_mut().drain(..).flat_map(|id| [WAKE, id, 0, 0])));
        let online = self.io.wants_online();
        if self.listening.replace(online) != online {
            work.extend([ONLINE, 0, u32::from(online), 0]);
        }
        work
    }

    /// The step of wait `id` settled (`ok`: fulfilled) with `value`, a
    /// plain value (an attempt's facts, a length, a failure's).
    #[wasm_bindgen(js_name = onSettled)]
    pub fn on_settled(&mut self, id: u32, ok: bool, value: JsValue) -> JsValue {
        self.io.answer(id, if ok { Ok(value) } else { Err(value) });
        self.step()
    }

    /// The redirect chain a [`super::io::FETCH`] of attempt `id` with the
    /// `CHAIN` bit starts with (js/src/hops.js follows it).
    pub fn chain(&self, id: u32) -> Option<super::hops::Chain> {
        self.io.chain(id)
    }

    /// Hook call or await `id` returned or resolved (`ok`), or threw or
    /// rejected, with the value the executor now holds as `value`. A wait
    /// the machine dropped lets that value go.
    #[wasm_bindgen(js_name = onHeld)]
    pub fn on_held(&mut self, id: u32, ok: bool, value: u32) -> JsValue {
        let answer = if ok { Ok(value.into()) } else { Err(value.into()) };
        if !self.io.answer(id, answer) {
            drop(Held::new(value));
        }
        self.step()
    }

    /// Timer `id` fired.
    #[wasm_bindgen(js_name = onTimer)]
    pub fn on_timer(&mut self, id: u32) -> JsValue {
        self.io.answer(id, Ok(JsValue::UNDEFINED));
        self.step()
    }

    /// The host's `online` event.
    #[wasm_bindgen(js_name = onOnline)]
    pub fn on_online(&mut self) -> JsValue {
        self.io.online();
        self.step()
    }

    /// The caller's signal aborted, or a permit woke this machine.
    #[wasm_bindgen(js_name = onEvent)]
    pub fn on_event(&mut self) -> JsValue {
        self.step()
    }
}

// The machine's mechanics on their own, in wasm (`cargo test --target
// wasm32-unknown-unknown --lib`, tier wasm-node): what each wait asks of the
// executor, and what each event resumes. The engine's decisions are tested
// natively; the whole, in every runtime, by the e2e tiers.
#[cfg(test)]
mod tests {
    use super::super::glue::install;
    use super::super::io::{
        awaited, called, held, sleep, step, AWAIT, AWAIT_HELD, CLEAR_TIMER, CLONE, CONTROLLED, FETCH, SET_TIMER,
        VERDICT_HOOK,
    };
    use super::super::transport::Attempt;
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

    /// Field `key` of the test glue.
    fn glue(key: &str) -> JsValue {
        GLUE.with(|g| js_sys::Reflect::get(g, &JsValue::from_str(key)).unwrap_or_else(|_| unreachable!()))
    }

    fn ended() -> Vec<u32> {
        js_sys::Array::from(&glue("ended")).iter().filter_map(|v| v.as_f64()).map(|n| n as u32).collect()
    }

    #[wasm_bindgen_test]
    fn an_awaited_value_is_work_naming_it_and_only_its_own_answer_resumes_the_operation_with_what_it_settled_as() {
        let run = async { JsValue::from(held(awaited(42).await).map(Held::take).unwrap_or(0)) };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        assert_eq!((work.len(), work[0], work[2]), (4, AWAIT, 42), "await the value held as 42");
        assert!(m.on_held(work[1] + 1, true, 9).is_undefined(), "another answer is not this one");
        assert_eq!(m.on_held(work[1], true, 7), JsValue::from(7), "resolved with the value held as 7");
        assert!(m.work().is_empty());
    }

    #[wasm_bindgen_test]
    fn a_hook_call_is_work_naming_the_hook_and_the_response_and_what_it_returned_or_threw_resumes_the_operation() {
        for ok in [true, false] {
            let run = async { JsValue::from(held(called(VERDICT_HOOK, 5).await).map(Held::take).map_err(Held::take) == Ok(7)) };
            let mut m = Machine::start(run, 0);
            let work = m.work();
            assert_eq!(work, [VERDICT_HOOK, work[1], 5, 0], "call the verdict hook with attempt 5's response");
            assert!(m.on_held(work[1] + 1, true, 0).is_undefined(), "another answer is not this one");
            assert_eq!(m.on_held(work[1], ok, 7), JsValue::from(ok), "returned, or threw");
        }
    }

    #[wasm_bindgen_test]
    fn a_value_held_for_a_wait_the_machine_dropped_is_let_go() {
        let run = async { JsValue::from(matches!(race(awaited(3), sleep(100, 0, false)).await, Either::Right(_))) };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        assert_eq!((work[0], work[4]), (AWAIT, SET_TIMER));
        assert_eq!(m.on_timer(work[5]), JsValue::TRUE, "the timer won: the await is dropped");
        assert!(!ended().contains(&11));
        assert!(m.on_held(work[1], true, 11).is_undefined());
        assert!(ended().contains(&11), "the value its late answer holds is let go");
    }

    #[wasm_bindgen_test]
    fn an_attempt_is_a_fetch_for_the_executor_followed_by_the_wait_for_its_step() {
        let run = async {
            let attempt = Attempt::start(3, 9, CONTROLLED | CLONE, None);
            JsValue::from(step(attempt.id()).await.is_ok())
        };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        let id = work[1];
        assert!(id >= 0x8000_0000, "the machine's own half of the ids");
        assert_eq!(work, [FETCH | CONTROLLED | CLONE, id, 3, 9, AWAIT_HELD, work[5], id, 0], "start, then await");
        assert!(m.chain(id).is_none(), "no chain without the CHAIN bit");
        assert_eq!(m.on_settled(work[5], true, JsValue::from("facts")), JsValue::TRUE);
    }

    #[wasm_bindgen_test]
    fn an_attempt_dropped_before_the_executor_read_its_start_is_never_started() {
        let before = ended(); // (the test glue installed first)
        let run = async {
            let attempt = Attempt::start(3, 0, CONTROLLED, None);
            let id = attempt.id();
            drop(attempt);
            sleep(100, 0, false).await;
            JsValue::from(id)
        };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        assert_eq!(work[0], SET_TIMER, "no start left, only the sleep: {work:?}");
        assert_eq!(work.len(), 4);
        let id = m.on_timer(work[1]).as_f64().unwrap_or(0.0) as u32;
        assert!(!before.contains(&id) && ended().contains(&id), "what it named is let go");
    }

    #[wasm_bindgen_test]
    fn a_sleep_sets_one_timer_clamped_to_2_pow_31_minus_1_and_ends_when_that_timer_fires() {
        let mut m = Machine::start(async { JsValue::from(sleep(u64::MAX, 0, false).await == Slept::Elapsed) }, 0);
        let work = m.work();
        assert_eq!(work, [SET_TIMER, work[1], 2_147_483_647, 0]);
        assert!(m.on_timer(work[1] + 1).is_undefined(), "another timer");
        assert_eq!(m.on_timer(work[1]), JsValue::TRUE);
    }

    #[wasm_bindgen_test]
    fn a_sleep_dropped_before_it_fires_clears_its_timer() {
        let run = async { JsValue::from(matches!(race(step(4), sleep(100, 0, false)).await, Either::Left(_))) };
        let mut m = Machine::start(run, 0);
        let work = m.work();
        assert_eq!((work[0], work[2], work[4], work[6]), (AWAIT_HELD, 4, SET_TIMER, 100));
        assert_eq!(m.on_settled(work[1], true, JsValue::NULL), JsValue::TRUE, "the step won");
        assert_eq!(m.work(), [CLEAR_TIMER, work[5], 0, 0]);
    }

    #[wasm_bindgen_test]
    fn an_online_wait_has_the_executor_listen_to_online_until_it_ends() {
        let mut m = Machine::start(async { JsValue::from(sleep(5000, 0, true).await == Slept::Elapsed) }, 0);
        let work = m.work();
        assert_eq!(work[4..], [ONLINE, 0, 1, 0]);
        assert_eq!(m.on_online(), JsValue::TRUE);
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
        assert_eq!(m.on_event(), JsValue::TRUE);
        assert_eq!(m.work(), [CLEAR_TIMER, work[1], 0, 0]);
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
        assert!(b.ended().is_none(), "b waits for a's permit");
        let work = a.work();
        assert_eq!(a.on_settled(work[1], true, JsValue::NULL), JsValue::from("a"));
        assert!(a.work().chunks(4).any(|w| w == [WAKE, b.id(), 0, 0]), "the executor is told to wake b");
        assert_eq!(b.on_event(), JsValue::from("b"));
    }
}
