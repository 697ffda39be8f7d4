//! Submit-then-poll on the same loop: after a successful submit, query the
//! task on the phased schedule until its verdict says done or fatal, or the
//! polling budget ends. Each poll is one attempt through [`run`], so
//! timeouts, cancellation and the shared rate limit apply to it as to any
//! request; the submit is never repeated.

use core::future::Future;

use super::{race, run, Answer, Budget, Call, Clock, Either, Finished, Op, Transport};
use crate::engine::Slept;
use crate::policy::classify::Safety;
use crate::policy::options::Options;
use crate::policy::poll::{gateway_failure, PollSchedule, PollVerdict};
use crate::policy::reason::Reason;
use crate::policy::report::Report;
use crate::policy::state::{Phase, WaitWhy};

/// The caller's verdict on one poll's response.
pub trait Judge<B> {
    fn judge(&self, answer: &Answer<B>) -> impl Future<Output = PollVerdict>;
}

/// Polls until done, fatal, cancelled or out of budget. `submitted` is the
/// report of the submit (started `submitted.elapsed_ms` ago), which this
/// operation's report continues.
#[allow(clippy::too_many_arguments)]
pub async fn poll<T: Transport, C: Clock, J: Judge<T::Body>>(
    options: &Options,
    schedule: &PollSchedule,
    submitted: Report,
    transport: &T,
    judge: &J,
    clock: &C,
    budget: Budget<'_>,
    random: &mut dyn FnMut() -> f64,
    observe: &mut dyn FnMut(Phase),
) -> Finished<T::Body, T::Error> {
    let begin = clock.now_ms();
    let start = begin.saturating_sub(submitted.elapsed_ms);
    let call = Call { options, safety: Safety::Idempotent, body_replayable: true, not_before: None };
    let mut op = Op::new(start, call, observe, None);
    // Polls belong to the submit's operation: not counted, and their
    // successes do not refill the retry quota.
    let budget = Budget { counted: false, quota: false, ..budget };
    let end = begin.saturating_add(schedule.budget_ms);
    op.report = submitted;
    let mut polls = 0u32;
    let mut last = 0u64;
    loop {
        let Some(next) = schedule.next(last) else {
            return op.finish(clock.now_ms(), Reason::Deadline, None, None, None);
        };
        // Never sooner than a Retry-After a poll was answered with; the
        // schedule then continues from there.
        let until = begin.saturating_add(next).max(op.report.not_before.unwrap_or(0));
        last = until - begin;
        if until >= end {
            let retry_at = op.report.not_before.filter(|&at| at >= end);
            let reason = if retry_at.is_some() { Reason::WaitExceedsBudget } else { Reason::Deadline };
            return op.finish(clock.now_ms(), reason, retry_at, None, None);
        }
        let now = clock.now_ms();
        polls += 1;
        op.enter(Phase::Waiting {
            attempt: polls,
            until_ms: until,
            wait_ms: until.saturating_sub(now),
            why: WaitWhy::Poll,
        });
        if clock.sleep(until.saturating_sub(now)).await == Slept::Cancelled {
            return op.finish(clock.now_ms(), Reason::Cancelled, None, None, None);
        }
        let mut one = options.clone();
        one.limits.max_attempts = 1;
        let left = end.saturating_sub(clock.now_ms());
        one.limits.total_ms = one.limits.attempt_ms.min(left).max(1);
        let poll_start = clock.now_ms().saturating_sub(start);
        let one_call = Call { options: &one, ..call };
        let mut inner = |p: Phase| {
            if let Phase::Requesting { .. } = p {
                op.enter(Phase::Requesting { attempt: polls, max: 0 });
            }
        };
        let done = run(one_call, transport, clock, budget, random, &mut inner).await;
        op.report.not_before = op.report.not_before.max(done.report.not_before);
        for mut record in done.report.attempts {
            record.start_ms = record.start_ms.saturating_add(poll_start);
            record.poll = true;
            op.report.attempts.push(record);
        }
        let verdict = match &done.response {
            Some(answer) if gateway_failure(answer.status) => PollVerdict::Transient,
            // The caller's hook is raced against the budget and the cancel:
            // a verdict that never comes must not hold the operation.
            Some(answer) => {
                let left = end.saturating_sub(clock.now_ms());
                match race(judge.judge(answer), clock.sleep(left)).await {
                    Either::Left(verdict) => verdict,
                    Either::Right(Slept::Elapsed) => {
                        return op.finish(clock.now_ms(), Reason::Deadline, None, None, None)
                    }
                    Either::Right(Slept::Cancelled) => {
                        return op.finish(clock.now_ms(), Reason::Cancelled, None, None, None)
                    }
                }
            }
            None if done.phase == Phase::Cancelled => {
                return op.finish(clock.now_ms(), Reason::Cancelled, None, None, None);
            }
            None => PollVerdict::Transient,
        };
        match verdict {
            PollVerdict::Done => {
                return op.finish(clock.now_ms(), Reason::Succeeded, None, done.response, None)
            }
            PollVerdict::Fatal => {
                return op.finish(clock.now_ms(), Reason::TaskFailed, None, done.response, done.cause)
            }
            PollVerdict::Pending | PollVerdict::Transient => {}
        }
    }
}
