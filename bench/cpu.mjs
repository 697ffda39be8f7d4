// Own CPU and wasm → JS crossings per successful call, with `fetch` stubbed
// (BENCHMARKS.md, "stubbed fetch"): no network, so what is left is the work
// each client does around `fetch` itself. Imported by bench/run.mjs.
//
// - `stubbedCpu` times raw fetch, the required mechanics (below) and
//   saferetry against a `fetch` that answers at once with a fresh small
//   JSON `Response`; saferetry's own CPU per call is its median minus the
//   mechanics' median (both pay for the stub and the mechanics).
// - `crossingsPerCall` counts calls from wasm into JS (every import of the
//   module, i.e. every wasm-bindgen shim) per successful call, in a worker
//   thread whose module instance has each import wrapped in a counter, so
//   the timing above runs on an uninstrumented instance.
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { readFileSync, readdirSync } from "node:fs";

const BODY = '{"ok":true}';
const INIT = { status: 200, headers: { "content-type": "application/json", "content-length": String(BODY.length) } };
const stubFetch = () => Promise.resolve(new Response(BODY, INIT));
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

export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** µs per call of each side (`{ name: async () => … }`), run in turn in
 * every round so all see the same machine state: `{ name: [µs, …] }`. */
export async function interleaved(sides, { rounds, perRound, warmUp }) {
  const times = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (const run of Object.values(sides)) for (let i = 0; i < warmUp; i++) await run();
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(sides)) {
      for (let i = 0; i < perRound; i++) {
        const t0 = process.hrtime.bigint();
        await run();
        times[name].push(Number(process.hrtime.bigint() - t0) / 1000);
      }
    }
  }
  return times;
}

/** Median µs per call of each client with `fetch` stubbed, interleaved in
 * rounds; `own` is saferetry's median minus the mechanics'. With `others`
 * (`{ name: policy }`, another package's), those too, side by side, and
 * `ownOf[name]` their own CPU. */
export function stubbedCpu(policy, { rounds = 20, perRound = 500, others = {} } = {}) {
  const sides = {
    raw: async () => (await fetch(TARGET)).arrayBuffer(),
    mechanics: () => mechanicsOnly(TARGET),
    saferetry: async () => (await policy.fetch(TARGET)).arrayBuffer(),
  };
  for (const [name, p] of Object.entries(others)) sides[name] = async () => (await p.fetch(TARGET)).arrayBuffer();
  return withStub(async () => {
    const times = await interleaved(sides, { rounds, perRound, warmUp: 500 });
    const m = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, median(xs)]));
    const ownOf = Object.fromEntries(Object.keys(others).map((k) => [k, m[k] - m.mechanics]));
    return { ...m, own: m.saferetry - m.mechanics, ownOf };
  });
}

/** Calls from wasm into JS per successful `policy.fetch` (stubbed), and the
 * imports that make them (`{ name: calls per call }`, most first), for the
 * package in `pkg` (a built js/ folder; default this checkout's). */
export function crossingsPerCall(calls = 1000, pkg = new URL("../js", import.meta.url).pathname) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { calls, pkg } });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

/** Wraps every function import of the next instantiated module in a counter. */
export function instrument(counts) {
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
    return new Instance(module, wrap(imports));
  };
  WebAssembly.instantiate = (source, imports) => instantiate(source, wrap(imports));
  WebAssembly.instantiateStreaming = (source, imports) => instantiateStreaming(source, wrap(imports));
}

if (!isMainThread && workerData?.calls) {
  const counts = {};
  instrument(counts);
  const { RetryPolicy } = await import(`${workerData.pkg}/src/node.js`);
  const policy = new RetryPolicy();
  await withStub(async () => {
    for (let i = 0; i < 200; i++) await (await policy.fetch(TARGET)).arrayBuffer(); // warm up
    for (const k of Object.keys(counts)) counts[k] = 0;
    for (let i = 0; i < workerData.calls; i++) await (await policy.fetch(TARGET)).arrayBuffer();
  });
  const per = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => [k, n / workerData.calls])
    .sort((a, b) => b[1] - a[1]);
  parentPort.postMessage({ total: per.reduce((s, [, n]) => s + n, 0), imports: Object.fromEntries(per) });
}
