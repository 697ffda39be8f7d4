// The executor of the engine's machines (src/host/operation/machine.rs, io.rs). A
// machine runs one operation and decides everything in it; after each event
// it lists the work to do next, and this file performs it — starts an
// attempt (js/src/attempts.js `attempt`: the `fetch`) or a body read, awaits
// an attempt's step (js/src/attempts.js), sets or clears a timer, listens
// to the caller's signal and to `online`, wakes a machine a released permit
// woke — then reports what happened, until the machine ends. It branches on
// nothing but the kind of work.
//
// A machine is a number; an event is one call into wasm with plain values,
// answering one number: how many work quads `(kind, id, arg, more)` it left
// in the module's work buffer, and whether the operation ended. One `Run`
// per operation holds what the executor keeps for it (its timers, its
// listeners, how to settle), with methods rather than closures.
import { attempt, awaitStep, bytes, fold, follow, invoke, next, replayCopy, under, upTo } from "./attempts.js";
import { machines, memoryViews } from "./load.js";
import { numbers } from "./shape.js";

const SET_TIMER = 1;
const CLEAR_TIMER = 2;
const WAKE = 3;
const ONLINE = 4;
const AWAIT_HELD = 6;
// Start an attempt (js/src/attempts.js reads the bits added to the kind).
const FETCH = 64;
// Follow an attempt's redirect hop by hop (js/src/hops.js).
const FOLLOW = 21;
// Read an attempt's body: whole, up to a bound, its next chunk.
const READ_WHOLE = 16;
const READ_UP_TO = 17;
const READ_NEXT = 18;
// Read a copy of a call's Request body: up to a bound, or whole.
const COPY_UP_TO = 19;
const COPY_WHOLE = 20;
// Read an attempt's body whole in its FETCH step when its response is one
// the rule names (js/src/attempts.js `fold`): of any type, or JSON.
const WHOLE = 22;
const WHOLE_JSON = 23;

// An event's answer (src/host/operation/machine.rs): the number of work quads in the
// buffer, and these bits: the operation ended, its outcome handed over with
// the answer; more work waits for the next read; the machine is not there
// (a late report); the outcome's report has strings (`outcomeText`).
const QUADS = 0xff;
const ENDED = 0x100;
const MORE = 0x200;
const GONE = 0x400;
const TEXT_WAITS = 0x800;
// `execute`'s answer: the machine's number, or this bit with an event's
// when the operation ended in the call and settles in it
// (src/host/api/exports.rs `start`).
const AT_ONCE = 0x80000000;
// Past the buffer's 32 work quads: a started machine's first answer and
// its call; an ended operation's response and cause.
const START = 128;
const CALL = 129;
const RESPONSE = 130;
const CAUSE = 131;

// The machines running, by number: how to report a wake-up to each.
const running = new Map();

// Copies of the work buffer, one per depth of events reported from inside
// another's work (`report`), and the depth now.
const copies = [];
let depth = 0;

/** The module's work buffer, as a view that follows its memory's growth
 * (js/src/load.js `memoryViews`). */
const buffer = () => memoryViews().work;

/** `text` in the module's text buffer (src/host/operation/machine.rs
 * `TEXT_IN`), byte by byte, as wasm-bindgen's glue passes an ASCII string:
 * its length, or −1 when it does not fit or is not ASCII (a step's facts
 * are, as a rule; any other text goes as a value, which wasm-bindgen
 * encodes, so the module needs no UTF-8 validator of its own). */
function copied(text) {
  const to = memoryViews().text;
  const n = text.length;
  if (n > to.length) return -1;
  for (let at = 0; at < n; at++) {
    const code = text.charCodeAt(at);
    if (code > 0x7f) return -1;
    to[at] = code;
  }
  return n;
}

function fire(run, id) {
  run.forget(id);
  run.report(machines().onTimer(run.id, id));
}

/** One operation as the executor drives it. */
class Run {
  constructor(id, settle, resolve, reject) {
    this.id = id;
    this.settle = settle;
    this.resolve = resolve;
    this.reject = reject;
    // Its timers: the first set as `timer` (its id) and `handle`, the
    // others (rare: a wait beside an attempt's) by id in `timers`.
    this.timer = undefined;
    this.handle = undefined;
    this.timers = undefined;
    this.follower = undefined;
    this.online = false;
    this.over = false;
    this.outcome = undefined;
  }

  /** Performs the machine's first work, which `execute` left in the
   * buffer with its answer (`START`) and the call whose signal is an event
   * (`CALL`; src/host/operation/machine.rs `keep`). */
  begin() {
    const b = buffer();
    running.set(this.id, this);
    this.follower = under(b[CALL], this);
    // An operation that ended in the call settles a microtask later, as
    // `fetch`'s promise does (unless it settles at once: `drive`).
    this.report(b[START], true);
  }

  /** The caller's signal aborted (its follower reports it:
   * js/src/attempts.js `Follower`; from inside the machine's own step, a
   * callback it called cancelled the operation: reported after that
   * step), or the host came online. */
  handleEvent(event) {
    if (event.type === "online") this.report(machines().onOnline(this.id));
    else queueMicrotask(() => this.report(machines().onEvent(this.id)));
  }

  /** A step the machine awaits as `wait` settled (js/src/attempts.js):
   * its text copied into the module's text buffer, or (a text it does not
   * take, any other value: a length) the value itself. */
  settled(wait, ok, value) {
    if (this.over) return;
    const m = machines();
    if (typeof value === "number") return this.report(m.onNumber(this.id, wait, ok, value));
    const length = typeof value === "string" ? copied(value) : -1;
    this.report(length >= 0 ? m.onText(this.id, wait, ok, length) : m.onSettled(this.id, wait, ok, value));
  }

  /** Performs what an event answered; settles once the operation ended
   * (`later`: in a microtask). */
  report(answer, later) {
    if (this.over || answer & GONE) return;
    const m = machines();
    // The event's work is copied out of the buffer before it is performed
    // (another machine's event, from a callback performed here, reuses the
    // buffer): into the copy of this depth of such nesting, kept for the
    // next event at that depth.
    const work = (copies[depth] ??= []);
    depth++;
    try {
      for (;;) {
        const quads = answer & QUADS;
        const b = buffer();
        for (let i = 0; i < quads * 4; i++) work[i] = b[i];
        // The outcome too, before the work can start another event.
        if (answer & ENDED) this.outcome = outcome(m, answer);
        this.perform(m, work, quads);
        if (!(answer & MORE)) break;
        answer = m.machineWork(this.id);
      }
    } catch (error) {
      // The module trapped (it never should): the call rejects with its
      // error rather than waiting forever.
      this.end();
      this.follower?.leave(this);
      return this.reject(error);
    } finally {
      depth--;
    }
    if (answer & ENDED) return later ? queueMicrotask(() => this.finish()) : this.finish();
  }

  perform(m, work, quads) {
    for (let i = 0; i < quads * 4; i += 4) {
      const kind = work[i];
      const at = work[i + 1];
      const arg = work[i + 2];
      const more = work[i + 3];
      if (kind >= FETCH) {
        // Attempt `at` of call `arg` with the `fetch` held as `more`; its
        // step is the machine's next work to await.
        attempt(at, more, arg, kind - FETCH);
      } else if (kind === AWAIT_HELD) {
        // The step in progress of what js/src/attempts.js holds as `arg`
        // (none once the machine let go of it in the same step: a wait it
        // dropped, whose answer it would ignore).
        awaitStep(arg, this, at);
      } else if (kind === SET_TIMER) {
        const handle = setTimeout(fire, arg, this, at);
        if (this.timer === undefined) {
          this.timer = at;
          this.handle = handle;
        } else (this.timers ??= new Map()).set(at, handle);
      } else if (kind === CLEAR_TIMER) {
        clearTimeout(this.forget(at));
      } else if (kind === READ_WHOLE) bytes(at);
      else if (kind === READ_UP_TO) upTo(at, more * 2 ** 32 + arg);
      else if (kind === READ_NEXT) next(at);
      else if (kind === WHOLE || kind === WHOLE_JSON) fold(at, more * 2 ** 32 + arg, kind === WHOLE_JSON);
      else if (kind === FOLLOW) follow(at, m.machineChain(this.id, at));
      else if (kind === COPY_UP_TO || kind === COPY_WHOLE) replayCopy(at, more * 2 ** 32 + arg, kind === COPY_WHOLE);
      else if (kind === WAKE) {
        const run = running.get(at);
        if (run) queueMicrotask(() => run.report(machines().onEvent(run.id)));
      } else if (kind === ONLINE && arg === 1) {
        this.online = true;
        globalThis.addEventListener?.("online", this);
      } else if (kind === ONLINE) {
        this.online = false;
        globalThis.removeEventListener?.("online", this);
      }
    }
  }

  /** Timer `id`'s handle, let go of (none once it fired or was cleared). */
  forget(id) {
    let handle;
    if (this.timer === id) {
      handle = this.handle;
      this.timer = this.handle = undefined;
    } else if (this.timers) {
      handle = this.timers.get(id);
      this.timers.delete(id);
    }
    return handle;
  }

  /** Releases what the executor kept for the operation (but its place
   * under the caller's signal: left once its response is handed over). */
  end() {
    this.over = true;
    if (this.timer !== undefined) clearTimeout(this.handle);
    if (this.timers) for (const t of this.timers.values()) clearTimeout(t);
    if (this.online) globalThis.removeEventListener?.("online", this);
    running.delete(this.id);
  }

  finish() {
    this.end();
    let value;
    try {
      value = this.settle(...this.outcome);
    } catch (error) {
      return this.reject(error);
    } finally {
      // After the hand-over: a body handed over as a stream keeps the
      // signal's listener (js/src/attempts.js `Follower`).
      this.follower?.leave(this);
    }
    this.resolve(value);
  }
}

/** The outcome an event's `answer` handed over (src/host/operation/machine.rs
 * `hand_over`), taken before anything else runs, as `settle` takes it:
 * its data (its numbers, copied, and the report's strings joined in one:
 * js/src/shape.js), the response's and the cause's numbers. */
function outcome(m, answer) {
  const b = buffer();
  const response = b[RESPONSE];
  const cause = b[CAUSE];
  return [[numbers(), answer & TEXT_WAITS ? m.outcomeText() : ""], response, cause];
}

/** Drives the machine `execute` answered to its end; resolves with what
 * `settle(data, response, cause)` makes of its outcome, or rejects with
 * what it throws. An operation that ended in the call and settles at once
 * is settled now, as `fetch`'s promise would be. */
export function drive(answer, settle) {
  if (answer & AT_ONCE) {
    try {
      return Promise.resolve(settle(...outcome(machines(), answer)));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return new Promise((resolve, reject) => new Run(answer, settle, resolve, reject).begin());
}

/** A shared budget's exchange (src/host/lease/fleet.rs): calls the `exchange`
 * js/src/attempts.js holds as `id` (`shared`'s method) with `request` — at
 * once with `now` (a release as the
 * page leaves), else in a microtask, off the path of the operation whose
 * budget call made it due — adopts the answer as `await` would (a
 * thenable, a `then` that throws), and reports to `lease` whichever comes
 * first: how it settled or threw, or a timer of `ms`. What either means is
 * the policy's. Then calls `settled` (a release's resolve), if given. (In
 * workerd an exchange begun by a request that has ended may never settle,
 * nor its timer fire: the policy gives up on it by its own clock.) */
export function exchange(lease, id, request, seq, ms, now, settled) {
  let timer;
  let done = false;
  const report = (event) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    event();
    settled?.();
  };
  const send = () => {
    timer = setTimeout(() => report(() => lease.onTimer(seq)), ms);
    new Promise((r) => r(invoke(id, request))).then(
      (v) => report(() => lease.onExchange(seq, true, v)),
      (e) => report(() => lease.onExchange(seq, false, e)),
    );
  };
  if (now) send();
  else queueMicrotask(send);
}
