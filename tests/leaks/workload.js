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

/** The package's glue (pkg/saferetry.js) is the only caller of the global
 * timers inside the library: a timer whose stack holds it is the library's. */
const LIB_FRAME = /\/pkg\/saferetry\.js/;

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
    snapshot() { return { ...stats, ...this.outstanding() }; },
  };
}

/** The first frame outside this file: who called setTimeout. */
function callSite(stack) {
  const frames = stack.split('\n').slice(1).map((l) => l.trim()).filter((l) => l && !l.includes('/tests/leaks/workload.js'));
  return (frames[0] ?? '?').replace(/^at /, '').replace(/\(?(file|https?):\/\/[^)]*\/([^/)]+)\)?/, '($2)');
}

// ---------------------------------------------------------------------------
// The operation mix.

/** One op in ten of each: 4 successes, 2 retries (503 then 200), 2 attempt
 * timeouts, 2 cancels (one during a backoff wait, one during the request). */
const KINDS = ['ok', 'ok', 'ok', 'ok', 'retry', 'retry', 'timeout-noretry', 'timeout-max2', 'cancel-backoff', 'cancel-request'];

/** What each (kind, api) must end as; anything else fails the outcome check. */
const EXPECTED = {
  'ok/fetch': /^status 200 attempts 1$/,
  'ok/run': /^succeeded succeeded attempts 1 status 200$/,
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

function unexpectedOutcomes(signatures) {
  const bad = [];
  for (const [key, sigs] of Object.entries(signatures)) {
    for (const [sig, n] of Object.entries(sigs)) {
      if (!EXPECTED[key]?.test(sig)) bad.push(`${key}: ${n}× "${sig}"`);
    }
  }
  return bad;
}

// ---------------------------------------------------------------------------
// Measurements.

/** GC a few times with short pauses (finalizers and microtasks run in
 * between), then read the heap. */
async function settledHeap(env, tracker) {
  for (let k = 0; k < 5; k += 1) {
    await env.gc();
    await tracker.sleep(40);
  }
  await env.gc();
  return env.heapUsed();
}

function wasmFigures(env) {
  const w = env.wasmExports();
  return { memory: w.memory.buffer.byteLength, externrefs: w.__wbindgen_externrefs?.length ?? null };
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
 * then 200, so the engine's backoff sleep listens on the signal too) sharing one
 * long-lived caller signal; then it is aborted. */
async function listenerCheck({ policy, saferetry, tracker, env, base, prefix, calls }) {
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
  const nativeAfter = env.abortListenerCount?.(signal) ?? null;
  const errorsBefore = env.errors.length;
  let abortThrew = null;
  try {
    controller.abort();
  } catch (e) {
    abortThrew = String(e?.stack ?? e);
  }
  await tracker.sleep(100); // let anything the abort triggered run
  return {
    calls, ok, failures, ...watch.counts, registeredAfter, nativeAfter,
    abortThrew, errorsAfterAbort: env.errors.slice(errorsBefore, errorsBefore + 5),
    nativeAfterAbort: env.abortListenerCount?.(signal) ?? null,
    libTimersAfterAbort: tracker.outstanding().lib,
  };
}

const MiB = 1024 * 1024;
/** Heap growth allowed over the 10 000 ops (see README.md for why). */
export const HEAP_BOUND = 2 * MiB;

/**
 * The whole suite. Returns { figures, checks: [{ name, ok, detail }] }.
 * env: { runtime, gc(), heapUsed(), wasmExports(), errors: [], abortListenerCount?(signal), log?(line) }
 */
export async function runLeakSuite({ saferetry, tracker, env, bases, total = 10_000, warmup = 2000, concurrency = 32, listenerCalls = 1000, calibrate = 1000 }) {
  const log = env.log ?? (() => {});
  const run = `leak${Date.now().toString(36)}`;
  const policy = new saferetry.RetryPolicy({ quota: false, totalMs: 10_000 });
  const ctx = { policy, saferetry, tracker, bases, concurrency };
  const checks = [];
  const check = (name, ok, detail) => checks.push({ name, ok: !!ok, detail });
  const figures = { runtime: env.runtime, total, warmup, concurrency };

  // Warm-up: reaches the steady state (JIT, wasm memory high-water mark,
  // externref table size, connection machinery) with the same concurrency.
  let t = Date.now();
  const warmSigs = await runMix({ ...ctx, prefix: `${run}-w`, count: warmup });
  figures.warmupMs = Date.now() - t;
  log(`warm-up: ${warmup} ops in ${figures.warmupMs} ms`);
  figures.timersAfterWarmup = tracker.outstanding();

  const heapBefore = await settledHeap(env, tracker);
  const wasmBefore = wasmFigures(env);

  // The run, in two halves with a settled reading between them: a leak
  // grows both halves alike, a one-time step (JIT, caches) only the first.
  t = Date.now();
  const signatures = {};
  const half = Math.floor(total / 2);
  let heapMid = null;
  let wasmMid = null;
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
      heapMid = await settledHeap(env, tracker);
      wasmMid = wasmFigures(env);
      t += Date.now() - pause; // the run's time excludes the GC pause
    }
  }
  figures.runMs = Date.now() - t;
  figures.timersAtSettle = tracker.outstanding();
  await tracker.sleep(50);
  figures.timersAfterPause = tracker.outstanding();
  figures.timerStats = { ...tracker.stats };
  figures.signatures = signatures;
  figures.stats = policy.stats();

  const heapAfter = await settledHeap(env, tracker);
  const wasmAfter = wasmFigures(env);
  figures.heap = { before: heapBefore, mid: heapMid, after: heapAfter, growth: heapAfter - heapBefore, bound: HEAP_BOUND };
  figures.wasm = { before: wasmBefore, mid: wasmMid, after: wasmAfter };

  // Long-lived caller signal.
  t = Date.now();
  figures.listeners = await listenerCheck({ ...ctx, env, base: bases[0], prefix: `${run}-l`, calls: listenerCalls });
  figures.listenerMs = Date.now() - t;

  // Calibration: what one op costs when everything it produced stays
  // reachable (its controller, Response or error or outcome, the Operation).
  // A library leak of whole operations would hold at least this much each.
  const heapCal0 = await settledHeap(env, tracker);
  const keep = [];
  await runMix({ ...ctx, prefix: `${run}-c`, count: calibrate, keep });
  const heapCal1 = await settledHeap(env, tracker);
  figures.calibration = { ops: calibrate, retained: keep.length, bytes: heapCal1 - heapCal0, perOp: (heapCal1 - heapCal0) / calibrate };
  keep.length = 0;
  figures.heapAfterCalibration = await settledHeap(env, tracker);
  figures.timersAtEnd = tracker.outstanding();
  figures.wasmAtEnd = wasmFigures(env);

  // Checks.
  const bad = unexpectedOutcomes(signatures).concat(unexpectedOutcomes(warmSigs).map((b) => `warm-up ${b}`));
  check(`every op ended as its kind requires (${total} + ${warmup} warm-up)`, bad.length === 0, bad.slice(0, 8).join('; '));
  check('0 library timers outstanding after the ops settle (midway and at the end)', figures.timersAtSettle.lib === 0 && figures.timersAtHalf.lib === 0,
    `${figures.timersAtSettle.lib} outstanding, delays ${figures.timersAtSettle.libDelays.join(',')}`);
  check('every library timer set was cleared or fired', figures.timerStats.libSet === figures.timerStats.libCleared + figures.timerStats.libFired + figures.timersAtSettle.lib && figures.timersAtEnd.lib === 0,
    JSON.stringify(figures.timerStats));
  check('policy: nothing in flight or queued', figures.stats.inFlight === 0 && figures.stats.queued === 0, JSON.stringify(figures.stats));
  check(`heap growth over ${total} ops ≤ ${HEAP_BOUND / MiB} MiB`, figures.heap.growth <= HEAP_BOUND,
    `${fmtBytes(heapBefore)} → ${fmtBytes(heapAfter)} (${fmtSigned(figures.heap.growth)})`);
  const leakedAll = total * figures.calibration.perOp;
  check(`the bound catches leaked operations (${total} × one op's cost ≥ 4 × bound)`, leakedAll >= 4 * HEAP_BOUND,
    `${fmtBytes(figures.calibration.perOp)}/op → ${fmtBytes(leakedAll)} for ${total}`);
  check('wasm memory did not grow after the warm-up', wasmAfter.memory <= wasmBefore.memory,
    `${fmtBytes(wasmBefore.memory)} → ${wasmMid ? fmtBytes(wasmMid.memory) : '?'} → ${fmtBytes(wasmAfter.memory)}`);
  check('externref table did not grow after the warm-up', wasmAfter.externrefs === null || wasmAfter.externrefs <= wasmBefore.externrefs,
    `${wasmBefore.externrefs} → ${wasmMid?.externrefs} → ${wasmAfter.externrefs} slots`);
  const L = figures.listeners;
  check(`long-lived signal: ${L.calls} sequential calls succeeded`, L.ok === L.calls, L.failures.join('; '));
  check('long-lived signal: 0 abort listeners left after the calls', L.registeredAfter === 0 && (L.nativeAfter === null || L.nativeAfter === 0),
    `wrapped count ${L.registeredAfter}, runtime count ${L.nativeAfter} (added ${L.added}, removed ${L.removed}, max at once ${L.maxAtOnce})`);
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
  out.push(`runtime: ${f.runtime}`);
  out.push(`mix: ${f.total} ops (concurrency ${f.concurrency}) in ${f.runMs} ms; warm-up ${f.warmup} ops in ${f.warmupMs} ms`);
  for (const [key, sigs] of Object.entries(f.signatures).sort()) {
    out.push(`  ${key.padEnd(22)} ${Object.entries(sigs).map(([s, n]) => `${n}× ${s}`).join(' | ')}`);
  }
  out.push(`timers (library): set ${T.libSet}, cleared ${T.libCleared}, fired ${T.libFired}; outstanding midway ${f.timersAtHalf.lib}, at settle ${f.timersAtSettle.lib}, after 50 ms ${f.timersAfterPause.lib}, at end ${f.timersAtEnd.lib}; clears of already-fired timers ${T.clearsOfFinished}`);
  out.push(`timers (all, harness and runtime included): set ${T.set}, outstanding at settle ${f.timersAtSettle.all}, at end ${f.timersAtEnd.all}` +
    ` (others at end: ${Object.entries(f.timersAtEnd.others).map(([k, n]) => `${n}× ${k}`).join(', ') || 'none'})`);
  out.push(`heap: before ${fmtBytes(f.heap.before)}, after ${fmtBytes(f.heap.after)}, growth ${fmtSigned(f.heap.growth)} (bound ${fmtBytes(f.heap.bound)}); ` +
    `midway ${fmtBytes(f.heap.mid)}: first half ${fmtSigned(f.heap.mid - f.heap.before)}, second half ${fmtSigned(f.heap.after - f.heap.mid)}`);
  const c = f.calibration;
  out.push(`calibration: ${c.ops} ops retained → ${fmtSigned(c.bytes)}, ${fmtBytes(c.perOp)}/op; ${f.total} leaked ops ≈ ${fmtBytes(c.perOp * f.total)}; heap after releasing them ${fmtBytes(f.heapAfterCalibration)}`);
  const w = f.wasm;
  out.push(`wasm memory: after warm-up ${fmtBytes(w.before.memory)}, midway ${w.mid ? fmtBytes(w.mid.memory) : '?'}, after run ${fmtBytes(w.after.memory)}, at end ${fmtBytes(f.wasmAtEnd.memory)}`);
  out.push(`externref table: after warm-up ${w.before.externrefs}, midway ${w.mid?.externrefs}, after run ${w.after.externrefs}, at end ${f.wasmAtEnd.externrefs} slots`);
  const L = f.listeners;
  out.push(`listeners: ${L.calls} calls on one signal in ${f.listenerMs} ms; abort listeners added ${L.added}, removed ${L.removed}, max at once ${L.maxAtOnce}, left ${L.registeredAfter}` +
    (L.nativeAfter === null ? '' : ` (events.getEventListeners: ${L.nativeAfter} before abort, ${L.nativeAfterAbort} after)`));
  out.push(`policy.stats(): ${JSON.stringify(f.stats)}`);
  for (const ch of checks) out.push(`${ch.ok ? 'ok  ' : 'FAIL'} ${ch.name}${ch.detail ? ` — ${ch.detail}` : ''}`);
  const failed = checks.filter((ch) => !ch.ok).length;
  out.push(`${checks.length - failed} passed, ${failed} failed`);
  return out;
}
