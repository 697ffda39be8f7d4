// `policy.poll()`'s loop, performed (README "Use"): loaded with its wasm
// module (src/host/extra/poller.rs, `Poller`) at the first poll, by the runtime's
// poll-*.js. The machine decides everything — when to find the status
// request and when to query it, what a response or a hook's word means, when
// polling stops and why, the states a subscriber sees — and answers each
// event with one step; this file does what the step says: calls a hook of
// the caller's with a clone of a response (awaiting its answer when it is a
// Promise), sets the one timer, runs a status query (an ordinary operation
// of the policy, js/src/core.js), reports the caller's cancel, and in the end
// composes the outcome: the machine's data, the submit's report with each
// query's attempts added (`phase: "poll"`).
import { end, handed, responseOf, thrown } from "./attempts.js";
import { outcome as shaped } from "./shape.js";

const CANCEL = 1; // js/src/attempts.js `end`: cancel a body nobody read

/** Runs the poll `ctx` describes on the machine class `Poller` (core.js's
 * `poll`: `numbers`, its schedule as core.js lined it up; `submit`,
 * the promise of the submit's outcome as `[data, response, cause, taken]`
 * (core.js `kept`: `taken` is the data as `settle` takes it);
 * `status`, `verdict`; the caller's `signal` and `observe`; `query(target,
 * method, n, leftMs)` starting status query `n`; `mode()`, the shared
 * budget's mode; `settle`, core.js's `outcomeOf`). Resolves with the
 * outcome. */
export function polling(Poller, ctx) {
  return new Promise((resolve, reject) => {
    new Poll(Poller, ctx, resolve, reject).begin().catch(reject);
  });
}

class Poll {
  constructor(Poller, ctx, resolve, reject) {
    this.Poller = Poller;
    this.ctx = ctx;
    this.resolve = resolve;
    this.reject = reject;
    this.machine = undefined;
    this.submit = undefined; // its outcome: [data, response, cause, taken]
    this.target = ctx.status; // the status request, once known
    this.error = undefined; // what a hook threw or rejected with, or a query threw
    this.last = undefined; // the last query's [data, response]
    this.polls = []; // every query's attempts, as the report lists them
    this.timer = undefined;
    this.over = false;
  }

  async begin() {
    this.submit = await this.ctx.submit;
    const [data] = this.submit;
    try {
      this.machine = new this.Poller(this.ctx.numbers, this.ctx.status, this.ctx.verdict);
    } catch (error) {
      return this.finish(() => {
        throw error;
      });
    }
    const { signal } = this.ctx;
    signal?.addEventListener("abort", this);
    if (signal?.aborted) this.machine.cancel();
    const last = data.report.attempts.at(-1);
    this.tell("submitted", data.kind, data.report.elapsedMs, data.notBefore, last?.status);
  }

  /** Reports an event to the machine (none once the poll is over: a late
   * answer) and performs the step it answers. */
  tell(event, ...args) {
    if (!this.over) this.perform(this.machine[event](...args));
  }

  /** The caller's signal aborted: reported after the step in progress, as
   * js/src/executor.js reports it. */
  handleEvent() {
    queueMicrotask(() => this.tell("cancel"));
  }

  /** Shows the step's states, then does its work. */
  perform(text) {
    const step = JSON.parse(text);
    for (const state of step.shown) this.ctx.observe?.(state);
    const work = step.do;
    if (work === "wait" || this.over) return; // (a subscriber may have ended it)
    clearTimeout(this.timer); // one timer at a time: each step replaces it
    if (step.ms !== undefined) this.timer = setTimeout(() => this.tell("timer"), step.ms);
    if (work === "find") {
      this.call(this.ctx.status, this.submit[1], (ok, value) => {
        if (ok) this.target = value;
        else this.error = value;
        this.tell("found", ok);
      });
    } else if (work === "judge") this.call(this.ctx.verdict, this.last[1], (ok, value) => this.tell("judged", ok, value));
    else if (work === "query") this.query(step);
    else if (work === "submit") {
      // The submit's own outcome, its response and cause taken with it.
      const [, response, cause, data] = this.submit;
      this.submit = undefined;
      this.finish(() => this.ctx.settle(data, response, cause));
    } else if (work === "end") this.end(step);
  }

  /** Calls `hook` with a clone of the response held as `id`; `report(ok,
   * value)`: what it returned (awaited when a `Promise`, adopted as
   * `await` would: a `then` that throws rejects), or threw. */
  call(hook, id, report) {
    let value;
    try {
      value = hook(responseOf(id).clone());
    } catch (error) {
      return report(false, error);
    }
    if (value instanceof Promise) {
      new Promise((r) => r(value)).then(
        (v) => report(true, v),
        (e) => report(false, e),
      );
    } else report(true, value);
  }

  query({ method, poll, leftMs, offsetMs }) {
    let answer;
    try {
      answer = this.ctx.query(this.target, method, poll, leftMs);
    } catch (error) {
      this.error = error;
      return this.tell("refused");
    }
    answer.then(
      ([data, response, cause]) => {
        thrown(cause); // a query's failure is never the outcome's cause
        if (this.over) return end(response, CANCEL);
        if (this.last) end(this.last[1], CANCEL);
        this.last = [data, response];
        const { attempts } = data.report;
        for (const a of attempts) this.polls.push({ ...a, startMs: a.startMs + offsetMs, phase: "poll" });
        const status = responseOf(response)?.status;
        this.tell("queried", status, data.kind, data.notBefore, attempts.length, attempts.at(-1)?.status);
      },
      (error) => this.finish(() => {
        throw error;
      }),
    );
  }

  /** The outcome: the machine's data; the report continuing the submit's
   * (its attempts, `retryAfterHidden` and `snippet`) with every query's
   * attempts, the final response's body mode and the shared budget's mode
   * now; the last response when the step says so, and the cause. */
  end(step) {
    const outcome = shaped([this.machine.outcome(), ""]);
    const submitted = this.submit[0].report;
    const last = this.last;
    const pick = (from, keys) => Object.fromEntries(keys.filter((k) => from?.[k] !== undefined).map((k) => [k, from[k]]));
    outcome.report = {
      ...outcome.report,
      attempts: [...submitted.attempts, ...this.polls],
      ...pick(step.response && last[0].report, ["responseBody", "handedOverMs"]),
      ...pick(submitted, ["retryAfterHidden", "snippet"]),
      ...pick({ budget: this.ctx.mode() }, ["budget"]),
    };
    this.finish(() => {
      if (step.response) outcome.response = handed(last[1]);
      else if (last) end(last[1], CANCEL);
      const cause = step.cause === "error" ? this.error : step.cause === "abort" ? this.ctx.signal?.reason : undefined;
      if (cause !== undefined) outcome.cause = cause;
      return outcome;
    });
  }

  /** Lets go of what the poll held (the submit's response and cause, its
   * listener, the machine; its timer went with the step that ended it),
   * then settles with what `make` answers, or rejects with what it throws. */
  finish(make) {
    this.over = true;
    this.ctx.signal?.removeEventListener("abort", this);
    this.machine?.free();
    if (this.submit) {
      end(this.submit[1], CANCEL);
      thrown(this.submit[2]);
    }
    let value;
    try {
      value = make();
    } catch (error) {
      return this.reject(error);
    }
    this.resolve(value);
  }
}
