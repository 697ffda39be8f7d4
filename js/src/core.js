// The public API over the wasm `Policy`. Glue only: every retry decision is
// made in Rust (src/policy); this file adapts outcomes to `fetch` semantics
// and to a UI store.
import { Policy } from "./saferetry.js";

import { assertLoaded } from "./load.js";

// Response (or the host's own error, for a refused request) -> the report
// of the operation that produced it.
const reports = new WeakMap();

// ---- The transport: which `fetch` a call goes to ----
// Every policy's `fetch` carries this mark, whose value is the `fetch` it
// calls when nothing else is given: the global `fetch` of the moment it was
// loaded. So `globalThis.fetch = policy.fetch` works (the policy, finding
// itself or another policy in the global slot, calls the one beneath), and a
// `fetch` patched in later by a test tool (MSW, nock-style wrappers) is
// called at call time, as plain `fetch` users would see it.
const MARK = Symbol.for("saferetry.fetch");
const HOST = globalThis.fetch?.[MARK] ?? globalThis.fetch;

// A wrapper in the global slot installed over a policy calls that policy
// again for the requests it lets through: with our own `init` object, or
// with `new Request(input, init)` (MSW). Such a call is the one we are
// making, so it goes to the host as it is; counted per method and URL
// while the wrapper has it.
const handedOut = new WeakSet();
const inWrapper = new Map();

function keyOf(input, init) {
  const method = String(init?.method ?? input?.method ?? "GET").toUpperCase();
  let url = input instanceof Request ? input.url : String(input?.href ?? input);
  try {
    url = new URL(url, globalThis.location?.href).href;
  } catch {
    // Not a URL: the wrapper or fetch will say so.
  }
  return `${method} ${url}`;
}

function count(key, by) {
  const n = (inWrapper.get(key) ?? 0) + by;
  if (n > 0) inWrapper.set(key, n);
  else inWrapper.delete(key);
}

/** A wrapper in the global slot, called so that its pass-through to us is recognised. */
function throughWrapper(wrapper) {
  return (input, init) => {
    const key = keyOf(input, init);
    handedOut.add(init);
    count(key, 1);
    let answer;
    try {
      answer = wrapper(input, init);
    } catch (error) {
      count(key, -1);
      throw error;
    }
    const done = () => count(key, -1);
    Promise.resolve(answer).then(done, done);
    return answer;
  };
}

/** The global `fetch` for this call. */
function globalTransport() {
  const current = globalThis.fetch;
  if (current === HOST || typeof current !== "function") return HOST;
  return current[MARK] ?? throughWrapper(current);
}

/** A call a wrapper over us passed back to us: it goes to the host as is. */
function reentered(input, init) {
  if (init !== null && typeof init === "object" && handedOut.has(init)) return true;
  return inWrapper.size > 0 && input instanceof Request && inWrapper.has(keyOf(input, init));
}

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

/** The report of the operation that produced `response` (or, for a request
 * `fetch` refused, the error it rejected with). */
export function reportOf(response) {
  return Object(response) === response ? reports.get(response) : undefined;
}

const READS = ["arrayBuffer", "blob", "bytes", "formData", "json", "text"];

/** A buffered response when the caller passed a signal: like `fetch`'s,
 * reading its body once that signal has aborted fails (the wasm side says
 * with what: `abortError`, else the reason). Checked when read — by the
 * body stream's `pull` and by the read methods, which still disturb the
 * body as a failed read does — so no listener of ours outlives the call. */
function bufferedResponse(bytes, init, signal, abortError) {
  const failure = () => (abortError ? new DOMException("The operation was aborted.", "AbortError") : signal.reason);
  const source = {
    pull(controller) {
      if (signal.aborted) return controller.error(failure());
      controller.enqueue(new Uint8Array(bytes));
      controller.close();
    },
  };
  const response = new Response(new ReadableStream(source, { highWaterMark: 0 }), init);
  for (const name of READS) {
    const read = Response.prototype[name];
    if (!read) continue;
    const value = function () {
      if (!signal.aborted) return read.call(this);
      read.call(this).catch(() => {});
      return Promise.reject(failure());
    };
    Object.defineProperty(response, name, { value, writable: true, configurable: true });
  }
  return response;
}

function settle(raw) {
  const [data, response, cause] = raw;
  if (response) {
    reports.set(response, data.report);
    return response;
  }
  // `fetch` refused the request in a way no retry changes: its own error.
  if (data.reason === "refused") {
    if (Object(cause) === cause) reports.set(cause, data.report);
    throw cause;
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
    const promise = Promise.resolve(
      this.#execute(init, (state) => {
        if (this.#controller === controller) this.#set(Object.freeze(state));
      }),
    );
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
    this.#policy = new Policy(options, bufferedResponse);
  }

  /** Like `fetch`: resolves with the final Response. An own property bound
   * to this policy, so SDKs can take it unbound (`fetch: policy.fetch`) and
   * call it with any `this`, and installable as the global `fetch`. */
  fetch = Object.assign(
    (input, init) => {
      if (reentered(input, init)) return HOST(input, init);
      try {
        const out = this.#policy.execute(input, init, undefined, globalTransport());
        // An operation that ended inside the call (its signal had aborted)
        // settles now, as `fetch`'s promise would.
        return Array.isArray(out) ? Promise.resolve(settle(out)) : out.then(settle);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    { [MARK]: HOST },
  );

  /** The operation as a UI store; `result` never rejects. */
  run(input, init) {
    return new Operation((i, observe) => this.#policy.execute(input, i, observe, globalTransport()), input, init);
  }

  /** Submit-then-poll: the submit is never repeated; `spec` is
   * `{ status, verdict?, phases?, budgetMs? }`. Returns an operation like `run`. */
  poll(input, init, spec) {
    return new Operation((i, observe) => this.#policy.poll(input, i, spec, observe, globalTransport()), input, init);
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

export { tabBudget } from "./tabs.js";
export { memoryStore } from "./outbox-stores/memory.js";
