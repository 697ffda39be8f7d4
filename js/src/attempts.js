// The calls and attempts the machine runs (src/host/attempt/request.rs,
// transport.rs), held here by number: each call's input, our copy of its
// `init` and the signal `fetch` follows; each attempt's AbortController,
// its response and body; the values thrown at them. The machine holds only
// the numbers. It asks for one
// step at a time — send, read the body whole or a chunk, rebuild, hand
// over, let go — and each function here performs that step and answers
// plain values: ids, lengths, facts packed into a string (src/packed.rs).
// An asynchronous step's answer goes to the operation awaiting it
// (js/src/executor.js, `awaitStep`), or is kept until one does. What any
// answer means — too large, retry, hand over — is decided in Rust.
import { chunk, joined, reader, readAll, whole } from "./body.js";
import { follower, holder } from "./load.js";
import { packed } from "./packed.js";
import { read } from "./request.js";

const held = new Map();
let last = 0;

// Each id names a record: a call's (`Call`) or an attempt's (`Attempt`),
// each with its step's state (`Stepping`); a thrown value's alone
// (`error`); or one of the caller's values (`value`: an option's `random`,
// `onRetry` or `fetch`, a subscriber, a shared budget's `exchange` and
// `attach`, called on `self`). Ids below 2^31 are given here; the machine
// gives its attempts' from 2^31 (src/host/operation/glue.rs `reserve`).
// A call's and an attempt's record have every field from the start: one
// shape each, however far the call goes, and no field added per call.

/** A record's step (a call's replay copy, an attempt's send or body read):
 * whether one is in progress (`stepping`), the operation awaiting it as
 * `run` and `wait`, or its answer kept (`answered`, `ok`, `value`); the
 * value thrown once a step failed (`error`); the bytes a read kept. */
class Stepping {
  constructor() {
    this.stepping = false;
    this.run = undefined;
    this.wait = 0;
    this.answered = false;
    this.ok = false;
    this.value = undefined;
    this.error = undefined;
    this.bytes = undefined;
  }
}

/** A call: its input, our copy of its `init`, the signal `fetch` would
 * follow (`caller`), the `fetch` it goes to. */
class Call extends Stepping {
  constructor(input, init, caller, fetch) {
    super();
    this.input = input;
    this.init = init;
    this.caller = caller;
    this.fetch = fetch;
  }
}

/** An attempt of `call`, as FETCH's `bits` say: the `fetch` and input it
 * sends, its AbortController, whether a body handed over as a stream
 * follows the call's signal (`joined`), its response (the host's one
 * under a stream of ours as `host`), its body's `reader`, and the rule of
 * a body read whole in its FETCH step (`whole`, `json`: `fold`) and
 * whether its response meets it (`folds`). */
class Attempt extends Stepping {
  constructor(call, bits) {
    super();
    this.stepping = true;
    this.call = call;
    this.bits = bits;
    this.fetch = undefined;
    this.input = undefined;
    this.controller = undefined;
    this.joined = (bits & JOIN) !== 0 && call.caller !== undefined;
    this.response = undefined;
    this.host = undefined;
    this.reader = undefined;
    this.whole = undefined;
    this.json = false;
    this.folds = false;
  }
}

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
const valueOf = (id) => held.get(id)?.value;

/** Calls the function `id` holds with `value`, as the machine asks: what
 * it returns or throws is the machine's to read. */
export function invoke(id, value) {
  const { value: fn, self } = held.get(id);
  return fn.call(self, value);
}

/** Holds a call (js/src/core.js `callOf`): its input, our copy of its
 * `init`, the signal `fetch` would follow, the `fetch` it goes to unless
 * the machine names another. */
export const call = (input, init, caller, fetch) => holding(new Call(input, init, caller, fetch));

/** Call `id`'s record, for js/src/request.js's steps. */
export const callRecord = (id) => held.get(id);

/** Whether call `id`'s signal has aborted. */
export const aborted = (id) => held.get(id)?.caller?.aborted === true;

/** Operation `run` runs under call `id`'s signal: the signal's follower
 * (below) reports its abort to it until `run` leaves. None without a
 * signal, or once it aborted (the machine read that at the start). */
export function under(id, run) {
  const signal = held.get(id)?.caller;
  if (signal === undefined || signal.aborted) return undefined;
  const f = followerOf(signal);
  if (f.run === undefined) f.run = run;
  else (f.runs ??= new Set()).add(run);
  return f;
}

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
  const copy = (c) => (all ? c.input.clone().arrayBuffer() : readAll(c.input.clone(), max));
  step(held.get(id), copy, keptBytes);
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

/** A step of record `r` settled: its answer goes to the operation that
 * awaits it, or is kept for the one that will. */
function answer(r, ok, value) {
  r.stepping = false;
  const run = r.run;
  if (run !== undefined) {
    r.run = undefined;
    run.settled(r.wait, ok, value);
  } else {
    r.answered = true;
    r.ok = ok;
    r.value = value;
  }
}

/** Operation `run` awaits, as its wait `wait`, the step in progress of
 * what `id` holds: reported to it when it settles (at once, in a
 * microtask, if it already has). Nothing once the machine let go of `id`
 * in the same step: a wait it dropped. */
export function awaitStep(id, run, wait) {
  const r = held.get(id);
  if (r === undefined) return;
  if (r.answered) {
    const { ok, value } = r;
    r.answered = false;
    r.value = undefined;
    queueMicrotask(() => run.settled(wait, ok, value));
  } else if (r.stepping) {
    r.run = run;
    r.wait = wait;
  }
}

/** Attempt `id`'s response, let go of the attempt (the caller's now). A
 * body read still in flight (handed over while it waited) keeps the record
 * until it settles: not the response, nor the operation, with it. */
export function handed(id) {
  const a = taken(id);
  if (a === undefined) return undefined;
  const { response } = a;
  a.response = undefined;
  a.run = undefined;
  // A body handed over as a stream (one rebuilt around bytes read follows
  // the caller's signal by itself: `rebuild`), or none, whose controller
  // then aborts nothing: the body is not asked for (Deno's, Bun's and
  // WebKit's getter builds a stream the caller's read then goes through).
  if (a.joined && a.controller && response) followCaller(a.call.caller, a.controller, a.host ?? response);
  return response;
}

/** The value thrown at `id` (an attempt's failure, or a value held), let go. */
export const thrown = (id) => taken(id)?.error;

/** Attempt `id`'s response, kept (a poll's hooks get a clone: js/src/poll.js). */
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

// FETCH's bits saying which of the body's headers the machine reads (the
// response body mode decides: src/host/attempt/transport.rs `start`): its length
// and encoding, its type. The others are packed as absent.
const LENGTH = 16;
const TYPE = 32;
// FETCH's bit asking whether the response has a body (its `body` getter).
const HAS_BODY = 128;
// The rate-limit headers the machine reads on a throttling status, in the
// order the glue's `rate_limit` takes them (src/host/operation/glue.rs).
const RATE_HEADERS = [
  "ratelimit",
  "x-ratelimit-remaining",
  "x-rate-limit-remaining",
  "x-ratelimit-reset",
  "x-rate-limit-reset",
  "x-ratelimit-reset-after",
];

/** Status, type, whether there is a body (with FETCH's `HAS_BODY`, and
 * for the rate-limit ones), then each header the machine reads: the
 * rate-limit ones, or the body's ones `bits` ask for (FETCH's `LENGTH`,
 * `TYPE`), the `Retry-After` ones, and `location` with `MANUAL`.
 * With attempt `a` whose FETCH step folds its read (`fold`), `a.folds`
 * says whether this response is one the rule reads whole: decided on the
 * headers read once for the facts (the rule reads only those `bits` ask
 * for, which its own need: `LENGTH` whenever it folds, `TYPE` for JSON). */
function factsOf(response, rateLimit, bits, a) {
  const { headers, status, type } = response;
  // Whether it has a body, where the machine asks (`HAS_BODY`; elsewhere
  // it knows: src/policy/runtime.rs `body_known`, and a body not asked
  // for is packed as present). Deno's, Bun's and WebKit's `body` getter
  // builds a stream, which their `arrayBuffer()` then reads through.
  const body = rateLimit || bits & HAS_BODY ? response.body : true;
  if (rateLimit) {
    let out = packedHead(status, type, body);
    for (const name of RATE_HEADERS) out += packed(headers.get(name));
    return out;
  }
  const length = bits & LENGTH ? headers.get("content-length") : null;
  const kind = bits & TYPE ? headers.get("content-type") : null;
  const encoding = bits & LENGTH ? headers.get("content-encoding") : null;
  const after = headers.get("retry-after");
  const afterMs = headers.get("retry-after-ms");
  const location = bits & MANUAL ? headers.get("location") : null;
  if (a.whole !== undefined) a.folds = readsWhole(status, type, body, length, kind, encoding, a.whole, a.json);
  if (encoding === null && after === null && afterMs === null && location === null && (status & 1023) === status && (type === "basic" || type === "default") && (length === null || DIGITS.test(length)) && (kind === null || kind === JSON_TYPE)) {
    return status + (body ? CODE_BODY : 0) + (kind === null ? 0 : CODE_JSON) + (length === null ? 0 : (Number(length) + 1) * CODE_LENGTH);
  }
  const out = packedFacts(status, type, body, length, kind, encoding, after, afterMs);
  return bits & MANUAL ? out + packed(location) : out;
}

/** A response's status, type and whether it has a body, packed: the head
 * of its facts in either form (`Facts::parse`'s, the glue's `rate_limit`). */
const packedHead = (status, type, body) => packed(status) + packed(type) + (body ? "1:1" : "-");

/** Facts packed as text, in `Facts::parse`'s order, up to the location. */
const packedFacts = (status, type, body, length, kind, encoding, after, afterMs) =>
  packedHead(status, type, body) + packed(length) + packed(kind) + packed(encoding) + packed(after) + packed(afterMs);

// The usual response's facts as one number (src/packed.rs
// `Facts::coded`), nothing packed nor copied: one of a type `basic` or
// `default`, an integer status below 1024, and none of the headers read
// but a `Content-Length` of 1 to 12 digits and a `Content-Type` of
// exactly `application/json`. Its status, plus `CODE_BODY` with a body,
// `CODE_READ` once the body was read whole (as long as the length says),
// `CODE_JSON` with that type, and the length plus one, times
// `CODE_LENGTH`, when given (under 2^53: exact).
const CODE_BODY = 1024;
const CODE_READ = 2048;
const CODE_JSON = 4096;
const CODE_LENGTH = 8192;
const JSON_TYPE = "application/json";
const DIGITS = /^[0-9]{1,12}$/;

// (tests/facts_code.rs runs both on the host's own `Headers`.)
export { factsOf, withRead };

/** Facts `facts` (a code or packed text) of a response whose body was read
 * whole, `read` bytes, in the same step: a code says so with `CODE_READ`
 * when its length is the one read; else the packed facts, the location's
 * place kept, then the length read (a code's facts packed again: the same
 * values). */
function withRead(facts, read, manual) {
  if (typeof facts === "number") {
    const length = Math.floor(facts / CODE_LENGTH) - 1;
    if (length === read) return facts + CODE_READ;
    facts = packedFacts(facts % CODE_BODY, "default", facts & CODE_BODY, length < 0 ? null : length, facts & CODE_JSON ? JSON_TYPE : null, null, null, null) + "-";
  } else if (!manual) facts += "-";
  return facts + packed(read);
}

// A response handed over as a stream (`handed`) follows the caller's signal
// after the operation ended, as `fetch`'s would: when that signal aborts,
// the attempt's controller aborts with its reason, and the host errors the
// body as it errors its own. Not `AbortSignal.any` at every attempt, which
// costs 10–17 µs per call in Node (BENCHMARKS.md); a response the
// operation buffered follows the signal by itself (`SignalledResponse`).
// One listener per signal (its `Follower`) both reports the abort to the
// operations running under it (js/src/executor.js `Run`) and aborts the
// controllers of the bodies handed over under it: a call adds at most one
// listener (none under a signal that has one), and removes it at its end
// only if nothing is left to follow (no body was handed over as a stream),
// so a long-lived signal keeps one listener, never one per call (Node
// warns past ten). The first body handed over under a signal has its
// controller held by the follower itself, as long as the signal (and
// whoever can abort it) lives: a signal made for one call costs no
// `WeakMap` entry nor `WeakRef`, and a long-lived one holds one controller
// more, not one per call. Later ones are held weakly (a long-lived signal
// keeps neither the responses of the calls made under it nor their
// controllers), those collected dropped as more come; each lives as long
// as its body: the host's response and body keep it, and so does a stream
// of ours around that body (`handOver`: js/src/body.js `joined`). WebKit
// collects a signal, or an object only a `WeakMap` or
// `FinalizationRegistry` follows, while its fetch still streams, and the
// abort would then no longer reach the body.
const kept = new WeakMap();
const followers = new WeakMap();

/** The operations running under one caller signal, and the controllers of
 * the bodies handed over under it: its one listener. */
class Follower {
  constructor(signal) {
    this.signal = signal;
    this.listening = false;
    this.run = undefined;
    this.runs = undefined;
    this.controller = undefined;
    this.refs = undefined;
    this.bound = 64;
  }

  /** The signal aborted: each body handed over under it stops with its
   * reason, each operation running under it hears it. */
  handleEvent(event) {
    const { reason } = event.target;
    this.controller?.abort(reason);
    if (this.refs) for (const ref of this.refs) ref.deref()?.abort(reason);
    this.controller = this.refs = undefined;
    this.run?.handleEvent(event);
    if (this.runs) for (const run of this.runs) run.handleEvent(event);
  }

  /** Operation `run` ended: the listener goes once nothing is left to follow. */
  leave(run) {
    if (this.run === run) this.run = undefined;
    else this.runs?.delete(run);
    if (this.run === undefined && !this.runs?.size && this.controller === undefined && this.refs === undefined) {
      this.listening = false;
      this.signal.removeEventListener("abort", this);
    }
  }

  /** A body handed over under the signal, stopped by `controller`, which
   * lives as long as the body (the first one's: as long as the signal). */
  hold(controller, response) {
    if (this.controller === undefined) {
      this.controller = controller;
      return;
    }
    kept.set(response, controller);
    const { body } = response;
    if (body) kept.set(body, controller);
    const refs = (this.refs ??= new Set());
    if (refs.size >= this.bound) {
      for (const ref of refs) if (ref.deref() === undefined) refs.delete(ref);
      this.bound = Math.max(64, 2 * refs.size);
    }
    refs.add(new WeakRef(controller));
  }
}

/** `signal`'s follower (made, and listening, on first use). */
function followerOf(signal) {
  let f = followers.get(signal);
  if (f === undefined) {
    f = new Follower(signal);
    followers.set(signal, f);
  }
  if (!f.listening) {
    f.listening = true;
    signal.addEventListener("abort", f);
  }
  return f;
}

/** A body of the host's `response`, stopped by `controller`, follows the caller's signal. */
function followCaller(caller, controller, response) {
  if (caller.aborted) return controller.abort(caller.reason);
  followerOf(caller).hold(controller, response);
}

/** `fetch(input, init)` of attempt `a`: under its controller's signal,
 * with `redirect: "manual"` with `manual`; a non-promise answer adopted. */
function send(a, input, init, manual) {
  const controller = a.controller;
  if (controller) init.signal = controller.signal;
  if (manual) init.redirect = "manual";
  // Called as a function: a browser's `fetch` refuses any other `this`.
  const fetch = a.fetch;
  const answer = fetch(input, init);
  return answer instanceof Promise ? answer : Promise.resolve(answer);
}

// FETCH's bits (src/host/operation/io.rs): a clone of the call's Request, under an
// AbortController of our own, with `redirect: "manual"`; its body, if handed
// over as a stream, follows the caller's signal afterwards (`handed`).
const CLONE = 1;
const CONTROLLED = 2;
const MANUAL = 4;
const JOIN = 8;

/** Starts attempt `id` (the machine's number) of call `callId`:
 * `fetch(input, init)` (the function held as `fetchId`, else the call's
 * own: 0), as `bits` say (above): of a clone of `input` (whose Request a
 * 307/308 reads the body again from), under an AbortController of its own
 * (none for a call passed through as it is; a body handed over as a
 * stream follows the call's signal then), with `redirect: "manual"` (we
 * follow redirects hop by hop: the facts then carry the `Location`). Its step answers the response's facts
 * (only its status, or −1 for an answer that is not a Response, when not
 * controlled), or fails where it failed: a start that threw sent nothing. */
export function attempt(id, fetchId, callId, bits) {
  const c = held.get(callId);
  const a = new Attempt(c, bits);
  held.set(id, a);
  let sent;
  try {
    a.fetch = fetchId ? valueOf(fetchId) : c.fetch;
    if (bits & CONTROLLED) a.controller = new AbortController();
    a.input = bits & CLONE ? c.input.clone() : c.input;
    sent = send(a, a.input, c.init, bits & MANUAL);
  } catch (error) {
    // Nothing was sent; the machine reads it when it awaits the step.
    answer(a, false, failure(a, THREW, error));
    return;
  }
  arrived(a, sent, bits);
}

/** Attempt `a`'s response (`sent`) arrived: its facts (as FETCH's `bits`
 * ask) are the step's answer — with its body read in the same step when
 * the machine's rule says so (`whole`) — and a rejection is where the
 * request failed. */
function arrived(a, sent, bits) {
  sent.then(
    (response) => {
      a.response = response;
      let facts;
      try {
        facts = bits & CONTROLLED ? factsOf(response, false, bits, a) : response instanceof Response ? response.status : -1;
        if (a.folds) return step(a, wholeBody, (r, buffer) => withRead(facts, keptBytes(r, buffer), bits & MANUAL));
      } catch (error) {
        return answer(a, false, failure(a, READ, error));
      }
      answer(a, true, facts);
    },
    (error) => answer(a, false, failure(a, REJECTED, error)),
  );
}

/** Whether a response (its `status`, `type` and `body`, and its
 * `Content-Length`, `Content-Type` and `Content-Encoding` as read: null
 * when absent or not read) is one the machine's rule (`fold`) has read
 * whole at once: a 2xx of the host's own origin with a body (not a 204
 * or 205, which never has one: where the body is not asked for, it is
 * packed as present), no
 * `Content-Encoding`, a `Content-Length` of digits from 1 to `bound`, and
 * with `json` a `Content-Type` of `application/json` (or followed by
 * parameters). A table applied as given: any other response goes to the
 * machine first, which decides (src/host/attempt/transport.rs; tests/
 * fold_rule.rs checks the two agree). */
function readsWhole(status, type, body, length, kind, encoding, bound, json) {
  if (status < 200 || status > 299 || status === 204 || status === 205 || !body || (type !== "basic" && type !== "default")) return false;
  if (encoding !== null) return false;
  if (length === null || !/^[0-9]+$/.test(length) || Number(length) < 1 || Number(length) > bound) return false;
  if (!json) return true;
  return kind === "application/json" || (kind !== null && kind.startsWith("application/json;"));
}

/** Attempt `id`'s response, when it arrives and the rule of `readsWhole`
 * (`bound`, `json`) holds, is read whole in its FETCH step (the machine
 * asks: src/host/operation/io.rs `WHOLE`). */
export function fold(id, bound, json) {
  const a = held.get(id);
  a.whole = bound;
  a.json = json;
}

/** Attempt `id`'s response is a redirect `chain` follows: every hop of it
 * (js/src/hops.js, from the entry: js/src/load.js), from that response on.
 * Its step answers the final response's facts. */
export function follow(id, chain) {
  const a = held.get(id);
  const { call } = a;
  a.stepping = true;
  const hop = (input, init) => send(a, input, init, true);
  const again = a.input !== call.input ? call.input : undefined;
  arrived(a, follower()(chain, hop, a.input, call.init, again, a.response), a.bits & ~MANUAL);
}

/** The rate-limit headers of attempt `id`'s response (a throttling
 * status), or, when reading them threw, `!` and its failure (a packed
 * value never starts with `!`). */
export function rateFacts(id) {
  const a = held.get(id);
  try {
    return factsOf(a.response, true);
  } catch (error) {
    return `!${failure(a, READ, error)}`;
  }
}

/** A body step of record `r`: `read(r)`'s promise, whose value
 * `answerOf(r, value)` makes the answer; failing (or throwing) as a read
 * fails. One reaction per step: the answer goes out in the microtask the
 * read settles in. */
function step(r, read, answerOf) {
  r.stepping = true;
  let promise;
  try {
    promise = read(r);
  } catch (error) {
    promise = Promise.reject(error);
  }
  promise.then(
    (value) => {
      let out;
      try {
        out = answerOf(r, value);
      } catch (error) {
        return answer(r, false, failure(r, READ, error));
      }
      answer(r, true, out);
    },
    (error) => answer(r, false, failure(r, READ, error)),
  );
}

/** A body read's bytes, kept as `r`'s: their length, or −1 for none (more
 * than the bound arrived). */
function keptBytes(r, buffer) {
  if (buffer === null) return -1;
  r.bytes = buffer;
  return buffer.byteLength;
}

const wholeBody = (a) => a.response.arrayBuffer();

/** Reads attempt `id`'s body with `arrayBuffer()`; resolves with its length. */
export function bytes(id) {
  step(held.get(id), wholeBody, keptBytes);
}

/** Reads attempt `id`'s body while it streams; resolves with its length,
 * or −1 as soon as more than `max` bytes arrived (js/src/body.js). */
export function upTo(id, max) {
  step(held.get(id), (a) => readAll(a.response, max), keptBytes);
}

/** The next chunk of attempt `a`'s body, kept (js/src/body.js `chunk`). */
function nextChunk(a) {
  a.reader ??= reader(a.response);
  return chunk(a.reader);
}

/** At the end of the chunks (−1), they are the attempt's bytes. */
function chunkRead(a, length) {
  if (length < 0) a.bytes = whole(a.reader);
  return length;
}

/** Reads attempt `id`'s next chunk, kept; resolves with its length, or −1
 * at the end (the chunks then are the attempt's bytes). */
export function next(id) {
  step(held.get(id), nextChunk, chunkRead);
}

// Not fatal: a snippet reads bytes that are not UTF-8 as U+FFFD (the
// module links no decoder of its own); a byte order mark kept, as a body's
// first character. Made at the first snippet, not at every start.
let lenient;

/** The first `n` bytes of attempt `id`'s body as text (a failed
 * response's snippet: src/policy/report.rs `snippet`), and one of its
 * response's headers. */
export function head(id, n) {
  const { bytes } = held.get(id);
  lenient ??= new TextDecoder("utf-8", { ignoreBOM: true });
  return lenient.decode(new Uint8Array(bytes, 0, Math.min(n, bytes.byteLength)));
}

export function header(id, name) {
  try {
    return held.get(id).response.headers.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}

/** `response` again around `body`: status, status text and headers as
 * the host's, and its URL, `redirected` and type read from it when asked
 * (a constructed Response would lose the last three and the status text,
 * and its headers could be changed where the host's are immutable; Deno
 * would take the standard status text if `response` itself were the
 * init). The four are the class's getters, as the host's are: nothing is
 * defined on each response, nor read before someone asks. */
export class Rebuilt extends Response {
  #host;

  constructor(body, response) {
    super(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    this.#host = response;
  }

  get url() {
    return this.#host.url;
  }

  get redirected() {
    return this.#host.redirected;
  }

  get type() {
    return this.#host.type;
  }

  get headers() {
    return this.#host.headers;
  }
}

const READS = ["arrayBuffer", "blob", "bytes", "formData", "json", "text"];

// Fatal: a body that is not UTF-8 is left to the host's own read.
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The body's text where every host reads the same: valid UTF-8 without a
 * byte order mark (workerd's `text()` keeps one); else nothing. */
function plainText(bytes) {
  const view = new Uint8Array(bytes);
  if (view[0] === 0xef && view[1] === 0xbb && view[2] === 0xbf) return undefined;
  try {
    return utf8.decode(view);
  } catch {
    return undefined;
  }
}

/** What the whole-body reads answer from a body's bytes, where the host's
 * own read would answer the same; nothing (`undefined`) where the host's
 * must say (a byte order mark, bytes that are not UTF-8, JSON that does
 * not parse: hosts word and type its error differently). For
 * `SignalledResponse` and js/src/held.js's `HeldResponse`. */
export const FROM_BYTES = {
  arrayBuffer: (bytes) => bytes,
  bytes: (bytes) => new Uint8Array(bytes),
  text: plainText,
  json(bytes) {
    const text = plainText(bytes);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  },
};

/** A buffered response when the caller passed a signal: like `fetch`'s,
 * reading its body once that signal has aborted fails (the machine says
 * with what: `abortError`, else the reason). Checked when read — by the
 * body stream's `pull` and by the read methods, which still disturb the
 * body as a failed read does — so no listener of ours outlives the call.
 * A first whole-body read while its stream is untouched cancels that
 * stream (used, as a read leaves it) and answers from the bytes
 * (`FROM_BYTES`), or is the read of the Response the bytes would be
 * without a signal: a host reading a JavaScript stream costs workerd
 * 20–30 µs a call (BENCHMARKS.md). The read methods are the class's (one per
 * method, not per response). */
class SignalledResponse extends Rebuilt {
  #signal;
  #abortError;
  #bytes;

  constructor(body, response, signal, abortError) {
    const source = {
      pull(controller) {
        if (signal.aborted) return controller.error(failed(signal, abortError));
        controller.enqueue(new Uint8Array(body));
        controller.close();
      },
    };
    super(new ReadableStream(source, { highWaterMark: 0 }), response);
    this.#signal = signal;
    this.#abortError = abortError;
    this.#bytes = body;
  }

  static {
    for (const name of READS) {
      const readBody = Response.prototype[name];
      if (!readBody) continue;
      const answer = FROM_BYTES[name];
      const value = function () {
        const bytes = this.#bytes;
        this.#bytes = undefined;
        if (this.#signal.aborted) {
          readBody.call(this).catch(() => {});
          return Promise.reject(failed(this.#signal, this.#abortError));
        }
        const body = bytes === undefined || this.bodyUsed ? null : this.body;
        if (!body || body.locked) return readBody.call(this);
        body.cancel().catch(() => {});
        const out = answer?.(bytes);
        return out === undefined ? readBody.call(new Rebuilt(bytes, this)) : Promise.resolve(out);
      };
      Object.defineProperty(this.prototype, name, { value, writable: true, configurable: true });
    }
  }
}

export const failed = (signal, abortError) => (abortError ? new DOMException("The operation was aborted.", "AbortError") : signal.reason);

// Added to `rebuild`'s `abort` (src/host/operation/glue.rs `HELD`,
// `BESIDE`): the bytes are held, where the entry gave a `HeldResponse`
// (js/src/held.js); and besides, the Response is built with them.
const HELD = 4;
const BESIDE = 8;

/** `response` again around `body`; `abort` 1 or 2: see `SignalledResponse`;
 * with `HELD` added, a `HeldResponse` (js/src/held.js) where the entry gave
 * one, built with the bytes as well with `BESIDE`. (A response of a null
 * body status is never rebuilt: the machine hands it over as it is,
 * src/host/attempt/transport.rs `null_body`.) */
export function rebuilt(response, body, signal, abort) {
  const kind = abort & ~(HELD | BESIDE);
  const Held = abort & HELD ? holder() : undefined;
  if (Held) return new Held(body, response, signal, kind, abort & BESIDE);
  return kind ? new SignalledResponse(body, response, signal, kind === 1) : new Rebuilt(body, response);
}

/** Attempt `id`'s response again around the bytes read (kept as it is if
 * that throws); `abort` 1 or 2 when reading them must follow the caller's
 * signal (see `SignalledResponse`), with `HELD` added when the bytes are
 * held (`HeldResponse`). */
export function rebuild(id, abort) {
  const a = held.get(id);
  try {
    a.response = rebuilt(a.response, a.bytes, a.call.caller, abort);
    a.joined = false; // nothing to follow after the hand-over
  } catch {
    // The host's own response, as it is.
  }
}

/** Attempt `id`'s response again around the chunks read, then the rest of
 * its body (js/src/body.js `joined`); what that threw, as a failure, or "". */
export function handOver(id) {
  const a = held.get(id);
  try {
    const body = joined(a.reader, a.call.caller, a.joined, a.controller);
    a.host = a.response;
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
  // A step that settles now reports to nobody.
  if (a) a.run = undefined;
  if (how & ABORT) a?.controller?.abort();
  if (how & CANCEL) {
    const body = a?.response?.body;
    if (body && !body.locked) body.cancel().catch(() => {});
  }
}
