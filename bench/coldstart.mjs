// Where a Worker's cold start goes (issue 37: "workerd cold start ≤ ky +
// 5 ms"). bench/pageload.mjs measures raw fetch, ky and saferetry from
// starting workerd to the first response; this adds the steps in between,
// each a Worker of its own built by Wrangler the same way, so the
// differences between rows are what each step costs: the wasm module
// compiled (imported, unused), the glue imported, the module instantiated,
// the whole package imported (its JS parsed and run), a policy made at the
// top level, and its first `policy.fetch`. The flags rows run the last
// Worker with V8 flags (workerd's `v8Flags`) that say how much of it is
// the wasm, and the JavaScript, compiled lazily at first use. Then the
// wasm that first call compiles, in bytes (bench/lazy-compile.mjs: a
// figure that does not move between runs, where a start's ms do by ±3).
// Figures, not pass/fail.
//
//   node bench/coldstart.mjs      (COLDSTART_RUNS=N starts per Worker, default 15;
//                                  BENCH_BEFORE=<a built js/ folder>: its lazy
//                                  compilation beside this checkout's)
// Needs `make build`. Each Worker's time is the median of its starts,
// interleaved with the others', in ms from spawning workerd to its port
// and to the first response; "− ky" is the median of each round's
// difference to ky's start in the same round.
import http from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { wranglerWorker } from "../tests/runtimes/procs.mjs";
import { answer, coldStart, GLUE, INSTANTIATED, KY_WORKER, PACKAGE_WORKER, SAFERETRY_WORKER, WASM } from "./workerd-start.mjs";
import { lazyTable } from "./lazy-compile.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(REPO, "test-output/coldstart");
const RUNS = Number(process.env.COLDSTART_RUNS ?? 15);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Each Worker answers one request with one upstream request's text.
const workers = {
  "raw fetch": answer("fetch(env.UPSTREAM)"),
  ky: KY_WORKER,
  "+ the wasm module, unused": `${WASM} globalThis.keep = wasm;\n${answer("fetch(env.UPSTREAM)")}`,
  "+ its glue": `${WASM} ${GLUE} globalThis.keep = [wasm, glue];\n${answer("fetch(env.UPSTREAM)")}`,
  "+ instantiated": `${INSTANTIATED}\n${answer("fetch(env.UPSTREAM)")}`,
  "+ the whole package imported": PACKAGE_WORKER,
  "+ a policy made": `import { RetryPolicy } from "saferetry"; globalThis.keep = new RetryPolicy();\n${answer("fetch(env.UPSTREAM)")}`,
  "saferetry (+ its first policy.fetch)": SAFERETRY_WORKER,
};
// The last Worker again, under V8 flags.
const flagged = {
  "saferetry, wasm compiled eagerly (--no-wasm-lazy-compilation)": ["--no-wasm-lazy-compilation"],
  "saferetry, JavaScript compiled eagerly (--no-lazy)": ["--no-lazy"],
  "saferetry, both compiled eagerly": ["--no-lazy", "--no-wasm-lazy-compilation"],
};
const SAFERETRY = "saferetry (+ its first policy.fetch)";

const upstream = http.createServer((req, res) => res.end("ok"));
await new Promise((r) => upstream.listen(0, "127.0.0.1", r));
const dirOf = (name) => path.join(OUT, name.replace(/\W+/g, "-").replace(/^-|-$/g, ""));
try {
  const bindings = { UPSTREAM: `http://127.0.0.1:${upstream.address().port}/` };
  for (const [name, source] of Object.entries(workers)) {
    wranglerWorker({ dir: dirOf(name), source, packageDir: path.join(REPO, "js"), compatibilityDate: "2025-06-01", bindings });
  }
  for (const [name, flags] of Object.entries(flagged)) {
    wranglerWorker({ dir: dirOf(name), source: workers[SAFERETRY], packageDir: path.join(REPO, "js"), compatibilityDate: "2025-06-01", bindings });
    const config = path.join(dirOf(name), "config.capnp");
    const text = readFileSync(config, "utf8").replace("  sockets = ", `  v8Flags = ${JSON.stringify(flags)},\n  sockets = `);
    if (!text.includes("v8Flags")) throw new Error(`no place for v8Flags in ${config}`);
    writeFileSync(config, text);
  }
  const names = [...Object.keys(workers), ...Object.keys(flagged)];
  const results = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < RUNS; i++) for (const name of names) results[name].push(await coldStart(dirOf(name)));
  console.log(`\n## workerd cold start, step by step (median of ${RUNS} starts, interleaved; Wrangler's build)\n`);
  console.log("| Worker | ms to its port | ms to the first response | − ky |\n|---|---:|---:|---:|");
  const first = (name) => median(results[name].map((r) => r[1]));
  const overKy = (name) => median(results[name].map((r, i) => r[1] - results.ky[i][1]));
  for (const name of names) {
    const port = median(results[name].map((r) => r[0]));
    console.log(`| ${name} | ${port.toFixed(1)} | ${first(name).toFixed(1)} | ${overKy(name).toFixed(1)} |`);
  }
  const before = process.env.BENCH_BEFORE;
  console.log(`\n${lazyTable([...(before ? [["before", before]] : []), ["this checkout", path.join(REPO, "js")]])}`);
} finally {
  upstream.close();
}
