// The executor of the engine's machines (src/host/machine.rs, io.rs). A
// machine runs one operation and decides everything in it; after each event
// it lists the work to do next, and this file performs it — starts an
// attempt (js/src/attempts.js `attempt`: the `fetch`) or a body read, awaits a
// promise or an attempt's step (js/src/attempts.js), sets or clears a
// timer, calls one of the caller's hooks, listens to the caller's signal and
// to `online`, wakes a machine a released permit woke — then reports what
// happened, until the machine answers its output. It branches on nothing
// but the kind of work.
import { attempt, bytes, hold, invoke, keep, next, pending, replayCopy, responseOf, signalOf, upTo, valueOf } from "./attempts.js";

const AWAIT = 0;
const SET_TIMER = 1;
const CLEAR_TIMER = 2;
const WAKE = 3;
const ONLINE = 4;
const STATUS_HOOK = 5;
const AWAIT_HELD = 6;
const VERDICT_HOOK = 7;
// Start an attempt, with these bits added to the kind.
const FETCH = 8;
const CLONE = 1;
const CONTROLLED = 2;
const CHAIN = 4;
// Read an attempt's body: whole, up to a bound, its next chunk.
const READ_WHOLE = 16;
const READ_UP_TO = 17;
const READ_NEXT = 18;
// Read a copy of a call's Request body: up to a bound, or whole.
const COPY_UP_TO = 19;
const COPY_WHOLE = 20;

// The machines running, by id: how to report a wake-up to each.
const running = new Map();

/** Drives machine `m` to its end; resolves with its output. `hooks`: a
 * poll's `status` and `verdict`, which the machine may ask to call. */
export function drive(m, hooks) {
  const ended = m.output();
  if (ended !== undefined) {
    m.free();
    return Promise.resolve(ended);
  }
  return new Promise((resolve, reject) => {
    const id = m.id;
    const signal = signalOf(m.call);
    const timers = new Map();
    let done = false;
    let online;
    const report = (event) => {
      if (done) return;
      let output;
      try {
        output = event();
      } catch (error) {
        // The module trapped (it never should): the call rejects with its
        // error rather than waiting forever.
        return end(() => reject(error));
      }
      if (output !== undefined) return finish(output);
      perform();
    };
    const end = (settle) => {
      done = true;
      for (const t of timers.values()) clearTimeout(t);
      signal?.removeEventListener("abort", onAbort);
      if (online) globalThis.removeEventListener?.("online", online);
      running.delete(id);
      settle();
    };
    const finish = (output) =>
      end(() => {
        perform(); // the wake-ups its end caused
        m.free();
        resolve(output);
      });
    const perform = () => {
      const work = m.work();
      // What the hooks called here answered: reported once this work is
      // all performed (a report performs the next work).
      const called = [];
      for (let i = 0; i < work.length; i += 4) {
        const kind = work[i];
        const at = work[i + 1];
        const arg = work[i + 2];
        const more = work[i + 3];
        if (kind === READ_WHOLE) bytes(at);
        else if (kind === READ_UP_TO) upTo(at, more * 2 ** 32 + arg);
        else if (kind === READ_NEXT) next(at);
        else if (kind === COPY_UP_TO || kind === COPY_WHOLE) replayCopy(at, more * 2 ** 32 + arg, kind === COPY_WHOLE);
        else if (kind >= FETCH) {
          // Attempt `at` of call `arg` with the `fetch` held as `more`;
          // its step is the machine's next work to await.
          const bits = kind - FETCH;
          attempt(at, more, arg, bits & CLONE, bits & CONTROLLED, bits & CHAIN ? m.chain(at) : undefined);
        } else if (kind === AWAIT) {
          // The value held as `arg`, adopted as `await` would (a thenable,
          // a `then` that throws); what it settled with is held in turn.
          new Promise((r) => r(valueOf(arg))).then(
            (v) => report(() => m.onHeld(at, true, keep(v))),
            (e) => report(() => m.onHeld(at, false, hold(e))),
          );
        } else if (kind === AWAIT_HELD) {
          // The step in progress of what js/src/attempts.js holds as `arg`
          // (none once the machine let go of it in the same step: a wait
          // it dropped, whose answer it would ignore).
          pending(arg)?.then(
            (v) => report(() => m.onSettled(at, true, v)),
            (e) => report(() => m.onSettled(at, false, e)),
          );
        } else if (kind === SET_TIMER) {
          const fire = () => {
            timers.delete(at);
            report(() => m.onTimer(at));
          };
          timers.set(at, setTimeout(fire, arg));
        } else if (kind === CLEAR_TIMER) {
          clearTimeout(timers.get(at));
          timers.delete(at);
        } else if (kind === WAKE) {
          const wake = running.get(at);
          if (wake) queueMicrotask(wake);
        } else if (kind === STATUS_HOOK || kind === VERDICT_HOOK) {
          // With a clone of attempt `arg`'s response (the hook may read its
          // body); a throw is reported as such. What it returned — a
          // promise included — is held for the machine to read.
          const hook = kind === STATUS_HOOK ? hooks[0] : hooks[1];
          let ok = true;
          let answer;
          try {
            answer = hook(responseOf(arg).clone());
          } catch (error) {
            ok = false;
            answer = error;
          }
          called.push(() => m.onHeld(at, ok, ok ? keep(answer) : hold(answer)));
        } else if (kind === ONLINE && arg === 1) {
          online = () => report(() => m.onOnline());
          globalThis.addEventListener?.("online", online);
        } else if (kind === ONLINE) {
          globalThis.removeEventListener?.("online", online);
          online = undefined;
        }
      }
      for (const answered of called) report(answered);
    };
    // An abort may come from inside the machine's own step (a callback it
    // called cancelled the operation): reported after that step.
    const onAbort = () => queueMicrotask(() => report(() => m.onEvent()));
    running.set(id, () => report(() => m.onEvent()));
    signal?.addEventListener("abort", onAbort);
    perform();
  });
}

/** A shared budget's exchange (src/host/fleet.rs): calls the `exchange`
 * js/src/attempts.js holds as `id` (`shared`'s method) with `request` — at
 * once with `now` (a release as the
 * page leaves), else in a microtask, off the path of the operation whose
 * budget call made it due — adopts the answer as `await` would (a
 * thenable, a `then` that throws), and reports to `lease` whichever comes
 * first: how it settled or threw, or a timer of `ms`. What either means is
 * the policy's. Resolves once it reported. (In workerd an exchange begun
 * by a request that has ended may never settle, nor its timer fire: the
 * policy gives up on it by its own clock.) */
export function exchange(lease, id, request, seq, ms, now) {
  return new Promise((resolve) => {
    let timer;
    let done = false;
    const report = (event) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      event();
      resolve();
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
  });
}
