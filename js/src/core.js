// The public API over the wasm `Policy`. Glue only: every retry decision is
// made in Rust (src/policy); this file adapts outcomes to `fetch` semantics
// and to a UI store.
// The classes of the entry's module: saferetry.js or, in browsers, saferetry_web.js.
import { assertLoaded, Policy, polls } from "./load.js";
import { drive } from "./executor.js";
import { lease, sharedStats } from "./lease.js";
import * as attempts from "./attempts.js";
import { abortBefore, bodyOf, prepare, read } from "./request.js";
import { check, reader } from "./options.js";
import { keeper } from "./kept.js";
import * as shape from "./shape.js";
import { packed } from "./packed.js";

// Response (or the host's own error, for a refused request) -> the report
// of the operation that produced it, or, until someone reads it, the
// outcome's data as the wasm side handed it over (shaped only then),
// kept on the object itself (js/src/kept.js).
const reports = keeper();

/** `report` (or its data) is `object`'s. */
const remember = (object, report) => reports.set(object, report);

// ---- The transport: which `fetch` a call goes to ----
// Every policy's `fetch` carries this mark, whose value is the `fetch` it
// calls when nothing else is given: the global `fetch` of the moment it was
// loaded. So `globalThis.fetch = policy.fetch` works (the policy, finding
// itself or another policy in the global slot, calls the one beneath), and a
// `fetch` patched in later by a test tool (MSW, nock-style wrappers) is
// called at call time, as plain `fetch` users would see it.
const MARK = Symbol.for("saferetry.fetch");
// `fetch` with an observer (js/src/otel.js), as every policy's `fetch` calls it.
const OBSERVED = Symbol.for("saferetry.observed");
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

/** The global `fetch` for this call, `current` in the global slot. */
function globalTransport(current) {
  if (current === HOST || typeof current !== "function") return HOST;
  return current[MARK] ?? throughWrapper(current);
}

/** A call a wrapper over us passed back to us: it goes to the host as is. */
function reentered(input, init) {
  if (init !== null && typeof init === "object" && handedOut.has(init)) return true;
  return inWrapper.size > 0 && input instanceof Request && inWrapper.has(keyOf(input, init));
}

/** An operation's outcome as the wasm side ends it: its data (its numbers
 * and the report's strings, as the executor took them: js/src/executor.js
 * `outcome`), its
 * response's and its cause's numbers (taken from js/src/attempts.js), as
 * one plain object. */
function outcomeOf(data, responseId, causeId) {
  const outcome = shape.outcome(data);
  const response = attempts.handed(responseId);
  const cause = attempts.thrown(causeId);
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
  if (Object(response) !== response) return undefined;
  const held = reports.get(response);
  if (!Array.isArray(held)) return held;
  const { report } = shape.outcome(held);
  remember(response, report);
  return report;
}

/** `policy.fetch`'s answer for an outcome: its response (whose report is
 * read when asked), else the error `fetch` would reject with. */
function settle(data, responseId, causeId, observe) {
  const response = attempts.handed(responseId);
  if (response) {
    remember(response, data);
    return response;
  }
  const outcome = outcomeOf(data, 0, causeId);
  observe?.(outcome); // the outcome of a call that rejects (js/src/otel.js)
  // `fetch` refused the request in a way no retry changes: its own error.
  if (outcome.reason === "refused") {
    const { cause } = outcome;
    if (Object(cause) === cause) remember(cause, outcome.report);
    throw cause;
  }
  if (outcome.kind === "cancelled") throw outcome.cause;
  throw new RetryError(outcome);
}

// ---- The glue's helpers (src/host/operation/glue.rs) ----
// Each moves in one call what the wasm side would otherwise read or build
// one property per crossing. They read and copy; every decision about what
// was read is made in Rust.

const isObject = (v) => typeof v === "object" && v !== null;
const stringOf = (v) => (typeof v === "string" ? v : undefined);

// `callOf`'s flags (src/host/attempt/request.rs).
const REQUEST = 1;
const STREAMED = 2;
const FAKE_REQUEST = 4;
const FAKE_SIGNAL = 8;
const HEADERS = 16;
const ABORTED = 64;
const OWN_KEYS = 128;
const BODY_STREAM = 256; // and BODY_UNKNOWN = 512: `bodyOf`'s 1 and 2 times this
const SIGNAL = 1024;
const WRAPPED = 2048;

/** What the wasm side reads of a call's `input` and `init` (src/host/attempt/request.rs
 * `Given`): `[call, retry, url, strings, flags]` — `strings`: the
 * method, redirect, mode and the Request's own method, packed
 * (js/src/packed.js; none when all four are absent, as for a URL without
 * them); `call`: the id js/src/attempts.js holds the call by
 * (the input, our copy of `init`, the signal `fetch` would follow:
 * `init.signal`, else the Request's own, and the global `fetch` of the
 * moment: `globalTransport`); flags: src/host/attempt/request.rs.
 * Our copy of `init` (a getter that throws rejects the call, as in
 * `fetch`) is without `retry` when that is an object: `retry` is ours only
 * as an object (wrappers such as ofetch pass their own `retry: <number |
 * boolean>` through to `fetch`). A Request's getters are read through
 * `catch`: one that only looks like a Request throws on every getter. */
function callOf(input, init) {
  const own = {};
  let retry;
  let signal;
  let flags = 0;
  if (isObject(init)) {
    Object.assign(own, init);
    if (isObject(own.retry)) {
      retry = own.retry;
      delete own.retry;
    }
    // Any own key: what `Object.assign` copied (symbols aside), counted
    // without the array `Object.keys` would make.
    for (const key in own) {
      if (Object.hasOwn(own, key)) {
        flags = OWN_KEYS;
        break;
      }
    }
    if (own.signal instanceof AbortSignal) signal = own.signal;
    if (own.body instanceof ReadableStream) flags |= STREAMED;
    if (own.headers !== undefined) flags |= HEADERS;
  }
  const request = input instanceof Request ? input : undefined;
  let url;
  let requestMethod;
  if (request) {
    flags |= REQUEST;
    url = stringOf(read(request, "url"));
    requestMethod = stringOf(read(request, "method"));
    if (requestMethod === undefined) flags |= FAKE_REQUEST;
    flags |= bodyOf(request) * BODY_STREAM;
  } else {
    url = typeof input === "string" ? input : stringOf(read(input, "href"));
  }
  if (signal) {
    try {
      signal.aborted;
    } catch {
      flags |= FAKE_SIGNAL;
    }
  }
  let followed = own.signal === null ? undefined : (signal ?? (request && read(request, "signal")));
  if (!(followed instanceof AbortSignal)) followed = undefined;
  else flags |= SIGNAL;
  if (!(flags & FAKE_SIGNAL) && followed?.aborted) flags |= ABORTED;
  const method = stringOf(own.method) ?? requestMethod;
  const redirect = stringOf(own.redirect) ?? (request && stringOf(read(request, "redirect")));
  const mode = stringOf(own.mode) ?? (request && stringOf(read(request, "mode")));
  const current = globalThis.fetch;
  const transport = globalTransport(current);
  if (transport !== HOST && transport !== current[MARK]) flags |= WRAPPED;
  const call = attempts.call(input, own, followed, transport);
  const strings = method ?? redirect ?? mode ?? requestMethod;
  return [call, retry, url ?? "", strings === undefined ? undefined : packed(method) + packed(redirect) + packed(mode) + packed(requestMethod), flags];
}

const glue = {
  // The option reader's (src/host/api/read.rs): options are read in one
  // crossing per object, their errors worded by js/src/options.js.
  ...reader,

  // The steps js/src/request.js takes on a call held by js/src/attempts.js.
  prepare: (id, ...steps) => prepare(attempts.callRecord(id), ...steps),
  abortBefore: (id, isRequest) => abortBefore(attempts.callRecord(id), isRequest),

  // A call's and an attempt's steps, their objects held by number
  // (js/src/attempts.js).
  rateFacts: attempts.rateFacts,
  head: attempts.head,
  header: attempts.header,
  rebuild: attempts.rebuild,
  handOver: attempts.handOver,
  end: attempts.end,
  hold: attempts.hold,
  keep: attempts.keep,
  invoke: attempts.invoke,
  shown: (id, retry) => attempts.invoke(id, (retry ? shape.retryInfo : shape.state)(shape.numbers())),
  aborted: attempts.aborted,
  reason: attempts.reason,
  requestHeader: attempts.requestHeader,
  replayKeep: attempts.replayKeep,

  onLine() {
    const online = globalThis.navigator?.onLine;
    return typeof online === "boolean" ? online : undefined;
  },

  // A shared budget's link to its leased client, in the fleet's module
  // (src/host/api/leased.rs, js/src/lease.js).
  ...lease,
};

/** `init.signal`, else a Request's own (`null` drops it, as in `fetch`). */
function callerSignal(input, init) {
  return init?.signal !== undefined ? init.signal : input instanceof Request ? input.signal : undefined;
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
    this.#result = promise.then((outcome) => {
      caller?.removeEventListener("abort", forward);
      if (outcome.response) remember(outcome.response, outcome.report);
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
  retryNow(options) {
    const [force] = check("retryNow", options);
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

/** A subscriber to an operation's states, held for the machine (0: none). */
const subscriber = (observe) => (observe ? attempts.keep(observe) : 0);

/** An outcome as a poll's glue takes it (js/src/poll.js): its data as an
 * object, its response and cause still held by number, and the data as
 * `outcomeOf` takes it. */
function kept(data, response, cause) {
  return [shape.outcome(data), response, cause, data];
}
// What an operation is to a poll (src/engine/poll.rs `Role`): its submit;
// status query `n` is `n + SUBMIT`.
const SUBMIT = 1;

/** Options plus the budgets every call through it shares. */
export class RetryPolicy {
  #policy;
  #fetch;

  constructor(options) {
    assertLoaded();
    this.#policy = new Policy(options, glue);
    this.#fetch = options?.fetch;
  }

  /** Like `fetch`: resolves with the final Response. An own property bound
   * to this policy, so SDKs can take it unbound (`fetch: policy.fetch`) and
   * call it with any `this`, and installable as the global `fetch`. */
  fetch = Object.assign((input, init) => this[OBSERVED](input, init), { [MARK]: HOST });

  /** `fetch` whose `observe` receives every state, as `run`'s, and a rejected call's outcome (js/src/otel.js; not public API). */
  [OBSERVED](input, init, observe) {
    if (reentered(input, init)) return HOST(input, init);
    try {
      const machine = this.#policy.execute(...callOf(input, init), subscriber(observe));
      return drive(machine, observe ? (data, r, c) => settle(data, r, c, observe) : settle);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The operation as a UI store; `result` never rejects. */
  run(input, init) {
    return new Operation((i, observe) => drive(this.#policy.execute(...callOf(input, i), subscriber(observe)), outcomeOf), input, init);
  }

  /** Submit-then-poll: the submit is never repeated; `spec` is
   * `{ status, verdict?, phases?, budgetMs? }`. Returns an operation like
   * `run`. The submit leaves at once, an ordinary operation of this policy;
   * the poll's loop (js/src/poll.js and its wasm module) is loaded meanwhile,
   * at the first poll, and runs each status query as one more. */
  poll(input, init, spec) {
    const policy = this.#policy;
    return new Operation((i, observe) => {
      // Checked in Rust (src/policy/poll.rs `POLL`) before anything is
      // sent, each field read once (a getter that throws reads as missing);
      // `status` and `verdict` are the hooks js/src/poll.js calls. The
      // schedule goes on as `[budgetMs, (everyMs, forMs)…]`, NaN where
      // absent (`PollSchedule::of`, in the poll's module).
      const [phases, budgetMs, status, verdict] = check("poll", spec);
      const numbers = [budgetMs, ...(phases ?? []).flat()];
      const submit = drive(policy.execute(...callOf(input, i), subscriber(observe), SUBMIT), kept);
      // Status query `n`: `target` with the caller's headers, signal and options.
      const { headers, signal, retry } = i;
      const query = (target, method, n, leftMs) => drive(policy.execute(...callOf(target, { method, headers, signal, retry }), subscriber(observe), n + SUBMIT, leftMs), kept);
      const mode = () => this.stats().shared?.mode;
      return polls().then(
        (m) => m.poll({ numbers, submit, status, verdict, signal, observe, query, mode, settle: outcomeOf }),
        (error) => submit.then(([, response, cause]) => {
          attempts.end(response, 1); // its body cancelled (attempts.js CANCEL)
          attempts.thrown(cause);
          throw error;
        }),
      );
    }, input, init);
  }

  /** Counters over every call so far: operations, attempts histogram (1..4, 5+), retries, exhausted, throttled (nothing sent), quota level, queued, in flight. */
  stats() {
    const scope = this.#policy.stats();
    return shape.stats(shape.numbers(), (client) => sharedStats(client, scope));
  }

  /** Gives a shared budget's held tokens back to its authority (pagehide,
   * shutdown); resolves when it answered or gave up. */
  release() {
    return new Promise((resolve) => this.#policy.release(resolve));
  }

  /** Which runtime's error rules apply here. */
  get runtime() {
    return shape.RUNTIMES[this.#policy.runtime];
  }

  /** The whole-operation bound, for an outbox's write-ahead (js/src/outbox.js; not public API). */
  get [Symbol.for("saferetry.totalMs")]() {
    return this.#policy.totalMs;
  }

  /** The `fetch` option the policy was built with (js/src/otel.js; not public API). */
  get [Symbol.for("saferetry.transport")]() {
    return this.#fetch;
  }
}

let shared;

/** One-shot form: `init.retry` holds the options; calls share one default policy's budgets. */
export function retryFetch(input, init) {
  shared ??= new RetryPolicy();
  return shared.fetch(input, init);
}

export { memoryStore } from "./outbox-stores/memory.js";
