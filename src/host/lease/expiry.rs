//! A time limit for work that runs on wasm-bindgen-futures, outside every
//! operation: each Redis command of a Redis budget's exchange
//! (`super::redis`). Operations and the leased client's exchange wait on
//! the executor's timers instead (`crate::host::operation::io`, js/src/executor.js).

use alloc::rc::Rc;
use core::cell::Cell;
use core::future::{poll_fn, Future};
use core::task::{Poll, Waker};
use gloo_timers::callback::Timeout;

use crate::policy::limits::timer_ms;

/// Resolves after `ms`: a gloo-timers `Timeout` (cleared when dropped, so
/// an answer that comes first leaves no timer to keep Node alive) waking
/// the task that awaits it.
pub fn expiry(ms: u64) -> impl Future<Output = ()> {
    let state = Rc::new((Cell::new(false), Cell::new(None::<Waker>)));
    let s = state.clone();
    // `timer_ms` clamps to 2^31−1, so the conversion never truncates.
    let timer = Timeout::new(timer_ms(ms) as u32, move || {
        s.0.set(true);
        if let Some(w) = s.1.take() {
            w.wake();
        }
    });
    poll_fn(move |cx| {
        let _held = &timer;
        if state.0.get() {
            return Poll::Ready(());
        }
        state.1.set(Some(cx.waker().clone()));
        Poll::Pending
    })
}
