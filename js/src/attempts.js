// The calls and attempts the machine runs (src/host/request.rs,
// transport.rs), held here by number: each call's input, our copy of its
// `init` and the signal `fetch` follows; each attempt's AbortController,
// its response and body; the values thrown at them. The machine holds only
// the numbers. It asks for one
// step at a time — send, read the body whole or a chunk, rebuild, hand
// over, let go — and each function here performs that step and answers
// plain values: ids, lengths, facts packed into a string (src/packed.rs).
// An asynchronous step leaves its promise as the attempt's `pending`, which
// the executor awaits (js/src/executor.js). What any answer means — too
// large, retry, hand over — is decided in Rust.
import { chunk, joined, reader, readAll, whole } from "./body.js";
import { follower } from "./load.js";
import { packed } from "./packed.js";
import { read } from "./request.js";

const held = new Map();
let last = 0;

// Each id names a record: a call's (`input`, `init`, `caller`, `fetch`,
// and a replay copy's `bytes`, `pending`), an attempt's (`controller`,
// `caller`, `response`, `bytes`, `reader`, `pending`), either with `error`
// once a step failed; a thrown value's alone (`error`); or one of the
// caller's values (`value`: an option's `random`, `onRetry` or `fetch`, a
// subscriber, a shared budget's `exchange` and `attach`, called on `self`;
// a poll's `init` and status target, what a poll's hook answered).
// Ids below 2^31 are given here; the machine gives its attempts' from
// 2^31 (src/host/glue.rs `reserve`).
function holding(record) {
  do last = last >= 0x7fffffff ? 1 : last + 1;
  while (held.has(last));
  held.set(last, record);
  return last;
}

/** How many records are held (tests/leaks: none once every operation ended). */
export const heldCount = () => held.size;

/** Holds a thrown value (or a cancel's reason) for the machine: its id. */
export const hold = (error) => holding({ error });

function taken(id) {
  const record = held.get(id);
  held.delete(id);
  return record;
}

/** Holds one of the caller's values for the machine (a function: to be
 * called on `self`, or none): its id. */
export const keep = (value, self) => holding({ value, self });

/** The caller's value `id` holds. */
export const valueOf = (id) => held.get(id)?.value;

/** Whether the value `id` holds is a `Promise` (a poll hook's answer). */
export const isPromise = (id) => valueOf(id) instanceof Promise;

/** The value `id` holds, when it is a string. */
export function text(id) {
  const value = valueOf(id);
  return typeof value === "string" ? value : undefined;
}

/** Calls the function `id` holds with `value`, as the machine asks: what
 * it returns or throws is the machine's to read. */
export function invoke(id, value) {
  const { value: fn, self } = held.get(id);
  return fn.call(self, value);
}

/** Holds a call (js/src/core.js `callOf`): its input, our copy of its
 * `init`, the signal `fetch` would follow, the `fetch` it goes to unless
 * the machine names another. */
export const call = (input, init, caller, fetch) => holding({ input, init, caller, fetch });

/** Call `id`'s record, for js/src/request.js's steps. */
export const callRecord = (id) => held.get(id);

/** Whether call `id`'s signal has aborted. */
export const aborted = (id) => held.get(id)?.caller?.aborted === true;

/** Call `id`'s signal (the executor listens to it). */
export const signalOf = (id) => held.get(id)?.caller;

/** Holds the reason call `id`'s signal aborted with: its id. */
export const reason = (id) => hold(held.get(id)?.caller?.reason);

/** One header of call `id`'s request (of its Request with `isRequest`, else of
 * its `init.headers`, in any form `fetch` takes); none when unreadable. */
export function requestHeader(id, isRequest, name) {
  const { input, init } = held.get(id);
  try {
    const headers = isRequest ? input.headers : init.headers === undefined ? undefined : new Headers(init.headers);
    return headers?.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Reads a copy of call `id`'s Request body: its step resolves with the
 * length, or −1 once more than `max` bytes arrived (`whole`: read it all
 * with `arrayBuffer()`, where the host shows no body stream). */
export function replayCopy(id, max, all) {
  const c = held.get(id);
  step(c, () => {
    const copy = c.input.clone();
    const read = all ? copy.arrayBuffer() : readAll(copy, max);
    return read.then((buffer) => {
      if (buffer === null) return -1;
      c.bytes = buffer;
      return buffer.byteLength;
    });
  });
}

/** Call `id` sends the bytes its copy read from now on (a Request of its
 * own around them); false when the Request constructor refused. */
export function replayKeep(id) {
  const c = held.get(id);
  try {
    c.input = new Request(c.input, { body: c.bytes });
    return true;
  } catch {
    return false;
  } finally {
    c.bytes = undefined;
  }
}

/** The promise of attempt `id`'s step in progress. */
export const pending = (id) => held.get(id)?.pending;

/** Attempt `id`'s response, let go of the attempt (the caller's now). */
export const handed = (id) => taken(id)?.response;

/** The value thrown at `id` (an attempt's failure, or a value held), let go. */
export const thrown = (id) => taken(id)?.error;

/** Attempt `id`'s response, kept (for a poll's hooks). */
export const responseOf = (id) => held.get(id)?.response;

// Where a step failed, first in what it rejects with: nothing was sent
// (building the attempt or calling `fetch` threw), `fetch` rejected,
// reading the response or its body failed.
const THREW = 0;
const REJECTED = 1;
const READ = 2;

const stringOf = (v) => (typeof v === "string" ? v : undefined);

/** What the machine reads of a thrown value: its name, message, whether it
 * has a cause, code, then the cause's code, syscall and message (each only
 * when a string; a getter that throws counts as absent). */
export function errorFacts(error) {
  const cause = read(error, "cause");
  let out = packed(stringOf(read(error, "name"))) + packed(stringOf(read(error, "message")));
  out += cause === undefined ? "-" : "1:1";
  for (const v of [read(error, "code"), read(cause, "code"), read(cause, "syscall"), read(cause, "message")]) {
    out += packed(stringOf(v));
  }
  return out;
}

/** A step of attempt `a` failed: the thrown value is kept as the
 * attempt's, and the machine reads where and its facts. */
function failure(a, at, error) {
  a.error = error;
  return packed(at) + errorFacts(error);
}

// The headers the machine reads of every response, and on a throttling
// status, in the order src/host/glue.rs `Facts::parse` takes them.
const FACT_HEADERS = ["content-length", "content-type", "content-encoding", "retry-after", "retry-after-ms"];
const RATE_HEADERS = [
  "ratelimit",
  "x-ratelimit-remaining",
  "x-rate-limit-remaining",
  "x-ratelimit-reset",
  "x-rate-limit-reset",
  "x-ratelimit-reset-after",
];

/** Status, type, whether there is a body, then each header the machine reads. */
function facts(response, rateLimit) {
  const headers = response.headers;
  let out = packed(response.status) + packed(response.type) + (response.body ? "1:1" : "-");
  for (const name of rateLimit ? RATE_HEADERS : FACT_HEADERS) out += packed(headers.get(name));
  return out;
}

// The signal `fetch` follows (ours joined with the caller's), held for as
// long as the response or its body lives. WebKit collects an
// `AbortSignal.any` signal that nothing else references even while a fetch
// follows it, and the caller's abort then no longer reaches a body handed
// over after our controller was dropped: the body kept streaming and its
// connection stayed open (tests/streams, the abort case).
const heldSignals = new WeakMap();
function holdSignal(response, signal) {
  if (typeof response !== "object" || response === null) return response;
  heldSignals.set(response, signal);
  const body = response.body;
  if (typeof body === "object" && body !== null) heldSignals.set(body, signal);
  return response;
}

/** `fetch(input, init)` under `controller` (joined with the caller's
 * signal where the host can); a non-promise answer adopted. */
function send(fetch, input, init, controller, caller) {
  let joinedSignal;
  if (controller) {
    let signal = controller.signal;
    if (caller) {
      try {
        signal = joinedSignal = AbortSignal.any([signal, caller]);
      } catch {
        // No `AbortSignal.any` here: ours alone.
      }
    }
    init.signal = signal;
  }
  const answer = fetch(input, init);
  const settled = answer instanceof Promise ? answer : Promise.resolve(answer);
  return joinedSignal ? settled.then((response) => holdSignal(response, joinedSignal)) : settled;
}

/** Starts attempt `id` (the machine's number) of call `callId`:
 * `fetch(input, init)` (the function held as `fetchId`, else the call's
 * own: 0) — of a clone of `input` with `clone`, whose Request a 307/308
 * reads the body again from — under an AbortController of its own
 * (`controlled`; none for a call passed through as it is), joined with the
 * call's signal; with `chain`, every redirect that chain follows, hop by
 * hop (js/src/hops.js, from the entry: js/src/load.js). Its step resolves
 * with the response's facts (only its status, or −1 for an answer that is
 * not a Response, when not `controlled`), or fails where it failed: a
 * start that threw sent nothing. */
export function attempt(id, fetchId, callId, clone, controlled, chain) {
  const c = held.get(callId);
  const a = { caller: c.caller };
  held.set(id, a);
  let sent;
  try {
    const fetch = fetchId ? valueOf(fetchId) : c.fetch;
    let { input } = c;
    const { init, caller } = c;
    if (controlled) a.controller = new AbortController();
    if (clone) input = input.clone();
    if (chain) {
      const hop = (i, n) => {
        n.redirect = "manual";
        return send(fetch, i, n, a.controller, caller);
      };
      sent = follower()(chain, hop, input, init, clone ? c.input : undefined);
    } else {
      sent = send(fetch, input, init, a.controller, caller);
    }
  } catch (error) {
    a.pending = settled(Promise.reject(failure(a, THREW, error)));
    return;
  }
  a.pending = settled(sent.then(
    (response) => {
      a.response = response;
      if (!controlled) return response instanceof Response ? response.status : -1;
      try {
        return facts(response, false);
      } catch (error) {
        throw failure(a, READ, error);
      }
    },
    (error) => {
      throw failure(a, REJECTED, error);
    },
  ));
}

/** The rate-limit headers of attempt `id`'s response (a throttling
 * status), or, when reading them threw, `!` and its failure (a packed
 * value never starts with `!`). */
export function rateFacts(id) {
  const a = held.get(id);
  try {
    return facts(a.response, true);
  } catch (error) {
    return `!${failure(a, READ, error)}`;
  }
}

/** A step's promise, its failure handled even when nobody awaits it: the
 * machine may let go of a step in the step that started it (a cancel, a
 * timer), and the executor then has nothing to report it to. */
function settled(promise) {
  promise.catch(() => {});
  return promise;
}

/** A body step of attempt `a`: its promise, failing as a read fails. */
function step(a, run) {
  let promise;
  try {
    promise = run();
  } catch (error) {
    promise = Promise.reject(error);
  }
  a.pending = settled(
    promise.catch((error) => {
      throw failure(a, READ, error);
    }),
  );
}

/** Reads attempt `id`'s body with `arrayBuffer()`; resolves with its length. */
export function bytes(id) {
  const a = held.get(id);
  step(a, () =>
    a.response.arrayBuffer().then((buffer) => {
      a.bytes = buffer;
      return buffer.byteLength;
    }),
  );
}

/** Reads attempt `id`'s body while it streams; resolves with its length,
 * or −1 as soon as more than `max` bytes arrived (js/src/body.js). */
export function upTo(id, max) {
  const a = held.get(id);
  step(a, () =>
    readAll(a.response, max).then((buffer) => {
      if (buffer === null) return -1;
      a.bytes = buffer;
      return buffer.byteLength;
    }),
  );
}

/** Reads attempt `id`'s next chunk, kept; resolves with its length, or −1
 * at the end (the chunks then are the attempt's bytes). */
export function next(id) {
  const a = held.get(id);
  step(a, () => {
    a.reader ??= reader(a.response);
    return chunk(a.reader).then((length) => {
      if (length < 0) a.bytes = whole(a.reader);
      return length;
    });
  });
}

/** The first `n` bytes of attempt `id`'s body, and one of its response's headers. */
export function head(id, n) {
  const { bytes } = held.get(id);
  return new Uint8Array(bytes, 0, Math.min(n, bytes.byteLength));
}

export function header(id, name) {
  try {
    return held.get(id).response.headers.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}

const READS = ["arrayBuffer", "blob", "bytes", "formData", "json", "text"];

/** A buffered response when the caller passed a signal: like `fetch`'s,
 * reading its body once that signal has aborted fails (the machine says
 * with what: `abortError`, else the reason). Checked when read — by the
 * body stream's `pull` and by the read methods, which still disturb the
 * body as a failed read does — so no listener of ours outlives the call. */
function bufferedResponse(body, init, signal, abortError) {
  const fail = () => (abortError ? new DOMException("The operation was aborted.", "AbortError") : signal.reason);
  const source = {
    pull(controller) {
      if (signal.aborted) return controller.error(fail());
      controller.enqueue(new Uint8Array(body));
      controller.close();
    },
  };
  const response = new Response(new ReadableStream(source, { highWaterMark: 0 }), init);
  for (const name of READS) {
    const readBody = Response.prototype[name];
    if (!readBody) continue;
    const value = function () {
      if (!signal.aborted) return readBody.call(this);
      readBody.call(this).catch(() => {});
      return Promise.reject(fail());
    };
    Object.defineProperty(response, name, { value, writable: true, configurable: true });
  }
  return response;
}

function define(target, key, value) {
  Object.defineProperty(target, key, { value });
}

/** `response` again around `body`; `abort` 1 or 2: see `bufferedResponse`.
 * Status text, URL, `redirected` and type as the host's (a constructed
 * Response would lose the last three; Deno would take the standard status
 * text if `response` itself were the init). */
function rebuilt(response, body, signal, abort) {
  const init = { status: response.status, statusText: response.statusText, headers: response.headers };
  const out = abort ? bufferedResponse(body, init, signal, abort === 1) : new Response(body, init);
  define(out, "url", response.url);
  define(out, "redirected", response.redirected);
  define(out, "type", response.type);
  return out;
}

/** Attempt `id`'s response again around the bytes read (kept as it is if
 * that throws); `abort` 1 or 2 when reading them must follow the caller's
 * signal (see `bufferedResponse`). */
export function rebuild(id, abort) {
  const a = held.get(id);
  try {
    a.response = rebuilt(a.response, a.bytes, a.caller, abort);
  } catch {
    // The host's own response, as it is.
  }
}

/** Attempt `id`'s response again around the chunks read, then the rest of
 * its body (js/src/body.js `joined`); what that threw, as a failure, or "". */
export function handOver(id) {
  const a = held.get(id);
  try {
    const body = joined(a.reader, a.caller, heldSignals.has(a.response));
    a.response = rebuilt(a.response, body, undefined, 0);
    return "";
  } catch (error) {
    return failure(a, READ, error);
  }
}

// What the machine asks of a record it ends (`end`), bits: cancel a body
// nobody has read (one a poll's hook reads is locked: left alone), abort
// the attempt, keep the record (its failure is still the machine's).
const CANCEL = 1;
const ABORT = 2;
const KEEP = 4;

/** Ends what `id` holds as `how` says: let go of, unless `KEEP`. */
export function end(id, how) {
  const a = held.get(id);
  if (!(how & KEEP)) held.delete(id);
  if (how & ABORT) a?.controller?.abort();
  if (how & CANCEL) {
    const body = a?.response?.body;
    if (body && !body.locked) body.cancel().catch(() => {});
  }
}
