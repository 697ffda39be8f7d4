// Own CPU and crossings per successful call, with `fetch` stubbed
// (BENCHMARKS.md, "stubbed fetch"): no network, so what is left is the work
// each client does around `fetch` itself. Imported by bench/run.mjs.
//
// - `stubbedCpu` times raw fetch, the required mechanics of each body mode
//   (below), ky and the given policies against a `fetch` that answers at
//   once with a fresh small JSON `Response`; a client's own CPU per call is
//   its median minus the median of the mechanics of its body mode (all pay
//   for the stub and the mechanics; ky, which returns the host's response,
//   is charged the buffered mechanics, the larger floor).
// - `crossingsPerCall` counts calls from wasm into JS (every import of the
//   module, i.e. every wasm-bindgen shim) and from JS into wasm (every
//   export) per successful call, in a worker thread whose module instance
//   has each import and export wrapped in a counter, so the timing above
//   runs on an uninstrumented instance.
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { readFileSync, readdirSync } from "node:fs";
import ky from "ky";
import { stubFetch } from "./stub.mjs";
import { median, rotated } from "./sides.mjs";

const TARGET = "http://127.0.0.1:9/";

/** The least any client can do that meets the contract, in plain JS: an
 * AbortController per attempt, an attempt timer, the body buffered under
 * that signal and a rebuilt Response the caller then reads. No retry logic
 * at all: its figures are the floor under every implementation. */
export async function mechanicsOnly(target) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const res = await fetch(target, { signal: controller.signal });
    const body = await res.arrayBuffer();
    return new Response(body, res).arrayBuffer();
  } finally {
    clearTimeout(timer);
  }
}

/** The floor for a streamed answer: the mechanics above without the
 * buffering (an AbortController and a timer per attempt, the host's own
 * Response handed over). */
export async function streamMechanics(target) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    return await fetch(target, { signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

export async function withStub(run) {
  const realFetch = globalThis.fetch;
  globalThis.fetch = stubFetch;
  try {
    return await run();
  } finally {
    globalThis.fetch = realFetch;
  }
}

/** CPU clock ticks of every thread of process `pid` so far (utime + stime, /proc). */
export function cpuTicks(pid) {
  let ticks = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks;
}

export { median };

/** µs per call of each side (`{ name: async () => … }`), run in turn in
 * every round so all see the same machine state: `{ name: [µs, …] }`. */
export async function interleaved(sides, { rounds, perRound, warmUp }) {
  const times = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (const run of Object.values(sides)) for (let i = 0; i < warmUp; i++) await run();
  for (const [name, run] of rotated(sides, rounds)) {
    for (let i = 0; i < perRound; i++) {
      const t0 = process.hrtime.bigint();
      await run();
      times[name].push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  }
  return times;
}

/** Median µs per call with `fetch` stubbed, interleaved in rounds, of raw
 * fetch, the mechanics, ky and each of `policies` (`{ name: [policy,
 * responseBody] }`): `{ median: { name: µs }, own: { name: µs } }`, `own`
 * for ky and the policies ("auto" buffers this small JSON answer). */
export async function stubbedCpu(policies, { rounds = 20, perRound = 500 } = {}) {
  const kyClient = ky.create({ retry: 2, timeout: 10_000 });
  const sides = {
    "raw fetch": async () => (await fetch(TARGET)).arrayBuffer(),
    mechanics: () => mechanicsOnly(TARGET),
    "stream mechanics": async () => (await streamMechanics(TARGET)).arrayBuffer(),
    ky: () => kyClient.get(TARGET).arrayBuffer(),
  };
  for (const [name, [p]] of Object.entries(policies)) sides[name] = async () => (await p.fetch(TARGET)).arrayBuffer();
  const times = await withStub(() => interleaved(sides, { rounds, perRound, warmUp: 500 }));
  const m = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, median(xs)]));
  const floor = (mode) => (mode === "stream" ? m["stream mechanics"] : m.mechanics);
  const own = { ky: m.ky - m.mechanics };
  for (const [name, [, mode]] of Object.entries(policies)) own[name] = m[name] - floor(mode);
  return { median: m, own };
}

/** Calls from wasm into JS (`intoJs`) and from JS into wasm (`intoWasm`)
 * per successful `policy.fetch` (stubbed) of a `new RetryPolicy(options)`,
 * and the imports and exports that make them (`{ name: calls per call }`,
 * most first), for the package in `pkg` (a built js/ folder). */
export function crossingsPerCall(pkg, options = {}, calls = 1000) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { calls, pkg, options } });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

/** Wraps every function import of the next instantiated module in a
 * counter (`imports`), and with `exports`, every export of a module
 * instantiated synchronously (as Node's entry does). */
export function instrument(counts, exports) {
  const wrap = (imports) => {
    for (const ns of Object.values(imports ?? {})) {
      for (const [name, f] of Object.entries(ns)) {
        if (typeof f !== "function") continue;
        counts[name] = 0;
        ns[name] = function (...args) {
          counts[name]++;
          return f.apply(this, args);
        };
      }
    }
    return imports;
  };
  const { Instance, instantiate, instantiateStreaming } = WebAssembly;
  WebAssembly.Instance = function (module, imports) {
    const instance = new Instance(module, wrap(imports));
    if (!exports) return instance;
    const counted = {};
    for (const [name, f] of Object.entries(instance.exports)) {
      if (typeof f !== "function") counted[name] = f;
      else {
        exports[name] = 0;
        counted[name] = (...args) => (exports[name]++, f(...args));
      }
    }
    return { exports: counted };
  };
  WebAssembly.instantiate = (source, imports) => instantiate(source, wrap(imports));
  WebAssembly.instantiateStreaming = (source, imports) => instantiateStreaming(source, wrap(imports));
}

if (!isMainThread && workerData?.calls) {
  const imports = {};
  const exports = {};
  instrument(imports, exports);
  const { RetryPolicy } = await import(`${workerData.pkg}/src/node.js`);
  const policy = new RetryPolicy(workerData.options);
  await withStub(async () => {
    for (let i = 0; i < 200; i++) await (await policy.fetch(TARGET)).arrayBuffer(); // warm up
    for (const c of [imports, exports]) for (const k of Object.keys(c)) c[k] = 0;
    for (let i = 0; i < workerData.calls; i++) await (await policy.fetch(TARGET)).arrayBuffer();
  });
  const per = (counts) => Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => [k, n / workerData.calls])
    .sort((a, b) => b[1] - a[1]);
  const sum = (pairs) => pairs.reduce((s, [, n]) => s + n, 0);
  const [i, e] = [per(imports), per(exports)];
  parentPort.postMessage({ intoJs: sum(i), intoWasm: sum(e), imports: Object.fromEntries(i), exports: Object.fromEntries(e) });
}
