//! The engine's clock on the host: `Date.now()`, `navigator.onLine`, and
//! sleeps that are timers of the executor's (`super::io::Sleep`): they end
//! at once when the caller's `AbortSignal` fires (the call's, as the
//! executor holds it) and, waiting for the network, on `online`.

use core::future::Future;

use crate::host::shared::bind::date_now;
use super::glue::{aborted, Glue};
use super::io::sleep;
use crate::engine::{Clock, Slept};

pub struct HostClock<'a> {
    /// The call whose signal cancels the operation (js/src/attempts.js),
    /// or 0: none.
    pub call: u32,
    pub glue: &'a Glue,
}

impl Clock for HostClock<'_> {
    fn now_ms(&self) -> u64 {
        date_now() as u64
    }

    fn cancelled(&self) -> bool {
        aborted(self.call)
    }

    fn sleep(&self, ms: u64) -> impl Future<Output = Slept> {
        sleep(ms, self.call, false)
    }

    /// `navigator.onLine`, where the runtime has it (browsers, workers);
    /// elsewhere always online.
    fn online(&self) -> bool {
        self.glue.on_line() != Some(false)
    }

    fn until_online(&self, ms: u64) -> impl Future<Output = Slept> {
        sleep(ms, self.call, true)
    }
}
