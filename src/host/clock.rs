//! The engine's clock on the host: `Date.now()`, and sleeps on a
//! gloo-timers `Timeout` that also wake when the caller's `AbortSignal`
//! fires (and, waiting for the network, on `online`). A sleep releases its
//! timer and its listeners when it ends or is dropped; a wait of 0 schedules
//! no timer at all. gloo-timers passes the delay to `setTimeout` as an
//! `i32`: every delay is clamped to 2^31−1 ms first, which `setTimeout`
//! would otherwise treat as 0.

use alloc::rc::Rc;
use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use gloo_timers::callback::Timeout;
use js_sys::Function;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{AbortSignal, EventTarget};

use super::bind::date_now;
use super::glue::Glue;
use crate::engine::{Clock, Slept};
use crate::policy::limits::timer_ms;

pub struct HostClock {
    pub signal: Option<AbortSignal>,
    pub glue: Glue,
}

impl Clock for HostClock {
    fn now_ms(&self) -> u64 {
        date_now() as u64
    }

    fn cancelled(&self) -> bool {
        self.signal.as_ref().is_some_and(AbortSignal::aborted)
    }

    fn sleep(&self, ms: u64) -> impl Future<Output = Slept> {
        Sleep { ms, signal: self.signal.clone(), online: false, armed: None }
    }

    /// `navigator.onLine`, where the runtime has it (browsers, workers);
    /// elsewhere always online.
    fn online(&self) -> bool {
        self.glue.on_line() != Some(false)
    }

    fn until_online(&self, ms: u64) -> impl Future<Output = Slept> {
        Sleep { ms, signal: self.signal.clone(), online: true, armed: None }
    }
}

/// A sleep no signal ends (the fleet's wait for its authority's answer).
pub fn sleep(ms: u64) -> impl Future<Output = Slept> {
    Sleep { ms, signal: None, online: false, armed: None }
}

#[derive(Default)]
struct Shared {
    done: Cell<Option<Slept>>,
    waker: Cell<Option<Waker>>,
}

impl Shared {
    fn wake(&self, how: Slept) {
        if self.done.get().is_none() {
            self.done.set(Some(how));
        }
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

/// What a started sleep holds, released on drop.
struct Armed {
    shared: Rc<Shared>,
    /// Cleared when dropped.
    _timer: Timeout,
    on_abort: Option<Closure<dyn FnMut()>>,
    signal: Option<AbortSignal>,
    on_online: Option<Closure<dyn FnMut()>>,
}

impl Drop for Armed {
    fn drop(&mut self) {
        if let (Some(signal), Some(f)) = (&self.signal, &self.on_abort) {
            let f: &Function = f.as_ref().unchecked_ref();
            let _ = signal.remove_event_listener_with_callback("abort", f);
        }
        if let Some(f) = &self.on_online {
            let global: EventTarget = js_sys::global().unchecked_into();
            let _ = global.remove_event_listener_with_callback("online", f.as_ref().unchecked_ref());
        }
    }
}

struct Sleep {
    ms: u64,
    signal: Option<AbortSignal>,
    /// Also wake on the global `online` event.
    online: bool,
    armed: Option<Armed>,
}

impl Sleep {
    fn arm(&self) -> Armed {
        let shared = Rc::new(Shared::default());
        let s = shared.clone();
        // `timer_ms` clamps to 2^31−1, so the conversion never truncates.
        let timer = Timeout::new(timer_ms(self.ms) as u32, move || s.wake(Slept::Elapsed));
        let on_abort = self.signal.as_ref().map(|signal| {
            let s = shared.clone();
            let f = Closure::<dyn FnMut()>::new(move || s.wake(Slept::Cancelled));
            let _ = signal.add_event_listener_with_callback("abort", f.as_ref().unchecked_ref());
            f
        });
        let on_online = self.online.then(|| {
            let s = shared.clone();
            let f = Closure::<dyn FnMut()>::new(move || s.wake(Slept::Elapsed));
            let global: EventTarget = js_sys::global().unchecked_into();
            let _ = global.add_event_listener_with_callback("online", f.as_ref().unchecked_ref());
            f
        });
        Armed { shared, _timer: timer, on_abort, signal: self.signal.clone(), on_online }
    }
}

impl Future for Sleep {
    type Output = Slept;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Slept> {
        if self.signal.as_ref().is_some_and(AbortSignal::aborted) {
            self.armed = None;
            return Poll::Ready(Slept::Cancelled);
        }
        if self.ms == 0 {
            return Poll::Ready(Slept::Elapsed);
        }
        if self.armed.is_none() {
            let armed = self.arm();
            self.armed = Some(armed);
        }
        let Some(armed) = &self.armed else {
            return Poll::Pending;
        };
        match armed.shared.done.get() {
            Some(how) => {
                self.armed = None;
                Poll::Ready(how)
            }
            None => {
                armed.shared.waker.set(Some(cx.waker().clone()));
                Poll::Pending
            }
        }
    }
}
