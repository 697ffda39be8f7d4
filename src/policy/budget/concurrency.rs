//! A FIFO concurrency limit. A permit is held for one attempt (request and
//! body read) and released on every exit path by `Drop`; a waiter that
//! gives up (deadline, cancel) leaves the queue at once, and a permit handed
//! to a waiter that is gone passes to the next one.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

#[derive(Default)]
struct Waiter {
    granted: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

pub struct Gate {
    limit: u32,
    in_use: Cell<u32>,
    /// Oldest first. A `Vec`, not a `VecDeque`: the queue is short, and
    /// `VecDeque`'s `retain` and ring logic cost a page 0.5 KB gzip.
    queue: RefCell<Vec<Rc<Waiter>>>,
}

impl Gate {
    pub fn new(limit: u32) -> Rc<Gate> {
        Rc::new(Gate { limit: limit.max(1), in_use: Cell::new(0), queue: RefCell::new(Vec::new()) })
    }

    pub fn in_use(&self) -> u32 {
        self.in_use.get()
    }

    /// A permit is free and nobody is ahead in the queue.
    pub fn available(&self) -> bool {
        self.in_use.get() < self.limit && self.queued() == 0
    }

    pub fn queued(&self) -> usize {
        self.queue.try_borrow().map_or(0, |q| q.len())
    }

    /// Waits for a permit, first come first served.
    pub fn acquire(self: &Rc<Self>) -> Acquire {
        Acquire { gate: self.clone(), waiter: None }
    }

    /// Hands a freed permit to the oldest waiter, or returns it.
    fn release(&self) {
        let next = self.queue.try_borrow_mut().ok().filter(|q| !q.is_empty()).map(|mut q| q.remove(0));
        match next {
            Some(w) => {
                w.granted.set(true);
                if let Some(waker) = w.waker.take() {
                    waker.wake();
                }
            }
            None => self.in_use.set(self.in_use.get().saturating_sub(1)),
        }
    }
}

/// A held permit; dropping it releases the slot.
pub struct Permit(Rc<Gate>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.release();
    }
}

pub struct Acquire {
    gate: Rc<Gate>,
    waiter: Option<Rc<Waiter>>,
}

impl Future for Acquire {
    type Output = Permit;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Permit> {
        let gate = self.gate.clone();
        match &self.waiter {
            None if gate.available() => {
                // `available()` holds: in_use < limit, so this cannot saturate.
                gate.in_use.set(gate.in_use.get().saturating_add(1));
                Poll::Ready(Permit(gate))
            }
            None => {
                let w = Rc::new(Waiter::default());
                w.waker.set(Some(cx.waker().clone()));
                if let Ok(mut q) = gate.queue.try_borrow_mut() {
                    q.push(w.clone());
                }
                self.waiter = Some(w);
                Poll::Pending
            }
            Some(w) if w.granted.get() => {
                self.waiter = None;
                Poll::Ready(Permit(gate))
            }
            Some(w) => {
                w.waker.set(Some(cx.waker().clone()));
                Poll::Pending
            }
        }
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        let Some(w) = self.waiter.take() else { return };
        if w.granted.get() {
            // Granted but never taken: pass the permit on.
            self.gate.release();
        } else if let Ok(mut q) = self.gate.queue.try_borrow_mut() {
            if let Some(at) = q.iter().position(|other| Rc::ptr_eq(other, &w)) {
                q.remove(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::task::Waker;

    fn poll(a: &mut Acquire) -> Option<Permit> {
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(a).poll(&mut cx) {
            Poll::Ready(p) => Some(p),
            Poll::Pending => None,
        }
    }

    #[test]
    fn permits_are_granted_in_arrival_order_and_released_on_drop() {
        let g = Gate::new(2);
        let (mut a, mut b, mut c, mut d) = (g.acquire(), g.acquire(), g.acquire(), g.acquire());
        let pa = poll(&mut a).unwrap();
        let pb = poll(&mut b).unwrap();
        assert!(poll(&mut c).is_none() && poll(&mut d).is_none());
        assert_eq!((g.in_use(), g.queued()), (2, 2));
        drop(pa);
        assert!(poll(&mut d).is_none(), "d came after c");
        let pc = poll(&mut c).unwrap();
        drop(pb);
        let pd = poll(&mut d).unwrap();
        assert_eq!((g.in_use(), g.queued()), (2, 0));
        drop((pc, pd));
        assert_eq!(g.in_use(), 0);
    }

    #[test]
    fn a_waiter_that_gives_up_leaves_the_queue_and_a_granted_permit_passes_on() {
        let g = Gate::new(1);
        let (mut a, mut b, mut c) = (g.acquire(), g.acquire(), g.acquire());
        let pa = poll(&mut a).unwrap();
        assert!(poll(&mut b).is_none() && poll(&mut c).is_none());
        drop(pa); // granted to b, which never takes it
        drop(b);
        let pc = poll(&mut c).unwrap();
        assert_eq!((g.in_use(), g.queued()), (1, 0));
        let mut e = g.acquire();
        assert!(poll(&mut e).is_none());
        drop(e);
        assert_eq!(g.queued(), 0, "a cancelled waiter leaves at once");
        drop(pc);
        assert_eq!(g.in_use(), 0);
    }
}
