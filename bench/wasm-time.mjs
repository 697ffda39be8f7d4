// µs of saferetry's own wasm per successful call, measured exactly rather
// than sampled: every export of the default module is timed, minus the
// imports it calls (the JS glue and the host's functions they reach), with
// `fetch` stubbed as in bench/cpu.mjs. A sampling profile (bench/profile.mjs)
// says where the time goes, but charges the wasm group for the js-to-wasm
// and wasm-to-js wrappers and is only as exact as its samples; this is the
// figure to compare before and after a change inside the wasm. Figures, not
// pass/fail.
//
//   node bench/wasm-time.mjs [--web] [js folder …]   (default: this checkout's js/)
//
// `--web`: the page's module (js/src/web.js's, `--features browser`) in
// place of the default one, its policies made with Node's
// `process.versions.node` hidden, so they apply a browser's rules.
//
// With several built js/ folders (a "before" copied aside, say), each mode
// runs them in alternating rounds of 1000 calls in one process. Printed per
// folder and body mode, without and with a caller's signal: the median and
// the lowest round (the machine's load only ever adds), µs per call; with
// BENCH_DETAIL=1 the median round's exports and imports too. The timer's own
// cost (two `performance.now()` per crossing) is in every figure alike.
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { stubFetch } from "./stub.mjs";
import { browserPolicies, pageFetch } from "./page-module.mjs";

const web = process.argv[2] === "--web";
const folders = process.argv.slice(web ? 3 : 2);
if (folders.length === 0) folders.push(fileURLToPath(new URL("../js", import.meta.url)));
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const PER_ROUND = 1000;
const TARGET = "http://127.0.0.1:9/";
globalThis.fetch = stubFetch;
// The page's module is fetched by its URL (js/src/compile.js); the
// policies' transport is still the stub.
if (web) pageFetch();

// The counters of the instance being instantiated, then of each folder's.
const now = performance.now.bind(performance);
let inImports = 0; // ms spent in imports during the export running now
const { Instance } = WebAssembly;
let counters;
WebAssembly.Instance = function (module, imports) {
  const c = (counters = { exports: {}, imports: {} });
  for (const ns of Object.values(imports ?? {})) {
    for (const [name, f] of Object.entries(ns)) {
      if (typeof f !== "function") continue;
      c.imports[name] = 0;
      ns[name] = function (...args) {
        const t = now();
        try {
          return f.apply(this, args);
        } finally {
          const ms = now() - t;
          c.imports[name] += ms;
          inImports += ms;
        }
      };
    }
  }
  const instance = new Instance(module, imports);
  const exports = {};
  for (const [name, f] of Object.entries(instance.exports)) {
    if (typeof f !== "function") {
      exports[name] = f;
      continue;
    }
    c.exports[name] = 0;
    exports[name] = (...args) => {
      const outer = inImports;
      inImports = 0;
      const t = now();
      try {
        return f(...args);
      } finally {
        const ms = now() - t;
        c.exports[name] += ms - inImports;
        // To an export that called this one (through an import), all of it is elsewhere.
        inImports = outer + ms;
      }
    };
  }
  return { exports };
};

const sides = [];
for (const dir of folders) {
  const { RetryPolicy } = await import(`${dir}/src/${web ? "web" : "node"}.js`);
  sides.push({ dir, RetryPolicy, counters });
}
// A browser's rules for the page's module.
const made = (RetryPolicy, options) => (web ? browserPolicies(RetryPolicy, options)[0] : new RetryPolicy(options));

const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const perCall = (o) =>
  Object.entries(o)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([k, ms]) => `${k.replace(/^__wbg_|_[0-9a-f]{16}$/g, "")} ${((ms * 1000) / PER_ROUND).toFixed(2)}`)
    .join(", ");

console.log(`## saferetry's own wasm per successful call (${web ? "the page's module, a browser's rules, " : ""}fetch stubbed, Node ${process.versions.node}, ${ROUNDS} rounds of ${PER_ROUND} calls)\n`);
console.log("| js folder | mode | wasm µs, median round | lowest round | imports µs, median round |\n|---|---|---:|---:|---:|");
for (const mode of ["stream", "buffer", "auto"]) {
  for (const signal of [false, true]) {
    const options = mode === "auto" ? {} : { responseBody: mode };
    const runs = sides.map((s) => {
      const policy = made(s.RetryPolicy, options);
      const call = async () => (await policy.fetch(TARGET, signal ? { signal: new AbortController().signal } : undefined)).arrayBuffer();
      return { ...s, call, rounds: [] };
    });
    for (const r of runs) for (let i = 0; i < 2000; i++) await r.call();
    for (let round = 0; round < ROUNDS; round++) {
      for (const r of round % 2 ? [...runs].reverse() : runs) {
        const { exports, imports } = r.counters;
        for (const o of [exports, imports]) for (const k of Object.keys(o)) o[k] = 0;
        for (let i = 0; i < PER_ROUND; i++) await r.call();
        r.rounds.push({ wasm: (sum(exports) * 1000) / PER_ROUND, js: (sum(imports) * 1000) / PER_ROUND, exports: { ...exports }, imports: { ...imports } });
      }
    }
    for (const r of runs) {
      const typical = r.rounds.find((x) => x.wasm === median(r.rounds.map((y) => y.wasm)));
      const lowest = Math.min(...r.rounds.map((x) => x.wasm));
      console.log(`| ${r.dir} | ${mode}${signal ? " + signal" : ""} | ${typical.wasm.toFixed(2)} | ${lowest.toFixed(2)} | ${typical.js.toFixed(2)} |`);
      if (process.env.BENCH_DETAIL) console.log(`|   exports: ${perCall(typical.exports)}; imports: ${perCall(typical.imports)} |||||`);
    }
  }
}
