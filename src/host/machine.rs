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
use std::task::Wake;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::io::{Io, CURRENT};

thread_local! {
    static WOKEN: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u32> = const { Cell::new(0) };
}

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
    signal: Option<AbortSignal>,
    waker: Waker,
    /// Whether the executor listens to `online` for this machine.
    listening: Cell<bool>,
}

impl Machine {
    /// A machine for `run`, polled once at once (so a `fetch` is called
    /// before the export that started it returns). `signal`: the caller's,
    /// which the executor listens to.
    pub fn start(run: impl Future<Output = JsValue> + 'static, signal: Option<AbortSignal>) -> Machine {
        let id = NEXT_ID.with(|n| {
            n.set(n.get().wrapping_add(1));
            n.get()
        });
        let waker = Waker::from(Arc::new(Woken(id)));
        let listening = Cell::new(false);
        let mut m =
            Machine { id, io: Rc::default(), run: Some(Box::pin(run)), output: None, signal, waker, listening };
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

    /// The caller's signal: its `abort` is an event (`onEvent`).
    #[wasm_bindgen(getter)]
    pub fn signal(&self) -> Option<AbortSignal> {
        self.signal.clone()
    }

    /// The operation's output, once it ended (taken once).
    pub fn output(&mut self) -> JsValue {
        self.output.take().unwrap_or(JsValue::UNDEFINED)
    }

    /// The work since the last event, flat: `[kind, id, arg, …]`
    /// (`super::io`'s kinds, then [`WAKE`] machine `id` and [`ONLINE`]:
    /// listen if `arg` is 1, else stop); empty when there is none. Numbers
    /// only (a typed array, copied out of wasm memory): the promises the
    /// awaits name come from [`Machine::promise`].
    pub fn work(&self) -> Vec<u32> {
        let mut work = self.io.take_work();
        WOKEN.with(|w| work.extend(w.borrow_mut().drain(..).flat_map(|id| [WAKE, id, 0])));
        let online = self.io.wants_online();
        if self.listening.replace(online) != online {
            work.extend([ONLINE, 0, u32::from(online)]);
        }
        work
    }

    /// The promise of the next await in the last `work` (one per call: an
    /// externref each, not a vector to free).
    pub fn promise(&self) -> JsValue {
        self.io.next_promise()
    }

    /// Promise `id` settled (`ok`: fulfilled) with `value`.
    #[wasm_bindgen(js_name = onSettled)]
    pub fn on_settled(&mut self, id: u32, ok: bool, value: JsValue) -> JsValue {
        self.io.settle(id, if ok { Ok(value) } else { Err(value) });
        self.step()
    }

    /// Timer `id` fired.
    #[wasm_bindgen(js_name = onTimer)]
    pub fn on_timer(&mut self, id: u32) -> JsValue {
        self.io.fire(id);
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
