// Long-run leak checks for saferetry, shared by Node (node.mjs) and Chromium
// (page.html). Web-standard APIs only: the runtime front end passes what
// differs in an `env` object (GC, heap reading, the wasm exports, ...).
//
//   const tracker = installTimerTracker();      // BEFORE importing saferetry
//   const saferetry = await import(...);
//   const result = await runLeakSuite({ saferetry, tracker, env, bases, ... });
//   for (const line of formatResult(result)) print(line);
//
// Every loop is bounded in count; every operation is bounded by the policy's
// totalMs, so the suite always ends.

/** The executor (js/src/executor.js: every operation's timers, and a
 * shared budget's exchange timeout) and a poll's loop (js/src/poll.js: its
 * one timer) are the only callers of the global timers inside the library:
 * a timer whose stack holds one of them is the library's. (The self-check in runLeakSuite fails when this matches no
 * library timer at all, as it did when the glue moved, and when
 * operations moved to the executor.) */
const LIB_FRAME = /\/js\/src\/(executor|poll)\.js/;

/**
 * Wraps globalThis.setTimeout/clearTimeout so outstanding timers can be
 * counted: a timer is outstanding from its set until it is cleared or its
 * callback runs. The wasm glue calls the global at call time, so installing
 * this before the first operation is enough (we install it before import).
 */
export function installTimerTracker(g = globalThis) {
  const origSet = g.setTimeout;
  const origClear = g.clearTimeout;
  const live = new Map(); // handle -> { lib, ms }
  const stats = { set: 0, cleared: 0, fired: 0, libSet: 0, libCleared: 0, libFired: 0, clearsOfFinished: 0 };

  const forget = (handle, how) => {
    const t = live.get(handle);
    if (!t) return false;
    live.delete(handle);
    stats[how] += 1;
    if (t.lib) stats[how === 'fired' ? 'libFired' : 'libCleared'] += 1;
    return true;
  };

  function setTimeout(callback, ms, ...args) {
    const stack = new Error().stack ?? '';
    const lib = LIB_FRAME.test(stack);
    let handle;
    const run = typeof callback === 'function'
      ? function (...a) { forget(handle, 'fired'); return callback.apply(this, a); }
      : callback;
    handle = origSet.call(g, run, ms, ...args);
    live.set(handle, { lib, ms, stack });
    stats.set += 1;
    if (lib) stats.libSet += 1;
    return handle;
  }
  function clearTimeout(handle) {
    // A clear of a timer that already fired (or was never tracked) is
    // harmless; counted apart. (The glue passes back the handle it got.)
    if (handle != null && !forget(handle, 'cleared')) stats.clearsOfFinished += 1;
    return origClear.call(g, handle);
  }
  for (const [wrapper, orig] of [[setTimeout, origSet], [clearTimeout, origClear]]) {
    for (const key of Reflect.ownKeys(orig)) { // e.g. Node's util.promisify.custom
      if (!Object.prototype.hasOwnProperty.call(wrapper, key)) {
        try { Object.defineProperty(wrapper, key, Object.getOwnPropertyDescriptor(orig, key)); } catch { /* non-configurable */ }
      }
    }
  }
  g.setTimeout = setTimeout;
  g.clearTimeout = clearTimeout;

  return {
    stats,
    /** Untracked sleep for the harness itself. */
    sleep: (ms) => new Promise((resolve) => origSet.call(g, resolve, ms)),
    later: (ms, fn) => origSet.call(g, fn, ms),
    outstanding() {
      let lib = 0;
      let all = 0;
      const libDelays = [];
      const others = {}; // where the other outstanding timers come from
      for (const t of live.values()) {
        all += 1;
        if (t.lib) { lib += 1; if (libDelays.length < 10) libDelays.push(t.ms); } else {
          const site = callSite(t.stack);
          const key = `${site} ${t.ms} ms`;
          others[key] = (others[key] ?? 0) + 1;
        }
      }
      return { lib, all, libDelays, others };
    },
  };
}

/** The first frame outside this file: who called setTimeout. */
function callSite(stack) {
  const frames = stack.split('\n').slice(1).map((l) => l.trim()).filter((l) => l && !l.includes('/tests/leaks/workload.js'));
  return (frames[0] ?? '?').replace(/^at /, '').replace(/\(?(file|https?):\/\/[^)]*\/([^/)]+)\)?/, '($2)');
}

// ---------------------------------------------------------------------------
// The operation mix.

/** One op in ten of each: 4 successes (one through a 302 redirect), 2
 * retries (503 then 200), 2 attempt timeouts, 2 cancels (one during a
 * backoff wait, one during the request). */
const KINDS = ['ok', 'ok', 'ok', 'redirect', 'retry', 'retry', 'timeout-noretry', 'timeout-max2', 'cancel-backoff', 'cancel-request'];

/** What each (kind, api) must end as; anything else fails the outcome check. */
const EXPECTED = {
  'ok/fetch': /^status 200 attempts 1$/,
  'ok/run': /^succeeded succeeded attempts 1 status 200$/,
  'redirect/fetch': /^status 200 attempts 1$/,
  'redirect/run': /^succeeded succeeded attempts 1 status 200$/,
  'retry/fetch': /^status 200 attempts 2$/,
  'retry/run': /^succeeded succeeded attempts 2 status 200$/,
  'timeout-noretry/fetch': /^RetryError attempt-timeout attempts 1$/,
  'timeout-noretry/run': /^\S+ attempt-timeout attempts 1$/,
  'timeout-max2/fetch': /^RetryError (attempts-exhausted|attempt-timeout) attempts 2$/,
  'timeout-max2/run': /^\S+ (attempts-exhausted|attempt-timeout) attempts 2$/,
  'cancel-backoff/fetch': /^AbortError$/,
  'cancel-backoff/run': /^cancelled cancelled attempts 1$/,
  'cancel-request/fetch': /^AbortError$/,
  'cancel-request/run': /^cancelled cancelled attempts 1$/,
};

/** Wait long enough to be inside the 990 ms backoff, short of its end. */
const CANCEL_IN_BACKOFF_MS = 10;
/** The server holds these heads for 2 s: a cancel at 15 ms is mid-request. */
const CANCEL_IN_REQUEST_MS = 15;
const SLOW_MS = 2000;
const ATTEMPT_TIMEOUT_MS = 30;

function makeOp(i, { prefix, bases, tracker }) {
  const kind = KINDS[i % KINDS.length];
  const api = Math.floor(i / KINDS.length) % 2 ? 'run' : 'fetch';
  const base = bases[i % bases.length];
  const id = `${prefix}-${i}`;
  const seq = (steps) => `${base}/s/seq/${id}?steps=${steps}`;
  const slow = `${base}/s/slow-headers/${id}?ms=${SLOW_MS}`;
  const controller = new AbortController();
  let url;
  let retry;
  let cancelAfterMs;
  switch (kind) {
    case 'ok': url = seq('200'); break;
    // Outside browsers saferetry follows the hop itself (js/src/hops.js).
    case 'redirect': url = `${base}/s/redirect/${id}?status=302&to=${encodeURIComponent(`/s/seq/${id}-to?steps=200`)}`; break;
    case 'retry': url = seq('503,200'); retry = { baseMs: 5, capMs: 5 }; break;
    case 'timeout-noretry': url = slow; retry = { attemptMs: ATTEMPT_TIMEOUT_MS, retryOn: { timeouts: false } }; break;
    case 'timeout-max2': url = slow; retry = { attemptMs: ATTEMPT_TIMEOUT_MS, maxAttempts: 2, baseMs: 5, capMs: 5 }; break;
    case 'cancel-backoff':
      url = seq('503,200');
      // ~990 ms wait; abort shortly after the retry is announced, i.e. while
      // the engine sleeps on its backoff timer.
      retry = { baseMs: 1000, capMs: 1000, random: () => 0.99,
        onRetry: () => { tracker.later(CANCEL_IN_BACKOFF_MS, () => controller.abort()); } };
      break;
    case 'cancel-request':
      url = slow;
      retry = { attemptMs: 5000 };
      cancelAfterMs = CANCEL_IN_REQUEST_MS;
      break;
  }
  return { kind, api, url, init: { signal: controller.signal, ...(retry && { retry }) }, controller, cancelAfterMs };
}

/** Runs one op to its end; returns its signature (and what it produced). */
async function runOp(policy, saferetry, op, tracker) {
  if (op.cancelAfterMs !== undefined) tracker.later(op.cancelAfterMs, () => op.controller.abort());
  if (op.api === 'fetch') {
    try {
      const res = await policy.fetch(op.url, op.init);
      return { sig: `status ${res.status} attempts ${saferetry.reportOf(res)?.attempts.length}`, value: res };
    } catch (e) {
      const sig = e?.name === 'RetryError' ? `RetryError ${e.reason} attempts ${e.report.attempts.length}` : String(e?.name);
      return { sig, value: e };
    }
  }
  const operation = policy.run(op.url, op.init);
  let states = 0;
  operation.subscribe(() => { states += 1; }); // never unsubscribed: dies with the op
  const o = await operation.result;
  const sig = `${o.kind} ${o.reason} attempts ${o.report.attempts.length}${o.response ? ` status ${o.response.status}` : ''}`;
  return { sig, value: { operation, outcome: o, states } };
}

/**
 * Runs `count` ops of the mix, at most `concurrency` at once. `keep` (an
 * array) retains everything each op produced (for the per-op cost
 * calibration). Returns per-(kind/api) signature counts.
 */
async function runMix({ policy, saferetry, tracker, bases, prefix, count, concurrency, keep, onProgress }) {
  const signatures = {};
  let next = 0;
  let done = 0;
  async function worker() {
    while (next < count) { // bounded: each pass takes one index
      const i = next++;
      const op = makeOp(i, { prefix, bases, tracker });
      const { sig, value } = await runOp(policy, saferetry, op, tracker);
      const key = `${op.kind}/${op.api}`;
      signatures[key] ??= {};
      signatures[key][sig] = (signatures[key][sig] ?? 0) + 1;
      if (keep) keep.push(op, value);
      done += 1;
      onProgress?.(done);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return signatures;
}

function unexpectedOutcomes(signatures, expected = EXPECTED) {
  const bad = [];
  for (const [key, sigs] of Object.entries(signatures)) {
    for (const [sig, n] of Object.entries(sigs)) {
      if (!expected[key]?.test(sig)) bad.push(`${key}: ${n}× "${sig}"`);
    }
  }
  return bad;
}

// ---------------------------------------------------------------------------
// Measurements.

const MiB = 1024 * 1024;

/**
 * A meter is one figure that must not grow over the run:
 *   { name, unit: 'bytes' | 'count', bound, read: () => number | Promise<number>, listeners?, calibrated? }
 * `bound` is the growth allowed from after the warm-up to after the run;
 * `listeners: true` marks a process-wide count of event listeners;
 * `calibrated: false` skips the check that 10 000 leaked operations (as
 * measured by retaining 1000) would exceed 4 × the bound.
 * Readings are taken after GC several times with short pauses, so
 * finalizers and what they release have run.
 */
async function reading(env, tracker) {
  for (let k = 0; k < 5; k += 1) {
    await env.gc();
    await tracker.sleep(40);
  }
  await env.gc();
  const r = {};
  for (const m of env.meters) r[m.name] = await m.read();
  const w = env.wasmExports();
  r.wasmMemory = w.memory.buffer.byteLength;
  r.externrefs = w.__wbindgen_externrefs?.length ?? null;
  return r;
}

/** Counts the abort listeners on `signal` by wrapping its own add/remove
 * methods (the glue and core.js call them on the instance). */
function watchAbortListeners(signal) {
  const registered = new Set();
  const counts = { added: 0, removed: 0, maxAtOnce: 0 };
  const { addEventListener, removeEventListener } = EventTarget.prototype;
  signal.addEventListener = function (type, fn, options) {
    if (type === 'abort' && fn) {
      counts.added += 1;
      registered.add(fn);
      counts.maxAtOnce = Math.max(counts.maxAtOnce, registered.size);
    }
    return addEventListener.call(this, type, fn, options);
  };
  signal.removeEventListener = function (type, fn, options) {
    if (type === 'abort' && fn && registered.delete(fn)) counts.removed += 1;
    return removeEventListener.call(this, type, fn, options);
  };
  return { counts, registered: () => registered.size };
}

/** 1000 sequential calls (fetch and run alternately; one in four is a 503
 * then 200, so the engine's backoff sleep listens on the signal too) sharing
 * one long-lived caller signal; then it is aborted. */
async function listenerCheck({ policy, tracker, env, base, prefix, calls }) {
  const listenerMeter = env.meters.find((m) => m.listeners);
  const before = listenerMeter ? (await reading(env, tracker))[listenerMeter.name] : null;
  const controller = new AbortController();
  const signal = controller.signal;
  const watch = watchAbortListeners(signal);
  let ok = 0;
  const failures = [];
  for (let i = 0; i < calls; i += 1) {
    const retried = i % 8 >= 6; // one fetch and one run in every eight
    const url = `${base}/s/seq/${prefix}-${i}?steps=${retried ? '503,200' : '200'}`;
    const init = { signal, retry: { baseMs: 5, capMs: 5 } };
    let status;
    if (i % 2 === 0) {
      status = (await policy.fetch(url, init).catch((e) => ({ status: String(e?.name) }))).status;
    } else {
      const o = await policy.run(url, init).result;
      status = o.response?.status ?? `${o.kind} ${o.reason}`;
    }
    if (status === 200) ok += 1;
    else if (failures.length < 5) failures.push(`call ${i}: ${status}`);
  }
  const registeredAfter = watch.registered();
  // The runtime's own count: Node's events.getEventListeners on the signal,
  // or (Chromium) the renderer's count of JS event listeners vs before.
  let runtimeAfter = env.abortListenerCount?.(signal) ?? null;
  let runtimeHow = 'events.getEventListeners(signal)';
  if (runtimeAfter === null && listenerMeter) {
    runtimeAfter = (await reading(env, tracker))[listenerMeter.name] - before;
    runtimeHow = `${listenerMeter.name} now − before the calls`;
  }
  const errorsBefore = env.errors.length;
  let abortThrew = null;
  try {
    controller.abort();
  } catch (e) {
    abortThrew = String(e?.stack ?? e);
  }
  await tracker.sleep(100); // let anything the abort triggered run
  return {
    calls, ok, failures, ...watch.counts, registeredAfter, runtimeAfter, runtimeHow,
    abortThrew, errorsAfterAbort: env.errors.slice(errorsBefore, errorsBefore + 5),
    libTimersAfterAbort: tracker.outstanding().lib,
  };
}

/** A policy with a shared budget, dropped while its carrier still keeps
 * the policy's `attach`ed release and its one exchange never answers: the
 * policy and, once its answer timer fired, everything that held the
 * carrier (the policy's fleet) are collected. A release that held the
 * policy, or its fleet, strongly would keep the carrier alive. */
async function droppedLeasing({ saferetry, tracker, env, base, prefix }) {
  const gone = new Set();
  const registry = new FinalizationRegistry((what) => gone.add(what));
  const releases = [];
  await (async () => {
    const shared = { exchange: () => new Promise(() => {}), attach: (release) => releases.push(release) };
    const policy = new saferetry.RetryPolicy({ quota: { capacity: 50 }, throttle: false, shared });
    registry.register(shared, 'carrier');
    registry.register(policy, 'policy');
    await policy.fetch(`${base}/s/seq/${prefix}?steps=200`);
  })();
  for (let i = 0; i < 40 && gone.size < 2; i += 1) { // bounded: ~4 s, the answer timer is 1 s
    await env.gc();
    await tracker.sleep(100);
  }
  return { gone: [...gone].sort().join(' ') || 'nothing', releases: releases.length };
}

/** `policy.poll` of every ending — done, fatal, a status hook that throws,
 * the budget ending while the verdict never answers, a cancel while it
 * waits for the next poll — `count` of them, 20 at once, under one
 * long-lived caller signal. Its loop (js/src/poll.js) holds the submit's
 * and each query's response, a timer and a listener; every ending must let
 * go of all of them. */
async function pollCheck({ policy, tracker, env, base, prefix, count }) {
  const status = (submitted) => new URL(submitted.headers.get('location'), base);
  const kinds = {
    done: [{ status }, 'succeeded succeeded'],
    fatal: [{ status, verdict: () => 'fatal' }, 'failed task-failed'],
    'status throws': [{ status: () => { throw new Error('no task id'); } }, 'failed task-failed'],
    'verdict never answers': [{ status, verdict: () => new Promise(() => {}), budgetMs: 50 }, 'try-later deadline'],
    'cancelled while waiting': [{ status, phases: [{ everyMs: 60_000 }] }, 'cancelled cancelled'],
  };
  const names = Object.keys(kinds);
  const heldBefore = env.held?.() ?? null; // (a dropped policy's own may still wait for its finalizer)
  const controller = new AbortController();
  const watch = watchAbortListeners(controller.signal);
  const endings = {};
  const one = async (i) => {
    const name = names[i % names.length];
    const [spec, want] = kinds[name];
    const op = policy.poll(`${base}/s/task/${prefix}-${i}?ms=0`, { method: 'POST', body: 'x', signal: controller.signal }, { phases: [{ everyMs: 5 }], ...spec });
    if (name === 'cancelled while waiting') op.subscribe((s) => { if (s.state === 'waiting') op.cancel(); });
    const o = await op.result;
    await o.response?.text();
    const sig = `${name}: ${o.kind} ${o.reason}${`${o.kind} ${o.reason}` === want ? '' : ` (want ${want})`}`;
    endings[sig] = (endings[sig] ?? 0) + 1;
  };
  for (let i = 0; i < count; i += 20) await Promise.all(Array.from({ length: Math.min(20, count - i) }, (_, k) => one(i + k)));
  await tracker.sleep(50);
  const held = heldBefore === null ? null : env.held() - heldBefore;
  return { count, endings, held, libTimers: tracker.outstanding().lib, listeners: watch.registered() };
}

/**
 * The whole suite. Returns { figures, checks: [{ name, ok, detail }] }.
 * env: { runtime, gc(), meters: [...], wasmExports(), errors: [],
 *        abortListenerCount?(signal), log?(line) }
 */
export async function runLeakSuite({ saferetry, tracker, env, bases, total = 10_000, warmup = 2000, concurrency = 32, listenerCalls = 1000, calibrate = 1000 }) {
  const log = env.log ?? (() => {});
  const run = `leak${Date.now().toString(36)}`;
  // No quota and no adaptive throttling: the mix fails on purpose (timeouts,
  // cancels, 503s), and this suite is about what each operation leaves
  // behind, not about how a policy answers an upstream that fails.
  const policy = new saferetry.RetryPolicy({ quota: false, throttle: false, totalMs: 10_000 });
  const ctx = { policy, saferetry, tracker, bases, concurrency };
  const checks = [];
  const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });
  const figures = { runtime: env.runtime, total, warmup, concurrency,
    meters: env.meters.map(({ name, unit, bound }) => ({ name, unit, bound })) };

  // Warm-up: reaches the steady state (JIT, wasm memory high-water mark,
  // externref table size, connection machinery) with the same concurrency.
  let t = Date.now();
  const warmSigs = await runMix({ ...ctx, prefix: `${run}-w`, count: warmup });
  figures.warmupMs = Date.now() - t;
  log(`warm-up: ${warmup} ops in ${figures.warmupMs} ms`);

  const before = await reading(env, tracker);

  // The run, in two halves with a settled reading between them: a leak
  // grows both halves alike, a one-time step (JIT, caches) only the first.
  t = Date.now();
  const signatures = {};
  const half = Math.floor(total / 2);
  let mid = null;
  for (const [k, count] of [[0, half], [1, total - half]]) {
    const sigs = await runMix({ ...ctx, prefix: `${run}-r${k}`, count,
      onProgress: (n) => { if (n % 2000 === 0) log(`run half ${k + 1}: ${n}/${count} ops, ${Date.now() - t} ms`); } });
    for (const [key, m] of Object.entries(sigs)) {
      signatures[key] ??= {};
      for (const [sig, n] of Object.entries(m)) signatures[key][sig] = (signatures[key][sig] ?? 0) + n;
    }
    if (k === 0) {
      figures.timersAtHalf = tracker.outstanding();
      const pause = Date.now();
      mid = await reading(env, tracker);
      t += Date.now() - pause; // the run's time excludes this pause
    }
  }
  figures.runMs = Date.now() - t;
  // What the executor holds for the machines by number (js/src/attempts.js):
  // each call, attempt and thrown value is let go when its operation ends.
  if (env.held) {
    figures.held = env.held();
    check('the executor holds nothing of an operation once it ended (js/src/attempts.js)', figures.held === 0, `${figures.held} records held after ${total} operations`);
  }
  figures.timersAtSettle = tracker.outstanding();
  await tracker.sleep(50);
  figures.timersAfterPause = tracker.outstanding();
  figures.timerStats = { ...tracker.stats };
  figures.signatures = signatures;
  figures.stats = policy.stats();
  const after = await reading(env, tracker);

  // Long-lived caller signal.
  t = Date.now();
  figures.listeners = await listenerCheck({ ...ctx, env, base: bases[0], prefix: `${run}-l`, calls: listenerCalls });
  figures.listenerMs = Date.now() - t;

  // A shared budget (rule 9): the same mix through a policy that leases its
  // start rate from an authority; its exchanges carry timers of their own.
  const authority = new saferetry.BudgetAuthority();
  const exchange = (request) => Promise.resolve().then(() => authority.grant(request));
  const leasing = new saferetry.RetryPolicy({ quota: false, throttle: false, totalMs: 10_000, rate: { requests: 1_000_000 }, shared: { exchange } });
  t = Date.now();
  const sharedSigs = await runMix({ ...ctx, policy: leasing, prefix: `${run}-s`, count: 2000 });
  figures.sharedMs = Date.now() - t;
  await tracker.sleep(50);
  figures.sharedTimers = tracker.outstanding();
  figures.sharedStats = leasing.stats();
  figures.droppedLeasing = await droppedLeasing({ ...ctx, env, base: bases[0], prefix: `${run}-d` });
  t = Date.now();
  figures.polls = await pollCheck({ ...ctx, env, base: bases[0], prefix: `${run}-p`, count: 200 });
  figures.pollMs = Date.now() - t;

  // Calibration: what one op costs when everything it produced stays
  // reachable (its controller, Response or error or outcome, Operation).
  // A library that leaked whole operations would hold at least this each.
  const cal0 = await reading(env, tracker);
  const keep = [];
  t = Date.now();
  await runMix({ ...ctx, prefix: `${run}-c`, count: calibrate, keep });
  figures.calibrateMs = Date.now() - t;
  const cal1 = await reading(env, tracker);
  figures.calibrate = calibrate;
  keep.length = 0;
  const end = await reading(env, tracker);
  figures.timersAtEnd = tracker.outstanding();
  figures.readings = { before, mid, after, cal0, cal1, end };

  // Checks.
  const bad = unexpectedOutcomes(signatures).concat(unexpectedOutcomes(warmSigs).map((b) => `warm-up ${b}`));
  check(`every op ended as its kind requires (${total} + ${warmup} warm-up)`, bad.length === 0, bad.slice(0, 8).join('; '));
  check('0 library timers outstanding once the ops settle (midway and at the end)', figures.timersAtSettle.lib === 0 && figures.timersAtHalf.lib === 0,
    `${figures.timersAtHalf.lib} midway, ${figures.timersAtSettle.lib} at the end; delays ${figures.timersAtSettle.libDelays.join(',') || '-'}`);
  check('the timer tracker sees the library\'s timers (its glue frame is found in their stacks)', figures.timerStats.libSet > 0,
    `${figures.timerStats.libSet} of ${figures.timerStats.set} timers set by the library`);
  const S = figures.sharedStats;
  // A leased rate queues a fresh client's starts for its first answer (README,
  // Fleet budgets): a cancel at 15 ms may find the op still waiting for its slot.
  const sharedBad = unexpectedOutcomes(sharedSigs, { ...EXPECTED, 'cancel-request/run': /^cancelled cancelled attempts [01]$/ });
  check('shared budget: 2000 ops ended as their kinds require, leased, nothing in flight, 0 library timers after settling',
    sharedBad.length === 0 && S.shared.mode === 'leased' && S.shared.roundTrips > 0 && S.inFlight === 0 && figures.sharedTimers.lib === 0,
    `${sharedBad.slice(0, 3).join('; ')} mode ${S.shared.mode}, ${S.shared.roundTrips} round trips, ${figures.sharedTimers.lib} timers`);
  const D = figures.droppedLeasing;
  check('a dropped policy whose carrier keeps its attached release and whose exchange never answers is collected, its carrier too',
    D.gone === 'carrier policy' && D.releases === 1, `collected: ${D.gone}; releases kept ${D.releases}`);
  const P = figures.polls;
  const pollBad = Object.keys(P.endings).filter((sig) => sig.includes('(want'));
  check(`polls: ${P.count} of every ending ended as required and let go of everything (records, timers, listeners)`,
    pollBad.length === 0 && (P.held === null || P.held === 0) && P.libTimers === 0 && P.listeners === 0,
    `${Object.entries(P.endings).map(([sig, n]) => `${n}× ${sig}`).join('; ')}; records held ${P.held > 0 ? '+' : ''}${P.held}, library timers ${P.libTimers}, abort listeners ${P.listeners}, ${figures.pollMs} ms`);
  const T = figures.timerStats;
  check('every library timer set was cleared or fired', T.libSet === T.libCleared + T.libFired + figures.timersAfterPause.lib && figures.timersAtEnd.lib === 0,
    `set ${T.libSet}, cleared ${T.libCleared}, fired ${T.libFired}`);
  check('policy: nothing in flight or queued', figures.stats.inFlight === 0 && figures.stats.queued === 0, JSON.stringify(figures.stats));
  for (const m of env.meters) {
    const growth = after[m.name] - before[m.name];
    const f = m.unit === 'bytes' ? fmtBytes : String;
    check(`${m.name} growth over ${total} ops ≤ ${f(m.bound)}`, growth <= m.bound,
      `${f(before[m.name])} → ${f(mid[m.name])} → ${f(after[m.name])} (${m.unit === 'bytes' ? fmtSigned(growth) : growth})`);
    if (m.unit === 'bytes' && m.calibrated !== false) {
      const perOp = (cal1[m.name] - cal0[m.name]) / calibrate;
      check(`${m.name}: the bound catches leaked operations (${total} × one op's cost ≥ 4 × bound)`, total * perOp >= 4 * m.bound,
        `${fmtBytes(perOp)}/op → ${fmtBytes(total * perOp)} for ${total}`);
    }
  }
  // Wasm memory grows by 64 KiB pages and the externref table by doubling,
  // each when the operations in flight reach a new high-water mark, which
  // can happen once at any point after the warm-up. A leak keeps growing, so
  // the run may take one step at most. (A module leaking one 8-byte box per
  // call grew by three pages over this run: measured, see README.)
  const PAGE = 64 * 1024;
  check('wasm memory: at most one 64 KiB page of growth after the warm-up',
    after.wasmMemory - before.wasmMemory <= PAGE,
    `${fmtBytes(before.wasmMemory)} → ${fmtBytes(mid.wasmMemory)} → ${fmtBytes(after.wasmMemory)}`);
  check('externref table: at most one doubling after the warm-up',
    after.externrefs === null || after.externrefs <= 2 * before.externrefs,
    `${before.externrefs} → ${mid.externrefs} → ${after.externrefs} slots`);
  const L = figures.listeners;
  check(`long-lived signal: ${L.calls} sequential calls succeeded`, L.ok === L.calls, L.failures.join('; '));
  check('long-lived signal: 0 abort listeners left after the calls', L.registeredAfter === 0 && (L.runtimeAfter === null || L.runtimeAfter === 0),
    `wrapped count ${L.registeredAfter}, ${L.runtimeHow} ${L.runtimeAfter} (added ${L.added}, removed ${L.removed}, max at once ${L.maxAtOnce})`);
  check('long-lived signal: aborting it afterwards throws nothing and reports nothing',
    L.abortThrew === null && L.errorsAfterAbort.length === 0 && L.libTimersAfterAbort === 0,
    L.abortThrew ?? L.errorsAfterAbort.join('; '));
  check('no uncaught errors or unhandled rejections during the suite', env.errors.length === 0, env.errors.slice(0, 3).join('; '));
  return { figures, checks };
}

// ---------------------------------------------------------------------------
// Printing.

export function fmtBytes(n) {
  const a = Math.abs(n);
  if (a >= MiB) return `${(n / MiB).toFixed(2)} MiB`;
  if (a >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${Math.round(n)} B`;
}
const fmtSigned = (n) => (n >= 0 ? '+' : '−') + fmtBytes(Math.abs(n));

export function formatResult({ figures: f, checks }) {
  const out = [];
  const T = f.timerStats;
  const R = f.readings;
  out.push(`runtime: ${f.runtime}`);
  out.push(`mix: ${f.total} ops (concurrency ${f.concurrency}) in ${f.runMs} ms; warm-up ${f.warmup} ops in ${f.warmupMs} ms`);
  for (const [key, sigs] of Object.entries(f.signatures).sort()) {
    out.push(`  ${key.padEnd(22)} ${Object.entries(sigs).map(([s, n]) => `${n}× ${s}`).join(' | ')}`);
  }
  out.push(`timers (library): set ${T.libSet}, cleared ${T.libCleared}, fired ${T.libFired}; outstanding midway ${f.timersAtHalf.lib}, at settle ${f.timersAtSettle.lib}, after 50 ms ${f.timersAfterPause.lib}, at end ${f.timersAtEnd.lib}; clears of already-fired timers ${T.clearsOfFinished}`);
  out.push(`timers (all, runtime's own included): set ${T.set}, outstanding at settle ${f.timersAtSettle.all}, at end ${f.timersAtEnd.all}` +
    ` (others at end: ${Object.entries(f.timersAtEnd.others).map(([k, n]) => `${n}× ${k}`).join(', ') || 'none'})`);
  for (const m of f.meters) {
    const fm = m.unit === 'bytes' ? fmtBytes : String;
    const d = (a, b) => (m.unit === 'bytes' ? fmtSigned(b - a) : `${b - a >= 0 ? '+' : ''}${b - a}`);
    out.push(`${m.name}: before ${fm(R.before[m.name])}, after ${fm(R.after[m.name])}, growth ${d(R.before[m.name], R.after[m.name])} (bound ${fm(m.bound)}); ` +
      `midway ${fm(R.mid[m.name])}: first half ${d(R.before[m.name], R.mid[m.name])}, second half ${d(R.mid[m.name], R.after[m.name])}`);
    const cal = R.cal1[m.name] - R.cal0[m.name];
    out.push(`  calibration: ${f.calibrate} ops retained → ${d(0, cal)}` + (m.unit === 'bytes'
      ? `, ${fmtBytes(cal / f.calibrate)}/op; ${f.total} leaked ops ≈ ${fmtBytes((cal / f.calibrate) * f.total)}; after releasing them ${fmtBytes(R.end[m.name])}`
      : `; after releasing them ${R.end[m.name]}`));
  }
  out.push(`wasm memory: after warm-up ${fmtBytes(R.before.wasmMemory)}, midway ${fmtBytes(R.mid.wasmMemory)}, after run ${fmtBytes(R.after.wasmMemory)}, at end ${fmtBytes(R.end.wasmMemory)}`);
  out.push(`externref table: after warm-up ${R.before.externrefs}, midway ${R.mid.externrefs}, after run ${R.after.externrefs}, at end ${R.end.externrefs} slots`);
  const L = f.listeners;
  out.push(`listeners: ${L.calls} calls on one signal in ${f.listenerMs} ms; abort listeners added ${L.added}, removed ${L.removed}, max at once ${L.maxAtOnce}, left ${L.registeredAfter}` +
    (L.runtimeAfter === null ? '' : `; ${L.runtimeHow}: ${L.runtimeAfter}`));
  out.push(`policy.stats(): ${JSON.stringify(f.stats)}`);
  for (const ch of checks) out.push(`${ch.ok ? 'ok  ' : 'FAIL'} ${ch.name}${ch.detail ? ` — ${ch.detail}` : ''}`);
  const failed = checks.filter((ch) => !ch.ok).length;
  out.push(`${checks.length - failed} passed, ${failed} failed`);
  return out;
}
