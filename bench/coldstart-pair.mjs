// Whether a change moves a Worker's cold start (issue 37: "workerd cold
// start ≤ ky + 5 ms"), measured paired. bench/coldstart.mjs's table says
// where a start goes, but a start's ms move by ±3 between starts here and
// its steps by a millisecond between runs: a change of a fraction of one
// needs the same Worker built on each package and started in turn, many
// times, each start compared with the first package's in the same round.
//
//   node bench/coldstart-pair.mjs <label>=<built js/ folder>[@<step>] …   (PAIR_STARTS=N rounds, default 101)
//
// Each Worker (built by Wrangler, as bench/coldstart.mjs builds its own)
// is started once a round, in the order given. By default it is
// bench/coldstart.mjs's last one: a policy made at the top level and one
// `policy.fetch` of an upstream on loopback. With `@<step>` it answers with
// the host's own `fetch` and only loads part of the package: `@wasm` its
// default module instantiated by its glue; `@<file>` (`@attempts.js`,
// `@core.js`) that too, and that file of js/src with what it imports;
// `@package` the package's entry (`import { RetryPolicy } from
// "saferetry"`): where the import's milliseconds are. `@ky`: ky's Worker
// (bench/coldstart.mjs's), whatever the folder.
// Printed per package: the median ms from spawning workerd to its first
// response and from its port to that response; then, beside the first
// package, the median of the paired differences and their quartiles. Run
// it in both orders, and with one package twice (the spread of nothing).
// With PAIR_V8=N, N more rounds follow with V8's own accounts on
// (bench/workerd-start.mjs `v8Start`): per package, the median ms V8 spent
// parsing the Worker's JavaScript at startup, compiling the functions
// first called before the first request and while it is served, and
// compiling wasm (Liftoff: ms, KB, functions) — what a start is made of,
// where the timed rounds only say how long it took.
// Figures, not pass/fail.
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { wranglerWorker } from "../tests/runtimes/procs.mjs";
import { answer, coldStart, INSTANTIATED, KY_WORKER, PACKAGE_WORKER, SAFERETRY_WORKER, v8Start } from "./workerd-start.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const STARTS = Number(process.env.PAIR_STARTS ?? 101);
const V8_STARTS = Number(process.env.PAIR_V8 ?? 0);
const packages = process.argv.slice(2).map((arg) => arg.split("="));
if (packages.length < 2 || packages.some((p) => p.length !== 2)) throw new Error("usage: node bench/coldstart-pair.mjs <label>=<js folder> <label>=<js folder> …");

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const at = (xs, q) => sorted(xs)[Math.floor((xs.length - 1) * q)];
const ms = (x) => x.toFixed(2);

/** The Worker's source for `step` (see above; none: a policy's first call). */
function sourceOf(step) {
  if (step === undefined) return SAFERETRY_WORKER;
  if (step === "ky") return KY_WORKER;
  if (step === "package") return PACKAGE_WORKER;
  const part = step === "wasm" ? "" : `import * as part from "./node_modules/saferetry/src/${step}"; globalThis.keep = part; `;
  return `${part}${INSTANTIATED}\n${answer("fetch(env.UPSTREAM)")}`;
}

const upstream = http.createServer((req, res) => res.end("ok"));
await new Promise((r) => upstream.listen(0, "127.0.0.1", r));
try {
  const bindings = { UPSTREAM: `http://127.0.0.1:${upstream.address().port}/` };
  const dirs = packages.map(([label, spec], i) => {
    const [dir, step] = spec.split("@");
    const worker = path.join(REPO, "test-output/coldstart-pair", `${i}-${label.replace(/\W+/g, "-")}`);
    wranglerWorker({ dir: worker, source: sourceOf(step), packageDir: path.resolve(dir), compatibilityDate: "2025-06-01", bindings });
    return worker;
  });
  const starts = dirs.map(() => []);
  for (let round = 0; round < STARTS; round++) for (let i = 0; i < dirs.length; i++) starts[i].push(await coldStart(dirs[i]));
  const first = (s) => s[1];
  const afterPort = (s) => s[1] - s[0];
  console.log(`\n## workerd cold start, paired (${STARTS} rounds; ms, median; − the first package: the median of each round's difference [quartiles])\n`);
  console.log("| package | to the first response | − the first | from its port | − the first |\n|---|---:|---:|---:|---:|");
  packages.forEach(([label], i) => {
    const diff = (f) => starts[i].map((s, round) => f(s) - f(starts[0][round]));
    const cell = (f) => (i === 0 ? "" : `${ms(at(diff(f), 0.5))} [${ms(at(diff(f), 0.25))}…${ms(at(diff(f), 0.75))}]`);
    console.log(`| ${label} | ${ms(at(starts[i].map(first), 0.5))} | ${cell(first)} | ${ms(at(starts[i].map(afterPort), 0.5))} | ${cell(afterPort)} |`);
  });
  if (V8_STARTS > 0) {
    const accounts = dirs.map(() => []);
    for (let round = 0; round < V8_STARTS; round++) for (let i = 0; i < dirs.length; i++) accounts[i].push(await v8Start(dirs[i]));
    console.log(`\n## V8's accounts of the same starts (${V8_STARTS} rounds, logged; ms, median)\n`);
    console.log("| package | main.js parsed | JS compiled before the request | … during it | wasm compiled (Liftoff) | KB | functions |\n|---|---:|---:|---:|---:|---:|---:|");
    packages.forEach(([label], i) => {
      const med = (key) => at(accounts[i].map((a) => a[key]), 0.5);
      console.log(`| ${label} | ${ms(med("parse"))} | ${ms(med("startup"))} | ${ms(med("request"))} | ${ms(med("liftoff"))} | ${med("kb").toFixed(1)} | ${med("fns")} |`);
    });
  }
} finally {
  upstream.close();
}
