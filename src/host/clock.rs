//! The engine's clock on the host: `Date.now()`, `navigator.onLine`, and
//! sleeps that are timers of the executor's (`super::io::Sleep`): they end
//! at once when the caller's `AbortSignal` fires and, waiting for the
//! network, on `online`.

use core::future::Future;
use web_sys::AbortSignal;

use super::bind::date_now;
use super::glue::Glue;
use super::io::sleep;
use crate::engine::{Clock, Slept};

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
        sleep(ms, self.signal.clone(), false)
    }

    /// `navigator.onLine`, where the runtime has it (browsers, workers);
    /// elsewhere always online.
    fn online(&self) -> bool {
        self.glue.on_line() != Some(false)
    }

    fn until_online(&self, ms: u64) -> impl Future<Output = Slept> {
        sleep(ms, self.signal.clone(), true)
    }
}
