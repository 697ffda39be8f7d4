//! A minimal executor for the engine's futures, and JS promises as futures.
//!
//! Why not wasm-bindgen-futures: it polls every task from a microtask it
//! schedules on each wake-up (a `queueMicrotask` crossing, a hop, and a
//! crossing back per wake), and it brings a general queue we do not need.
//! Here a task is polled at once, on the JS callback that woke it: when a
//! `fetch` promise settles or a timer fires, the engine runs in that same
//! callback. The only rule is no re-entry: a wake-up that arrives while some
//! task is being polled (a drop aborting a controller, a subscriber calling
//! back into us) is queued and run as soon as that poll returns.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::mem::ManuallyDrop;
use core::pin::Pin;
use core::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::caller::Thenable;

type Boxed = Pin<Box<dyn Future<Output = JsValue>>>;

struct Task {
    future: RefCell<Option<Boxed>>,
    resolve: Function,
    /// In the ready queue (or woken while being polled).
    queued: Cell<bool>,
}

struct Queue {
    running: Cell<bool>,
    ready: RefCell<VecDeque<Rc<Task>>>,
}

// SAFETY: the module is built without the `atomics` target feature, so
// there is exactly one thread and nothing here is ever shared across threads.
unsafe impl Sync for Queue {}

static QUEUE: Queue = Queue { running: Cell::new(false), ready: RefCell::new(VecDeque::new()) };

/// Runs `future` to completion; the promise resolves with its output. The
/// first poll happens now (or right after the poll in progress).
pub fn spawn(future: impl Future<Output = JsValue> + 'static) -> Promise {
    let mut resolve = None;
    let promise = Promise::new(&mut |res, _| resolve = Some(res));
    // The executor callback runs synchronously inside `new Promise`.
    if let Some(resolve) = resolve {
        let task =
            Rc::new(Task { future: RefCell::new(Some(Box::pin(future))), resolve, queued: Cell::new(false) });
        wake(task);
    }
    promise
}

fn wake(task: Rc<Task>) {
    if task.queued.replace(true) {
        return;
    }
    QUEUE.ready.borrow_mut().push_back(task);
    if QUEUE.running.replace(true) {
        return; // the loop below, further up the stack, will poll it
    }
    loop {
        let next = QUEUE.ready.borrow_mut().pop_front();
        let Some(task) = next else { break };
        task.queued.set(false);
        poll(&task);
    }
    QUEUE.running.set(false);
}

fn poll(task: &Rc<Task>) {
    let waker = unsafe { Waker::from_raw(raw_waker(task.clone())) };
    let mut cx = Context::from_waker(&waker);
    let done = {
        let mut slot = task.future.borrow_mut();
        let Some(future) = slot.as_mut() else { return };
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(value) => {
                // Dropped inside the borrow: wake-ups from destructors are
                // queued (the loop is running), never re-entrant.
                *slot = None;
                Some(value)
            }
            Poll::Pending => None,
        }
    };
    if let Some(value) = done {
        let _ = task.resolve.call1(&JsValue::UNDEFINED, &value);
    }
}

fn raw_waker(task: Rc<Task>) -> RawWaker {
    RawWaker::new(Rc::into_raw(task).cast(), &VTABLE)
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(
    |p| {
        // SAFETY (all four): `p` came from `Rc::into_raw` in `raw_waker`.
        let task = ManuallyDrop::new(unsafe { Rc::from_raw(p.cast::<Task>()) });
        raw_waker(Rc::clone(&task))
    },
    |p| wake(unsafe { Rc::from_raw(p.cast::<Task>()) }),
    |p| {
        let task = ManuallyDrop::new(unsafe { Rc::from_raw(p.cast::<Task>()) });
        wake(Rc::clone(&task));
    },
    |p| drop(unsafe { Rc::from_raw(p.cast::<Task>()) }),
);

type Callbacks = (Closure<dyn FnMut(JsValue)>, Closure<dyn FnMut(JsValue)>);

#[derive(Default)]
struct Settlement {
    result: Cell<Option<Result<JsValue, JsValue>>>,
    waker: Cell<Option<Waker>>,
    /// Kept alive until the promise settles, even if the future is dropped
    /// first (JS would otherwise call a freed closure); the first call
    /// releases both.
    callbacks: Cell<Option<Callbacks>>,
}

impl Settlement {
    fn settle(&self, result: Result<JsValue, JsValue>) {
        drop(self.callbacks.take());
        self.result.set(Some(result));
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

/// A JS promise as a future: `Ok` with its value or `Err` with its reason.
pub struct Settled {
    promise: Option<Promise>,
    state: Rc<Settlement>,
}

impl Settled {
    pub fn new(promise: Promise) -> Settled {
        Settled { promise: Some(promise), state: Rc::default() }
    }
}

impl Future for Settled {
    type Output = Result<JsValue, JsValue>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(result) = self.state.result.take() {
            return Poll::Ready(result);
        }
        if let Some(promise) = self.promise.take() {
            let (ok, err) = (self.state.clone(), self.state.clone());
            let on_ok = Closure::<dyn FnMut(JsValue)>::new(move |v| ok.settle(Ok(v)));
            let on_err = Closure::<dyn FnMut(JsValue)>::new(move |e| err.settle(Err(e)));
            let thenable: &Thenable = promise.unchecked_ref();
            if let Err(e) = thenable.then(&on_ok, &on_err) {
                return Poll::Ready(Err(e));
            }
            self.state.callbacks.set(Some((on_ok, on_err)));
        }
        self.state.waker.set(Some(cx.waker().clone()));
        Poll::Pending
    }
}
