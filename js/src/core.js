// The public API over the wasm `Policy`. Glue only: every retry decision is
// made in Rust (src/policy); this file adapts outcomes to `fetch` semantics
// and to a UI store.
import { Policy } from "./saferetry.js";

/** The fleet's authority (README "Fleet budgets"), for a Durable Object or a leader tab. */
export { BudgetAuthority } from "./saferetry.js";
import { assertLoaded } from "./load.js";

// Response -> the report of the operation that produced it.
const reports = new WeakMap();

/** The wasm side answers `[data, response?, cause?]`, `data` a plain object. */
function outcomeOf([outcome, response, cause]) {
  if (response) outcome.response = response;
  if (cause !== undefined) outcome.cause = cause;
  return outcome;
}

/** A request that ended without a usable response. A `TypeError`, as
 * `fetch`'s own network errors are; recognise it across realms by `name`. */
export class RetryError extends TypeError {
  constructor(outcome) {
    super(`saferetry: ${outcome.message} (${outcome.reason})`, { cause: outcome.cause });
    this.name = "RetryError";
    this.reason = outcome.reason;
    this.report = outcome.report;
    this.retryAt = outcome.retryAt ?? null;
  }
}

/** The report of the operation that produced `response`. */
export function reportOf(response) {
  return reports.get(response);
}

function settle(raw) {
  const [data, response] = raw;
  if (response) {
    reports.set(response, data.report);
    return response;
  }
  const outcome = outcomeOf(raw);
  if (outcome.kind === "cancelled") throw outcome.cause;
  throw new RetryError(outcome);
}

function callerSignal(input, init) {
  return init?.signal ?? (input instanceof Request ? input.signal : undefined);
}

const IDLE = Object.freeze({ state: "idle" });

/** One logical operation as a UI store (`getSnapshot`/`subscribe`). */
class Operation {
  #execute;
  #input;
  #init;
  #snapshot = IDLE;
  #listeners = new Set();
  #controller;
  #result;
  #cancelled; // { reason } once cancel() was called, until retryNow()

  /** `execute(init, observe)` starts the wasm operation for (`input`, `init`). */
  constructor(execute, input, init) {
    this.#execute = execute;
    this.#input = input;
    this.#init = init;
    this.#start(undefined);
  }

  #start(notBefore) {
    const controller = new AbortController();
    this.#controller = controller;
    if (this.#cancelled) controller.abort(this.#cancelled.reason);
    const caller = callerSignal(this.#input, this.#init);
    const retry = notBefore === undefined ? this.#init?.retry : { ...this.#init?.retry, notBefore };
    const init = { ...this.#init, signal: controller.signal, retry };
    const promise = this.#execute(init, (state) => {
      if (this.#controller === controller) this.#set(Object.freeze(state));
    });
    // Registered only once the operation started (a throw above leaves none).
    const forward = () => controller.abort(caller.reason);
    if (caller?.aborted) forward();
    else caller?.addEventListener("abort", forward, { once: true });
    this.#result = promise.then((raw) => {
      caller?.removeEventListener("abort", forward);
      const outcome = outcomeOf(raw);
      if (outcome.response) reports.set(outcome.response, outcome.report);
      return outcome;
    });
  }

  #set(state) {
    this.#snapshot = state;
    for (const listener of [...this.#listeners]) {
      try {
        listener(state);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /** Resolves to `{ kind, reason, retryAt?, message, report, response? }`; never rejects. */
  get result() {
    return this.#result;
  }

  get state() {
    return this.#snapshot;
  }

  getSnapshot = () => this.#snapshot;

  subscribe = (listener) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** Stops the request, its body read and any wait, at once. */
  cancel(reason) {
    this.#cancelled = { reason };
    this.#controller?.abort(reason);
  }

  /** Ends the current operation and starts a fresh one for the same
   * request under the same policy's budgets. It never starts before a
   * Retry-After the server gave (the wasm side reports it as `notBefore`)
   * unless `{ force: true }`. Resolves with the new operation's outcome. */
  retryNow({ force = false } = {}) {
    this.#cancelled = undefined;
    const previous = this.#controller;
    this.#controller = undefined; // the ending operation's states are not shown
    previous?.abort();
    this.#result = this.#result.then(({ notBefore }) => {
      this.#start(force ? undefined : notBefore);
      return this.#result;
    });
    return this.#result;
  }
}

/** Options plus the budgets every call through it shares. */
export class RetryPolicy {
  #policy;

  constructor(options) {
    assertLoaded();
    this.#policy = new Policy(options);
  }

  /** Like `fetch`: resolves with the final Response (body already read).
   * An own property bound to this policy, so SDKs can take it unbound
   * (`fetch: policy.fetch`) and call it with any `this`. */
  fetch = async (input, init) => settle(await this.#policy.execute(input, init));

  /** The operation as a UI store; `result` never rejects. */
  run(input, init) {
    return new Operation((i, observe) => this.#policy.execute(input, i, observe), input, init);
  }

  /** Submit-then-poll: the submit is never repeated; `spec` is
   * `{ status, verdict?, phases?, budgetMs? }`. Returns an operation like `run`. */
  poll(input, init, spec) {
    return new Operation((i, observe) => this.#policy.poll(input, i, spec, observe), input, init);
  }

  /** Counters over every call so far: operations, attempts histogram (1..4, 5+), retries, exhausted, quota level, queued, in flight. */
  stats() {
    return this.#policy.stats();
  }

  /** Gives a shared budget's held tokens back to its authority (pagehide,
   * shutdown); resolves when it answered or gave up. */
  release() {
    return this.#policy.release();
  }

  /** Which runtime's error rules apply here. */
  get runtime() {
    return this.#policy.runtime;
  }
}

let shared;

/** One-shot form: `init.retry` holds the options; calls share one default policy's budgets. */
export function retryFetch(input, init) {
  shared ??= new RetryPolicy();
  return shared.fetch(input, init);
}
