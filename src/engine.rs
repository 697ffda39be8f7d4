//! The retry loop: one logical operation, from the first attempt to a
//! terminal state.
//!
//! It is generic over a [`Transport`] (send one attempt) and a [`Clock`]
//! (read the time, sleep until woken or cancelled), so the same loop runs
//! against the host's `fetch` and timers in wasm and on virtual time in the
//! native tests. It asks `policy` for every decision and only sequences them.
//!
//! Our own timers live here, not in the transport: each attempt races the
//! transport against a sleep bounded by `attemptMs` and the deadline. The
//! loser is dropped, and the host transport aborts its request on drop, so
//! one mechanism stops the request, its body read and any wait, whichever
//! signal comes first.

pub mod poll;

use alloc::string::String;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::rc::Rc;

use crate::policy::budget::concurrency::{Gate, Permit};
use crate::policy::budget::{Counting, SharedState, Stats};
use crate::policy::classify::{classify, Attempted, Failure, Safety, Stage, Verdict, WaitKind};
use crate::policy::limits::Timer;
use crate::policy::options::Options;
use crate::policy::rate_limit::FloorHeaders;
use crate::policy::reason::Reason;
use crate::policy::report::{AttemptRecord, ErrorInfo, Report};
use crate::policy::retry::{plan_retry, Planned, RetryCase};
use crate::policy::retry_after::RetryAfter;
use crate::policy::state::{Phase, StateMachine, WaitWhy};
use crate::policy::throttle::{accepted, Admit};

/// How a sleep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slept {
    Elapsed,
    Cancelled,
}

/// Time, and the operation's cancellation.
pub trait Clock {
    /// Unix epoch milliseconds.
    fn now_ms(&self) -> u64;
    /// Resolves after `ms`, or as soon as the operation is cancelled.
    fn sleep(&self, ms: u64) -> impl Future<Output = Slept>;
    fn cancelled(&self) -> bool;
    /// Whether the host believes it is online (true where it cannot tell).
    fn online(&self) -> bool;
    /// Like `sleep`, but also wakes (as `Elapsed`) when the host comes
    /// back online.
    fn until_online(&self, ms: u64) -> impl Future<Output = Slept>;
}

/// A response, as the loop needs it; `body` is the transport's own.
#[derive(Debug)]
pub struct Answer<B> {
    pub status: u16,
    /// `Retry-After`, `Retry-After-Ms` and the rate-limit headers.
    pub floor_headers: FloorHeaders,
    /// Cross-origin: headers not exposed by CORS are invisible.
    pub cross_origin: bool,
    pub body: B,
}

/// A failed attempt: the policy's view, the report's, and the original error.
#[derive(Debug)]
pub struct Failed<E> {
    pub failure: Failure,
    pub code: String,
    pub name: String,
    pub error: Option<E>,
}

/// Sends one attempt (request and body read) and classifies its failure.
pub trait Transport {
    type Body;
    type Error;
    fn send(&self, attempt: u32) -> impl Future<Output = Result<Answer<Self::Body>, Failed<Self::Error>>>;
    /// A bounded, redacted snippet of a failed response's body.
    fn snippet(&self, body: &Self::Body) -> Option<String>;
}

/// One operation's request-level facts.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub options: &'a Options,
    pub safety: Safety,
    pub body_replayable: bool,
    /// Epoch ms before which no request may start (a server's Retry-After
    /// carried over from an earlier operation).
    pub not_before: Option<u64>,
}

/// The budgets an operation runs under, shared with the policy's other calls.
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    pub shared: &'a dyn SharedState,
    pub gate: Option<&'a Rc<Gate>>,
    pub stats: &'a Stats,
    /// False when the call opted out of the retry quota.
    pub quota: bool,
    /// Count the operation in `stats` (false for the polls of a submitted
    /// task: the submit is the logical operation, polls are not retries).
    pub counted: bool,
}

/// How an operation ended.
#[derive(Debug)]
pub struct Finished<B, E> {
    pub phase: Phase,
    pub report: Report,
    /// The last response, whenever one arrived.
    pub response: Option<Answer<B>>,
    /// The last error, when the operation ended on one.
    pub cause: Option<E>,
}

/// Runs one logical operation to its end. `random` is drawn once per
/// planned wait, and before the first attempt when adaptive throttling
/// may reject it (each call below its cap; at the cap once, as the
/// window reaches it: `policy::throttle`); `observe` sees every state
/// change.
pub async fn run<T: Transport, C: Clock>(
    call: Call<'_>,
    transport: &T,
    clock: &C,
    budget: Budget<'_>,
    random: &mut dyn FnMut() -> f64,
    observe: &mut dyn FnMut(Phase),
) -> Finished<T::Body, T::Error> {
    let start = clock.now_ms();
    let mut op = Op::new(start, call, observe, budget.counted.then_some(budget.stats));
    // Every end but an attempt's (`conclude`'s) leaves through here: one
    // `finish` for them all.
    let (now, reason, retry_at) = 'end: {
        if clock.cancelled() {
            break 'end (clock.now_ms(), Reason::Cancelled, None);
        }
        let limits = &call.options.limits;
        let deadline = limits.deadline(start);
        // The clock read last, while nothing has been awaited since: the time
        // is read once where it cannot have moved (a read is a call into the
        // host).
        let mut known = Some(start);
        // The wait before the next attempt (entered as the waiting state).
        let mut wait = None;
        if let Some(at) = call.not_before.filter(|&at| at > start) {
            known = None;
            op.report.not_before = Some(at);
            if at >= deadline {
                break 'end (start, Reason::WaitExceedsBudget, Some(at));
            }
            op.enter(Phase::Waiting {
                attempt: 1,
                until_ms: at,
                wait_ms: at - start,
                why: WaitWhy::RetryAfter,
            });
            wait = Some(at - start);
        }
        let mut last_retry_cost = None;
        let mut attempt = 0u32;
        loop {
            if let Some(ms) = wait.take() {
                if clock.sleep(ms).await == Slept::Cancelled {
                    break 'end (clock.now_ms(), Reason::Cancelled, None);
                }
            }
            attempt += 1;
            // Adaptive throttling: a first attempt the upstream would most likely
            // refuse is not sent (a call that opted out is never refused).
            if attempt == 1 && call.options.throttle.is_some() {
                let now = known.unwrap_or_else(|| clock.now_ms());
                known = Some(now);
                match budget.shared.admit(now, random) {
                    Ok(Admit::Go) => {}
                    Ok(Admit::Reject { retry_at }) => break 'end (now, Reason::Throttled, Some(retry_at)),
                    Err(_) => break 'end (now, Reason::InvalidRandom, None),
                }
            }
            let (permit, now) = match admit(&mut op, clock, budget, attempt, deadline, known.take()).await {
                Ok(admitted) => admitted,
                Err((reason, retry_at)) => break 'end (clock.now_ms(), reason, retry_at),
            };
            budget.shared.sent(now);
            let Some((timer_ms, timer)) = limits.attempt_timer(now, deadline) else {
                break 'end (now, Reason::Deadline, None);
            };
            op.enter(Phase::Requesting { attempt, max: limits.max_attempts });
            let in_flight = Counting::new(&budget.stats.in_flight);
            let outcome = match race(transport.send(attempt), clock.sleep(timer_ms)).await {
                Either::Left(outcome) => outcome,
                Either::Right(Slept::Elapsed) => Err(ours(match timer {
                    Timer::Attempt => Failure::AttemptTimeout,
                    Timer::Deadline => Failure::Deadline,
                })),
                Either::Right(Slept::Cancelled) => Err(ours(Failure::Cancelled)),
            };
            // The request follows the caller's signal too (a streamed body must,
            // after the hand-over): whatever failed once the caller cancelled is
            // the cancel.
            let outcome = match outcome {
                Err(_) if clock.cancelled() => Err(ours(Failure::Cancelled)),
                other => other,
            };
            drop((in_flight, permit));
            let ended = Ended { attempt, start, now, deadline, last_retry_cost };
            wait = match conclude(&mut op, call, transport, clock, budget, random, ended, outcome) {
                Ok(planned) => {
                    last_retry_cost = planned.cost;
                    Some(planned.wait_ms)
                }
                Err(finished) => return finished,
            };
        }
    };
    op.finish(now, reason, retry_at, None, None)
}

/// Where an attempt stood when it ended.
struct Ended {
    attempt: u32,
    /// When the operation started, and this attempt.
    start: u64,
    now: u64,
    deadline: u64,
    last_retry_cost: Option<u32>,
}

/// After an attempt: its record, the server's floor, the verdict, and
/// either the planned wait before the next attempt (shown as the waiting
/// state) or how the operation ended. Plain code between the loop's
/// awaits, kept out of the operation's future.
#[inline(never)]
// The operation's end is returned once, moved straight out: boxing it would
// cost an allocation per operation.
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
fn conclude<T: Transport, C: Clock>(
    op: &mut Op<'_>,
    call: Call<'_>,
    transport: &T,
    clock: &C,
    budget: Budget<'_>,
    random: &mut dyn FnMut() -> f64,
    ended: Ended,
    outcome: Result<Answer<T::Body>, Failed<T::Error>>,
) -> Result<Planned, Finished<T::Body, T::Error>> {
    let Ended { attempt, start, now, deadline, last_retry_cost } = ended;
    let quota = budget.quota.then_some(budget.shared);
    let end = clock.now_ms();
    let mut record = AttemptRecord {
        start_ms: now.saturating_sub(start),
        duration_ms: end.saturating_sub(now),
        ..AttemptRecord::default()
    };
    let (attempted, response, cause) = match outcome {
        Ok(answer) => {
            let floor = answer.floor_headers.floor(answer.status, end);
            let ra = floor.map(|(ra, _)| ra);
            record.status = Some(answer.status);
            record.retry_after_ms = ra.and_then(RetryAfter::floor_ms);
            record.floor_header = floor.map(|(_, header)| header);
            let hidden = answer.cross_origin && ra.is_none() && call.options.retry_on.status(answer.status);
            op.report.retry_after_hidden |= hidden;
            let attempted =
                Attempted::Responded { status: answer.status, retry_after: ra, retry_after_hidden: hidden };
            (attempted, Some(answer), None)
        }
        Err(failed) => {
            let stage = match failed.failure {
                Failure::Network(stage) | Failure::Refused(stage) => stage,
                _ => Stage::MaybeDelivered,
            };
            record.error = Some(ErrorInfo { stage, code: failed.code, name: failed.name });
            (Attempted::Failed(failed.failure), None, failed.error)
        }
    };
    // The server's floor, for a later operation (`retryNow`) and the throttle.
    let floor = record.retry_after_ms.and_then(|f| end.checked_add(f));
    op.report.not_before = op.report.not_before.max(floor);
    budget.shared.answered(end, accepted(attempted, &call.options.retry_on), floor);
    let verdict = classify(attempted, call.safety, &call.options.retry_on);
    let next = match verdict {
        Verdict::Succeeded => {
            op.report.attempts.push(record);
            if let Some(q) = quota {
                q.on_success(last_retry_cost);
            }
            return Err(op.finish(end, Reason::Succeeded, None, response, cause));
        }
        Verdict::Stop(reason) => Err((reason, None)),
        Verdict::Retry(kind) => {
            let case = RetryCase {
                options: call.options,
                kind,
                attempts_made: attempt,
                now_ms: end,
                deadline_ms: deadline,
                body_replayable: call.body_replayable,
                after_timeout: attempted == Attempted::Failed(Failure::AttemptTimeout),
                random: random(),
            };
            plan_retry(case, quota).map(|planned| (kind, planned)).map_err(|r| (r.reason, r.retry_at))
        }
    };
    let (kind, planned) = match next {
        Ok(retry) => retry,
        Err((reason, retry_at)) => {
            op.report.attempts.push(record);
            op.report.snippet = response.as_ref().and_then(|r| op.snippet_of(transport, r));
            return Err(op.finish(clock.now_ms(), reason, retry_at, response, cause));
        }
    };
    record.planned_wait_ms = Some(planned.wait_ms);
    record.wait_kind = Some(kind);
    op.report.attempts.push(record);
    op.enter(Phase::Waiting {
        attempt: attempt + 1,
        until_ms: end.saturating_add(planned.wait_ms),
        wait_ms: planned.wait_ms,
        why: wait_why(kind),
    });
    Ok(planned)
}

/// Waits until the host is online, for a concurrency permit, then for a
/// rate slot; all count against the deadline (no attempt is spent while
/// offline), and a cancel leaves the queue at once. `known` is the time
/// when nothing was awaited since it was read; the answer carries the time
/// at which the attempt may start.
async fn admit<C: Clock>(
    op: &mut Op<'_>,
    clock: &C,
    budget: Budget<'_>,
    attempt: u32,
    deadline: u64,
    mut known: Option<u64>,
) -> Result<(Option<Permit>, u64), (Reason, Option<u64>)> {
    let waiting = |op: &mut Op, until_ms: u64, why| {
        let now = clock.now_ms();
        op.enter(Phase::Waiting { attempt, until_ms, wait_ms: until_ms.saturating_sub(now), why });
        Counting::new(&budget.stats.queued)
    };
    if !clock.online() {
        known = None;
        let _offline = waiting(op, deadline, WaitWhy::Offline);
        let remaining = deadline.saturating_sub(clock.now_ms());
        if clock.until_online(remaining).await == Slept::Cancelled {
            return Err((Reason::Cancelled, None));
        }
        if !clock.online() {
            return Err((Reason::Offline, None));
        }
    }
    let permit = match budget.gate {
        Some(gate) => {
            known = None;
            let acquire = gate.acquire();
            let _queued = (!gate.available()).then(|| waiting(op, deadline, WaitWhy::Queue));
            let remaining = deadline.saturating_sub(clock.now_ms());
            match race(acquire, clock.sleep(remaining)).await {
                Either::Left(permit) => Some(permit),
                Either::Right(Slept::Elapsed) => return Err((Reason::QueueExceedsBudget, None)),
                Either::Right(Slept::Cancelled) => return Err((Reason::Cancelled, None)),
            }
        }
        None => None,
    };
    // Bounded: every refusal names a later time, and the deadline ends it.
    loop {
        let now = known.take().unwrap_or_else(|| clock.now_ms());
        if now >= deadline {
            return Err((Reason::QueueExceedsBudget, None));
        }
        // A reserved start, or a time to ask again before the deadline.
        let (until, reserved) = match budget.shared.reserve_start(now, deadline) {
            Ok(start) => (start, true),
            Err(at) if at > now && at < deadline => (at, false),
            Err(start) => return Err((Reason::QueueExceedsBudget, Some(start))),
        };
        if until > now {
            let _queued = waiting(op, until, WaitWhy::RateLimit);
            if clock.sleep(until - now).await == Slept::Cancelled {
                if reserved {
                    budget.shared.release_start(until);
                }
                return Err((Reason::Cancelled, None));
            }
        }
        if reserved {
            if until <= now {
                return Ok((permit, now));
            }
            // After a wait for the slot, the time read anew; a start whose
            // wait ended long after its time is given up (a shared rate's
            // slot is a moment: started now, it would bunch with the
            // moment's own), and another reserved.
            let woke = clock.now_ms();
            if budget.shared.keep_start(until, woke) {
                return Ok((permit, woke));
            }
            known = Some(woke);
        }
    }
}

fn wait_why(kind: WaitKind) -> WaitWhy {
    match kind {
        WaitKind::Backoff => WaitWhy::Backoff,
        WaitKind::Throttle => WaitWhy::Throttle,
        WaitKind::RetryAfter(_) => WaitWhy::RetryAfter,
    }
}

/// A failure raised by our own timers or the caller's cancellation.
fn ours<E>(failure: Failure) -> Failed<E> {
    let (code, name) = match failure {
        Failure::AttemptTimeout => ("attempt-timeout", "TimeoutError"),
        Failure::Deadline => ("deadline", "TimeoutError"),
        _ => ("cancelled", "AbortError"),
    };
    Failed { failure, code: String::from(code), name: String::from(name), error: None }
}

/// The operation's report and state, built as the loop goes.
struct Op<'o> {
    start: u64,
    safety: Safety,
    /// Where this operation is counted; `None` for a poll, which belongs
    /// to its submit's operation.
    stats: Option<&'o Stats>,
    report: Report,
    machine: StateMachine,
    observe: &'o mut dyn FnMut(Phase),
}

impl<'o> Op<'o> {
    fn new(start: u64, call: Call, observe: &'o mut dyn FnMut(Phase), stats: Option<&'o Stats>) -> Op<'o> {
        if let Some(s) = stats {
            s.operations.set(s.operations.get().saturating_add(1));
        }
        let report = Report::new();
        Op { start, safety: call.safety, stats, report, machine: StateMachine::default(), observe }
    }

    fn enter(&mut self, phase: Phase) {
        if let Some(p) = self.machine.advance(phase) {
            (self.observe)(p);
        }
    }

    /// A snippet only for a failed response that did not say, in its
    /// headers, when to come back.
    fn snippet_of<T: Transport>(&self, transport: &T, answer: &Answer<T::Body>) -> Option<String> {
        let failed = !(200..=299).contains(&answer.status);
        let said_when = answer.floor_headers.floor(answer.status, 0).is_some();
        (failed && !said_when).then(|| transport.snippet(&answer.body)).flatten()
    }

    fn finish<B, E>(
        &mut self,
        now: u64,
        reason: Reason,
        retry_at: Option<u64>,
        response: Option<Answer<B>>,
        cause: Option<E>,
    ) -> Finished<B, E> {
        self.report.elapsed_ms = now.saturating_sub(self.start);
        if let Some(s) = self.stats {
            s.ended(self.report.attempts.len(), reason);
        }
        self.report.reason = reason;
        self.report.retry_at = retry_at;
        let status = self.report.attempts.last().and_then(|a| a.status);
        let phase = Phase::terminal(reason, retry_at, self.safety, status);
        self.enter(phase);
        Finished { phase, report: core::mem::take(&mut self.report), response, cause }
    }
}

/// Which of two raced futures finished first.
pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Polls both futures; the first to finish wins and the other is dropped.
/// `a` is polled first, so a transport that finishes at the very instant
/// its timer fires is not counted as timed out. A plain future, not an
/// `async fn`: no generator of its own around the two.
pub fn race<A: Future, B: Future>(a: A, b: B) -> Race<A, B> {
    Race { a, b }
}

/// The future [`race`] answers.
pub struct Race<A, B> {
    a: A,
    b: B,
}

impl<A: Future, B: Future> Future for Race<A, B> {
    type Output = Either<A::Output, B::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: structural pinning: `a` and `b` are never moved out of a
        // pinned `Race` (it has no `Drop` and hands out no `&mut` to them
        // but these pinned ones), so they stay pinned as it is.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        if let Poll::Ready(x) = unsafe { Pin::new_unchecked(&mut this.a) }.poll(cx) {
            return Poll::Ready(Either::Left(x));
        }
        // SAFETY: as above.
        if let Poll::Ready(y) = unsafe { Pin::new_unchecked(&mut this.b) }.poll(cx) {
            return Poll::Ready(Either::Right(y));
        }
        Poll::Pending
    }
}
