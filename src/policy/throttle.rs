//! Adaptive throttling (DESIGN rule 15): when the upstream is down, stop
//! knocking.
//!
//! Why: a retry budget bounds *retries*, but in an outage every *first*
//! attempt still goes out. A thousand tabs or isolates calling a dead
//! upstream send it a thousand requests a second that cannot succeed —
//! load that keeps it from recovering — and each is a spinner for its
//! user until the answer comes back. Client-side throttling (Google SRE
//! book, "Handling Overload") counts, over a sliding window, the requests
//! the application made and the ones the upstream accepted, and rejects a
//! new request locally with probability
//!
//! ```text
//! p = max(0, (min(requests, MAX_REJECT · (requests + 1)) − K · accepts) / (requests + 1))
//! ```
//!
//! (the book's formula with its first term capped, [`MAX_REJECT`] = 0.97;
//! uncapped below 33 requests in the window). An upstream that accepts at
//! least 1/K of the requests is never throttled; one that accepts nothing
//! sees probes — 3 % of the calls, or 1 in requests + 1 where fewer —
//! which is how its recovery is seen; a budget deciding on its own window
//! also lets a call go after [`PROBE_AFTER_WINDOWS`] windows without a
//! send. A rejected call sends nothing and ends `try-later` at once.
//!
//! `K` and the window are a policy's options (`throttle: { k, windowMs }`,
//! `policy::options::THROTTLE`); `throttle: false` turns it off, and a
//! call's `retry: { throttle: false }` sends whatever the window says
//! (its attempts still count). The window is the policy's own
//! (`budget::InMemory`), or, where the budget is shared, the fleet's: kept
//! by the lease authority from the counts every client reports, and read
//! back with each grant (`budget::lease`, [`Throttle::admit_on`]).
//!
//! Choices, and why (measured on virtual time in tests/throttle.rs):
//! - `requests` counts every attempt the policy sends or rejects, retries
//!   and calls that opted out included (all of them load the upstream, or
//!   would have); only first attempts are rejected here — retries are the
//!   retry quota's to bound. An admitted attempt is counted when it is
//!   sent ([`Throttle::sent`]), not when admitted: one that then waits out
//!   its deadline in the concurrency queue never reached the upstream and
//!   says nothing about it.
//! - the random draw is made only when the probability is above 0, so a
//!   healthy upstream's calls cost no draw.
//! - the window is short: [`WINDOW_MS`] (1.5 s, in [`BUCKETS`] buckets).
//!   With the book's 2 minutes, rejected requests fill the window for
//!   minutes after the upstream is back: recovery takes about
//!   `window / 2 · ln(requests per window)` (each accepted probe lets a
//!   few more through). 1 s recovers faster but reads a 30 % error rate
//!   at 10 calls a second as an outage one call in thirteen; 2 s took 11 s
//!   at 1000 a second (both measured before the cap below).
//! - recovery. After the upstream's return the window still holds the
//!   outage's rejected requests; only accepts clear them, each lowering
//!   `p` by `K / (requests + 1)`, so the calls sent grow by a factor of
//!   about `K` a window. With the book's formula alone, at `requests`
//!   per window an outage lets 1 in `requests + 1` through (about one
//!   call a second at any load): the first accepted probe comes by
//!   chance, and the growth from one accept can die out and wait for the
//!   next (a branching process of about `K` offspring). Measured on
//!   seeded virtual-time runs (tests/throttle.rs: 40 to 200 runs a rate;
//!   tests/fleet_throttle.rs: 100 a round trip; the slowest to be back to
//!   95 % of the load, as the throttle tier measures it): 13.25 s at 10
//!   and 60 calls a second, 13 s at 20, 12.75 s at 1000, and never
//!   within 15 s in some runs at 200 a second and for three leased
//!   clients at 20 a second each (the throttle tier: 3.5–12.5 s). Three
//!   changes:
//!   - the cap ([`MAX_REJECT`], Envoy admission control's
//!     `max_rejection_probability`, 0.8 by default there): at most 97 %
//!     of the calls are rejected, so probes are 3 % of the load — the
//!     return is seen within a fraction of a second and the growth starts
//!     from a few accepts a window, not one — and it caps the requests'
//!     term, not `p`, so every accept counts from the first (capping `p`
//!     left the first accepts below the cap: at 60 a second, 11.5 s in
//!     the slowest run). 0.95 recovers faster (slowest 6.5 s for the
//!     fleet) but sends 5 % of the calls into an outage, which, with the
//!     retries and the outage's first second, takes the throttle tier's
//!     Node processes past 15 % of what `throttle: false` sends; 0.98 is
//!     9.5 s in the slowest fleet run. The cap acts from 33 requests in the
//!     window (22 calls a second at 1.5 s).
//!   - below that rate the cap does nothing, and the probes are too few
//!     to come reliably: a budget deciding alone (unshared, or without a
//!     fleet's picture) lets a call go when it sent nothing for
//!     [`PROBE_AFTER_WINDOWS`] (2) windows. 1.5 windows recovers faster
//!     (slowest 6.25 s at 10 a second) but sends more into an outage
//!     (mean 11.8 % of the calls, largest run 16.7 %, against 10.3 % and
//!     16.0 % without; 2 windows: 11.1 % and 16.0 %). A fleet's
//!     picture has no probe of its own: N clients would send N a window.
//!   - at the cap the probes are evenly spaced: one call in
//!     [`PROBE_EVERY`] (33) goes, from a phase drawn once as the window
//!     reaches the cap (its first call goes on a draw of 32/33 or more,
//!     as on a draw per call), instead of a draw per call. As many go into
//!     an outage (fewer in its worst runs), but with a draw per call the
//!     first probe after the return waited a geometric number of calls,
//!     so at 20 to 30 calls a second, where 3 % is under one probe a
//!     second, the slowest of 500 runs of one budget took 9.25–12.25 s,
//!     and three leased clients at 10 a second each (30 on the fleet's
//!     window: the demo's tabs as they were) had a client's first 200
//!     after up to 13 s in 2000 runs, 0.5 % of them after more than 9 s
//!     (a fresh-clone run of the demo tier failed so once). Spaced: one
//!     budget 8–9.75 s at 25 to 30 a second, the three clients' within
//!     6.6 s in every run. Below the cap's reach (under 22 calls a second
//!     for one budget, or any accept in the window) each call still
//!     draws.
//!
//!   With all three, the slowest of the seeded runs: 7.75 s at 10 calls
//!   a second, 8 s at 20, 6 s at 60, 5 s at 200, 4 s at 1000, 7.25–8 s
//!   (with a 40 ms or a 2 ms round trip to the authority) for three
//!   leased clients at 20 a second each; the medians 3.25–4.5 s. In the
//!   outage the upstream receives 6.5–11 % of the calls (mean; 3.6–10.3 %
//!   before the cap), the fleet 7.2 % (5.4 %); with 30 % random failures
//!   as many go out as before (97.4 % at 10 a second, 99.7–100 % above).
//!   The weakest rates are now below the cap's reach, 10 to 20 calls a
//!   second for one budget, where the quiet-window probe comes one in 3
//!   s: the slowest of 500 runs took 9.25–10 s.
//!   Not done: counting recent accepts more (tried on one budget: accepts
//!   in the newest half of the window counted twice took the slowest run
//!   at 60 a second from 6.75 to 4.75 s, but left 10 a second at 10.75 s,
//!   where the probes, not the growth, are slow; it raises the effective
//!   `K` of a steady partial failure to 3, and a fleet's picture carries
//!   sums, so it would need the buckets on the wire).
//! - below [`MIN_REQUESTS`] in the window nothing is rejected: a few
//!   requests say too little (a 30 % error rate would read as an outage
//!   two times in ten), and a client that sends so few barely loads the
//!   upstream anyway.
//! - "accepted" is our own classification ([`accepted`]): an answer that
//!   is not an overload signal. A status the policy retries (408, 429 and
//!   the 5xx of `retryOn`), a timeout and a network failure are not
//!   accepted; any other answer is — a 4xx the caller caused says the
//!   upstream is up. A cancel, a refusal or a body too large say nothing
//!   about the upstream and count as accepted.
//! - a rejection's `retryAt` is the first moment at which, with no new
//!   requests, the window would reject fewer than half, and never sooner
//!   than the latest server floor (`Retry-After` and the like) seen, kept
//!   until it has passed even when its answer has left the window:
//!   throttling never shortens a server's wait.

use alloc::vec::Vec;
use serde::Serialize;

use super::backoff::{check_random, draw, BadRandom};
use super::classify::{Attempted, Failure, RetryOn};
use super::number::ms;

/// The default `K`: throttle once fewer than half the requests are accepted.
pub const DEFAULT_K: f64 = 2.0;
/// The default window.
pub const WINDOW_MS: u64 = 1500;
/// The window's buckets: it slides by a tenth of itself.
pub const BUCKETS: usize = 10;
/// The shortest window (`throttle.windowMs`): a millisecond per bucket.
pub const MIN_WINDOW_MS: u32 = 10;
const _: () = assert!(MIN_WINDOW_MS as usize == BUCKETS);
/// The longest window (`throttle.windowMs`): ten minutes.
pub const MAX_WINDOW_MS: u64 = 600_000;
/// Requests the window must hold before anything is rejected.
pub const MIN_REQUESTS: u64 = 5;
/// The most a call is rejected with, however few the accepts (Envoy's
/// `max_rejection_probability`): in an outage 3 % of the calls still go
/// out as probes, so the upstream's return is seen within a fraction of
/// a second at any load.
pub const MAX_REJECT: f64 = 0.97;
/// A budget deciding on its own window that has sent nothing for this
/// many windows lets its next call go, whatever the draw: a probe.
pub const PROBE_AFTER_WINDOWS: u64 = 2;
/// At the cap (a window of [`MAX_REJECT`]'s reach without an accept), one
/// call in this many goes: the cap's 3 %, evenly spaced.
pub const PROBE_EVERY: u64 = 33;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrottleConfig {
    /// `K` in the formula, ≥ 1.
    pub k: f64,
    /// The window, in ms (≥ `BUCKETS`).
    pub window_ms: u64,
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        ThrottleConfig { k: DEFAULT_K, window_ms: WINDOW_MS }
    }
}

/// One bucket of the window, or the whole window's sum (or a client's
/// running totals, `budget::lease`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    #[serde(serialize_with = "ms")]
    pub requests: u64,
    #[serde(serialize_with = "ms")]
    pub accepts: u64,
}

impl Counts {
    pub fn plus(self, other: Counts) -> Counts {
        Counts {
            requests: self.requests.saturating_add(other.requests),
            accepts: self.accepts.saturating_add(other.accepts),
        }
    }

    /// What these running totals counted since `before` (none where they
    /// went back).
    pub fn since(self, before: Counts) -> Counts {
        Counts {
            requests: self.requests.saturating_sub(before.requests),
            accepts: self.accepts.saturating_sub(before.accepts),
        }
    }

    /// Whether these counts are at the cap: no accept, and enough requests
    /// for [`MAX_REJECT`] to bound the rejections (33 or more).
    pub fn capped(self) -> bool {
        // u64 → f64 rounds above 2^53 only: far beyond any window's counts.
        #[allow(clippy::cast_precision_loss)]
        let requests = self.requests as f64;
        self.accepts == 0 && requests >= MAX_REJECT * (requests + 1.0)
    }

    /// The probability of rejecting a request with these counts in the window.
    pub fn reject_probability(self, k: f64) -> f64 {
        if self.requests < MIN_REQUESTS {
            return 0.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let (requests, accepts) = (self.requests as f64, self.accepts as f64);
        // The requests' term is capped: at most `MAX_REJECT` of the calls
        // are rejected however few the accepts, and each accept lowers it.
        let top = requests.min(MAX_REJECT * (requests + 1.0));
        let p = (top - k * accepts) / (requests + 1.0);
        if p > 0.0 {
            p
        } else {
            0.0
        }
    }
}

/// Whether an attempt's outcome counts as accepted by the upstream (see
/// the module docs): not a 429, a 503 with a `Retry-After`, a status the
/// policy retries, a timeout or a network failure.
pub fn accepted(attempted: Attempted, retry_on: &RetryOn) -> bool {
    match attempted {
        Attempted::Responded { status, retry_after, .. } => {
            !(status == 429 || (status == 503 && retry_after.is_some()) || retry_on.status(status))
        }
        Attempted::Failed(Failure::Network(_) | Failure::AttemptTimeout | Failure::Deadline) => false,
        Attempted::Failed(Failure::Cancelled | Failure::Refused(_) | Failure::BodyTooLarge) => true,
    }
}

/// The bucket `by` places after `at`, round the window.
fn next(at: usize, by: usize) -> usize {
    at.wrapping_add(by).checked_rem(BUCKETS).unwrap_or(0)
}

/// What [`Throttle::admit`] decided for a first attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Go,
    /// Rejected locally: nothing is sent; try again at `retry_at` (epoch ms).
    Reject { retry_at: u64 },
}

/// A window as plain data (a lease authority's, in its saved state): its
/// width, when its newest bucket began, and its buckets from the oldest to
/// the newest. `K` is not kept: every request that reads the window says
/// its own. Nor is the server floor: an authority records none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowState {
    #[serde(serialize_with = "ms")]
    pub window_ms: u64,
    #[serde(serialize_with = "ms")]
    pub head_ms: u64,
    pub buckets: Vec<Counts>,
}

/// The sliding window of one budget's requests and accepts.
#[derive(Debug, Clone)]
pub struct Throttle {
    config: ThrottleConfig,
    buckets: [Counts; BUCKETS],
    /// The latest server floor (`Retry-After` and the like, epoch ms) seen.
    floor: u64,
    /// The bucket `now` falls in, and the time it started.
    head: usize,
    head_start: u64,
    /// When an attempt was last sent (epoch ms; 0: never).
    last_sent: u64,
    /// At the cap: the calls left until the next probe, this one counted
    /// (0: not at the cap, a phase to draw on reaching it).
    countdown: u64,
}

impl Throttle {
    pub fn new(config: ThrottleConfig) -> Throttle {
        Throttle {
            config,
            buckets: [Counts::default(); BUCKETS],
            floor: 0,
            head: 0,
            head_start: 0,
            last_sent: 0,
            countdown: 0,
        }
    }

    pub fn config(&self) -> ThrottleConfig {
        self.config
    }

    /// Goes on under `config` (a fleet's window follows the `K` and window
    /// its latest request says): a new width starts the window anew with
    /// what it held in its newest bucket.
    pub fn configure(&mut self, now: u64, config: ThrottleConfig) {
        if config.window_ms != self.config.window_ms {
            let (held, floor, last_sent) = (self.counts(now), self.floor, self.last_sent);
            *self = Throttle { floor, last_sent, ..Throttle::new(config) };
            self.add(now, held);
        }
        self.config = config;
    }

    /// This window as plain data (see [`WindowState`]).
    pub fn state(&self) -> WindowState {
        let buckets = (1..=BUCKETS).map(|step| self.buckets[next(self.head, step)]).collect();
        WindowState { window_ms: self.config.window_ms, head_ms: self.head_start, buckets }
    }

    /// A window that goes on from `state` (its newest [`BUCKETS`] buckets),
    /// under `k`.
    pub fn restore(k: f64, state: &WindowState) -> Throttle {
        let mut t = Throttle::new(ThrottleConfig { k, window_ms: state.window_ms.max(BUCKETS as u64) });
        let kept = state.buckets.len().min(BUCKETS);
        let from = state.buckets.len().saturating_sub(BUCKETS);
        for (i, b) in state.buckets.iter().skip(from).enumerate() {
            t.buckets[BUCKETS.saturating_sub(kept).saturating_add(i)] = *b;
        }
        t.head = BUCKETS.saturating_sub(1);
        t.head_start = state.head_ms;
        t
    }

    fn bucket_ms(&self) -> u64 {
        self.config.window_ms.checked_div(BUCKETS as u64).unwrap_or(0).max(1)
    }

    /// Slides the window to `now`: buckets older than the window are emptied.
    fn advance(&mut self, now: u64) {
        let width = self.bucket_ms();
        if now < self.head_start {
            // The clock went back: keep counting in the head bucket.
            return;
        }
        let steps = now.saturating_sub(self.head_start).checked_div(width).unwrap_or(0);
        if steps == 0 {
            return;
        }
        let clear = steps.min(BUCKETS as u64);
        for _ in 0..clear {
            self.head = next(self.head, 1);
            self.buckets[self.head] = Counts::default();
        }
        self.head_start = self.head_start.saturating_add(steps.saturating_mul(width));
    }

    /// The window's counts at `now`.
    pub fn counts(&mut self, now: u64) -> Counts {
        self.advance(now);
        self.buckets.iter().fold(Counts::default(), |sum, b| sum.plus(*b))
    }

    /// Adds counts seen elsewhere (a fleet's, through a shared budget) to
    /// the bucket `now` falls in.
    pub fn add(&mut self, now: u64, counts: Counts) {
        self.advance(now);
        let head = &mut self.buckets[self.head];
        *head = head.plus(counts);
    }

    /// A first attempt is about to start: whether it may. `random` (in
    /// [0, 1)) is drawn only when the probability of a rejection is above
    /// 0; a draw outside [0, 1) is refused. A rejection counts as a
    /// request; an admitted attempt counts when it is [`Throttle::sent`].
    pub fn admit(&mut self, now: u64, random: impl FnOnce() -> f64) -> Result<Admit, BadRandom> {
        self.admit_on(now, None, random)
    }

    /// [`Throttle::admit`], deciding on `seen` when given — a fleet's
    /// window (`budget::lease`) and the earliest time it says to try again
    /// — instead of this window's own counts. A rejection is counted here
    /// and waits for the later of the two windows' `retry_at`.
    pub fn admit_on(
        &mut self,
        now: u64,
        seen: Option<(Counts, u64)>,
        random: impl FnOnce() -> f64,
    ) -> Result<Admit, BadRandom> {
        let own = self.counts(now);
        // Deciding alone, a budget quiet for `PROBE_AFTER_WINDOWS` probes.
        let quiet = self.config.window_ms.saturating_mul(PROBE_AFTER_WINDOWS);
        if seen.is_none() && now >= self.last_sent.saturating_add(quiet) {
            return Ok(Admit::Go);
        }
        let (counts, fleet_retry_at) = seen.unwrap_or((own, 0));
        let p = counts.reject_probability(self.config.k);
        if counts.capped() {
            // At the cap (where `p` is `MAX_REJECT`), one call in
            // `PROBE_EVERY` goes, from a phase drawn on reaching it (the
            // first goes on a draw of 32/33 or more, as on a draw per
            // call): as many probes as a draw per call lets through, but
            // never a long run without one.
            let left = match self.countdown {
                0 => PROBE_EVERY.saturating_sub(draw(PROBE_EVERY, random())?),
                left => left,
            };
            if left <= 1 {
                self.countdown = PROBE_EVERY;
                return Ok(Admit::Go);
            }
            self.countdown = left.saturating_sub(1);
        } else {
            self.countdown = 0;
            if p <= 0.0 || check_random(random())? >= p {
                return Ok(Admit::Go);
            }
        }
        self.add(now, Counts { requests: 1, accepts: 0 });
        Ok(Admit::Reject { retry_at: self.retry_at(now).max(fleet_retry_at) })
    }

    /// An attempt (first or retry, admitted or never asked) is sent:
    /// counted as a request.
    pub fn sent(&mut self, now: u64) {
        self.last_sent = self.last_sent.max(now);
        self.add(now, Counts { requests: 1, accepts: 0 });
    }

    /// An attempt ended: whether the upstream accepted it, and the server
    /// floor its answer set (epoch ms), if any.
    pub fn record(&mut self, now: u64, accepted: bool, floor: Option<u64>) {
        self.add(now, Counts { requests: 0, accepts: u64::from(accepted) });
        self.floor = self.floor.max(floor.unwrap_or(0));
    }

    /// When to try again after a rejection at `now`: the first bucket
    /// boundary after which, with no new requests, fewer than half would be
    /// rejected; at the latest when the whole window has slid past; never
    /// before the latest server floor seen.
    pub fn retry_at(&self, now: u64) -> u64 {
        let width = self.bucket_ms();
        // The buckets from the oldest to the newest; the oldest leaves the
        // window at the head's start plus one bucket.
        let mut left = self.buckets.iter().fold(Counts::default(), |sum, b| sum.plus(*b));
        let mut at = self.head_start.saturating_add(width);
        for step in 1..=BUCKETS {
            let oldest = next(self.head, step);
            let gone = self.buckets[oldest];
            left = Counts {
                requests: left.requests.saturating_sub(gone.requests),
                accepts: left.accepts.saturating_sub(gone.accepts),
            };
            if left.reject_probability(self.config.k) < 0.5 {
                break;
            }
            at = at.saturating_add(width);
        }
        at.max(now).max(self.floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(requests: u64, accepts: u64) -> Counts {
        Counts { requests, accepts }
    }

    #[test]
    fn the_probability_follows_the_sre_formula_with_its_requests_term_capped_above_the_minimum_of_requests() {
        let table: [(Counts, f64, f64); 9] = [
            (counts(0, 0), 2.0, 0.0),
            (counts(4, 0), 2.0, 0.0),
            (counts(5, 0), 2.0, 5.0 / 6.0),
            (counts(10, 5), 2.0, 0.0),
            (counts(10, 4), 2.0, 2.0 / 11.0),
            (counts(10, 4), 1.5, 4.0 / 11.0),
            // Above MAX_REJECT the requests' term is capped …
            (counts(100, 0), 2.0, MAX_REJECT),
            // … and each accept lowers it from there (not from 100/101).
            (counts(100, 1), 2.0, MAX_REJECT - 2.0 / 101.0),
            (counts(100, 50), 2.0, 0.0),
        ];
        for (c, k, p) in table {
            assert!((c.reject_probability(k) - p).abs() < 1e-12, "{c:?} k={k}: {} != {p}", c.reject_probability(k));
        }
    }

    #[test]
    fn deciding_alone_a_budget_that_sent_nothing_for_two_windows_lets_its_next_call_go_whatever_the_draw() {
        let mut t = Throttle::new(ThrottleConfig::default());
        for at in 0..MIN_REQUESTS {
            t.sent(at);
            t.record(at, false, None);
        }
        // From here on every draw of 0 is rejected (the rejections keep
        // the window full once the failures have left it) …
        let (last_sent, quiet) = (MIN_REQUESTS - 1, PROBE_AFTER_WINDOWS * WINDOW_MS);
        for now in (MIN_REQUESTS..last_sent + quiet).step_by(50) {
            assert!(matches!(t.admit(now, || 0.0), Ok(Admit::Reject { .. })), "at {now}");
        }
        // … until two windows have passed since the last send: a probe.
        assert_eq!(t.admit(last_sent + quiet, || 0.0), Ok(Admit::Go), "a probe after two quiet windows");
        t.sent(last_sent + quiet);
        assert!(matches!(t.admit(last_sent + quiet + 1, || 0.0), Ok(Admit::Reject { .. })), "then one only");
        // On a fleet's picture the fleet's draws decide: no probe of its own.
        let fleet = Some((counts(100, 0), 0));
        assert!(matches!(t.admit_on(last_sent + 3 * quiet, fleet, || 0.0), Ok(Admit::Reject { .. })));
    }

    #[test]
    fn at_the_cap_one_call_in_33_goes_evenly_spaced_from_a_phase_drawn_once_and_below_it_each_call_draws() {
        let mut t = Throttle::new(ThrottleConfig::default());
        for at in 0..40 {
            t.sent(at);
            t.record(at, false, None);
        }
        assert!(t.counts(40).capped());
        // Reaching the cap: one draw sets the phase (0.0: the longest wait,
        // as a draw per call would reject it) …
        let mut draws = 0;
        let mut admit = |t: &mut Throttle, r: f64| {
            t.admit(40, || {
                draws += 1;
                r
            })
        };
        let went: Vec<usize> = (0..99).filter(|_| admit(&mut t, 0.0) == Ok(Admit::Go)).collect();
        // … then every 33rd call goes, whatever else would have been drawn.
        assert_eq!(went, [32, 65, 98], "evenly spaced");
        assert_eq!(draws, 1, "a draw only on reaching the cap");
        // A fresh window reaching the cap on a draw of 32/33 or more lets its first call go.
        let mut high = Throttle::new(ThrottleConfig::default());
        for at in 0..40 {
            high.sent(at);
            high.record(at, false, None);
        }
        assert_eq!(high.admit(40, || 0.97), Ok(Admit::Go));
        assert!(matches!(high.admit(40, || 0.999), Ok(Admit::Reject { .. })), "then 32 are rejected");
        // One accept leaves the cap: each call draws again.
        t.record(40, true, None);
        assert!(!t.counts(40).capped());
        assert_eq!(t.admit(40, || 0.999), Ok(Admit::Go));
        assert!(matches!(t.admit(40, || 0.0), Ok(Admit::Reject { .. })));
    }

    #[test]
    fn a_window_kept_as_data_goes_on_where_it_was() {
        let mut t = Throttle::new(ThrottleConfig::default());
        for at in (0..1_400).step_by(100) {
            t.sent(at);
            t.record(at, at % 200 == 0, None);
        }
        let saved = t.state();
        assert_eq!(saved.buckets.len(), BUCKETS);
        let mut back = Throttle::restore(DEFAULT_K, &saved);
        assert_eq!(back.state(), saved, "a restore is exact");
        for now in [1_400, 1_650, 2_000, 2_999, 3_000] {
            assert_eq!(back.counts(now), t.counts(now), "at {now}");
        }
        let mut wider = Throttle::restore(DEFAULT_K, &saved);
        let held = wider.counts(1_450);
        wider.configure(1_450, ThrottleConfig { k: 3.0, window_ms: 3_000 });
        assert_eq!((wider.counts(1_450), wider.config().k), (held, 3.0), "a new width keeps what was held");
        assert_eq!(wider.counts(4_500), Counts::default(), "and slides it out after the new window");
    }
}
