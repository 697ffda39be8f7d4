// `make bench`'s before/after table (issues 26 and 37): every figure for the
// package at a baseline commit ("before", bench/base.mjs: BENCH_BASE,
// default main at ee5cc5a) and for this checkout ("after"), side by side,
// measured in one run, each against ky and raw fetch where they apply.
// Figures, not pass/fail.
//
// Both packages are measured as shipped: the lean build (`make ship`,
// LEAN=1, built by bench/base.mjs from each tree) where its toolchain
// installs (`scripts/bootstrap.sh lean`), else the stable build (this
// checkout's `make build`; the before package built likewise), which the
// table then says. It runs bench/run.mjs, bench/pageload.mjs,
// bench/workerd-cpu.mjs and bench/profile.mjs (issue 37: where a successful
// call's time goes, by group, with workerd-cpu's figures beside it) with
// BENCH_NOW and BENCH_BEFORE set to the two
// packages, so each loads both and measures them interleaved in the same
// rounds (their own tables print as they go, the before package's rows
// marked "before:"), then measures the bytes per entry of both builds of
// both (scripts/size.mjs) and prints one table at the end. A part that
// cannot run here (no Chromium, no workerd, no lean toolchain) leaves its
// cells as "—" and the table says why.
//
//   node bench/table.mjs           (needs `make build`; BENCH_BASE=<commit>;
//                                  BENCH_LEAN=0: the stable builds only;
//                                  BENCH_RUNS=N: each part N times, default
//                                  3, ~17 minutes a run here)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BASE, basePackage, leanPackage } from "./base.mjs";
import { median } from "./cpu.mjs";
import { atMost } from "./targets.mjs";
import { entrySizes, kyBytes } from "../scripts/size.mjs";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), "saferetry-bench-"));
const failed = [];
const firstLine = (error) => `${error.message.split("\n")[0]}`;

/** Runs a command with its stdout shown as it goes and its stderr after
 * it; the last line of its stderr is the error's message when it fails
 * (the reason a part could not run). */
function run(command, args, options) {
  const result = spawnSync(command, args, { ...options, stdio: ["ignore", "inherit", "pipe"], encoding: "utf8" });
  process.stderr.write(result.stderr ?? "");
  if (result.status !== 0) throw new Error(reason(result.stderr ?? "") ?? `${command} ${args.join(" ")} ended with ${result.status ?? result.signal}`);
}

/** The line of a failed command's stderr that says why: an error's message
 * (not its stack, nor Node's version line), else its last line. */
function reason(stderr) {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("at ") && !l.startsWith("Node.js v"));
  return lines.find((l) => /^(\w*Error\b|error:)/i.test(l)) ?? lines.at(-1);
}

/** `body()`'s value, or `fallback` with the failure noted under `what`. */
function attempt(what, body, fallback = null) {
  try {
    return body();
  } catch (error) {
    failed.push(`${what}: ${firstLine(error)}`);
    return fallback;
  }
}

/** The runs' figures as one: each number the median of that number over
 * the runs that have it; other values as the first run has them. Null
 * when no run measured. */
function medianOf(values) {
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length === 0) return null;
  if (present.every((v) => typeof v === "number")) return median(present);
  if (present.every((v) => typeof v === "object" && !Array.isArray(v))) {
    const keys = [...new Set(present.flatMap((v) => Object.keys(v)))];
    return Object.fromEntries(keys.map((k) => [k, medianOf(present.map((v) => v[k]))]));
  }
  return present[0];
}

const stable = { before: attempt(`the before package (${BASE})`, () => basePackage().dir), after: path.join(REPO, "js") };
const skipLean = process.env.BENCH_LEAN === "0";
const lean = skipLean ? null : attempt("the lean builds", () => {
  run("bash", ["scripts/bootstrap.sh", "lean"], { cwd: REPO });
  return { before: stable.before && basePackage(BASE, { lean: true }).dir, after: leanPackage().dir };
});
const measured = lean ?? stable;
const build = lean ? "lean (`make ship`)" : `stable (\`make build\`: ${skipLean ? "BENCH_LEAN=0" : "the lean toolchain did not install or build"})`;

const jsonOf = (script, round) => path.join(work, `${path.basename(script, ".mjs")}-${round}.json`);

/** Runs one bench script on both packages (`extra`: more environment); its
 * figures (written to BENCH_JSON, or PROFILE_JSON for bench/profile.mjs), or null. */
function part(script, round, extra = {}) {
  const json = jsonOf(script, round);
  const env = { ...process.env, BENCH_NOW: measured.after, BENCH_JSON: json, PROFILE_JSON: json, ...extra };
  if (measured.before) env.BENCH_BEFORE = measured.before;
  return attempt(`${script} (run ${round + 1})`, () => {
    run("node", [path.join(REPO, script)], { cwd: REPO, env });
    return JSON.parse(readFileSync(json, "utf8"));
  });
}

// Every part runs BENCH_RUNS times (default 3), the parts in turn, so the
// runs spread over the machine's changing load alike; the table gives each
// figure's median over the runs, and the target rows their range too. One
// run decided nothing closer than ~0.05 × raw fetch in Node or ~10 ms of
// cold start (BENCHMARKS.md "The same package twice"), and the targets'
// distances were inside that.
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const runs = { node: [], pages: [], workerd: [], profile: [] };
for (let round = 0; round < RUNS; round++) {
  console.log(`\n# bench/table.mjs: run ${round + 1} of ${RUNS}\n`);
  runs.node.push(part("bench/run.mjs", round));
  runs.pages.push(part("bench/pageload.mjs", round));
  const w = part("bench/workerd-cpu.mjs", round);
  runs.workerd.push(w);
  // The profile takes workerd's figures from this round's run (none if it failed).
  runs.profile.push(part("bench/profile.mjs", round, w ? { WORKERD_JSON: jsonOf("bench/workerd-cpu.mjs", round) } : { PROFILE_WORKERD: "0" }));
}
const node = medianOf(runs.node);
const pages = medianOf(runs.pages);
const workerd = medianOf(runs.workerd);
const profile = medianOf(runs.profile);
async function sizesOf(dir) {
  try {
    return dir ? await entrySizes(dir) : {};
  } catch (error) {
    failed.push(`bytes per entry of ${dir}: ${firstLine(error)}`);
    return {};
  }
}
const bytes = {
  stable: { before: await sizesOf(stable.before), after: await sizesOf(stable.after) },
  lean: { before: await sizesOf(lean?.before), after: await sizesOf(lean?.after) },
};
const ky = await kyBytes();
rmSync(work, { recursive: true, force: true });

// ---- the table ----
const dash = "—";
const f = (x, digits = 0) => (x === undefined || x === null || Number.isNaN(x) ? dash : x.toFixed(digits));
const kb = (n) => (n === undefined ? dash : `${(n / 1024).toFixed(1)} KB`);
const rows = [];
const row = (figure, before, after, kyCell, raw, target) => rows.push(`| ${figure} | ${before} | ${after} | ${kyCell} | ${raw} | ${target} |`);
const MODES = ["auto", "stream", "buffer"];
const perMode = (figures) => MODES.map((m) => f(figures?.[m], 1)).join(" / ");
/** A figure's median with its range over the runs (` [lo–hi]`) where
 * more than one run measured it: `get` reads it from one run's figures. */
const ranged = (list, get, digits = 0) => {
  const xs = list.map((r) => (r ? get(r) : undefined)).filter((x) => typeof x === "number" && !Number.isNaN(x));
  if (xs.length === 0) return dash;
  const spread = xs.length > 1 ? ` [${f(Math.min(...xs), digits)}–${f(Math.max(...xs), digits)}]` : "";
  return `${f(median(xs), digits)}${spread}`;
};

// The page's target is issue 37's (the stable build's bytes, `make build`,
// and the lean one's); the other entries' are issue 26's.
const ENTRIES = {
  page: ["page `import { RetryPolicy }`", "≤ 35 KB stable, ≤ 30 lean"],
  node: ["Node import", "≤ 45 KB lean (issue 26)"],
  workerd: ["workerd import", "≤ 45 KB lean (issue 26)"],
  cloudflare: ["`saferetry/cloudflare`", "≤ 45 KB lean (issue 26)"],
  tabs: ["page with `tabBudget`", "≤ 45 KB lean (issue 26)"],
  outbox: ["page with an `outbox`", "≤ 45 KB lean (issue 26)"],
};
for (const [entry, [what, target]] of Object.entries(ENTRIES)) {
  const cell = (side) => `${kb(bytes.lean[side][entry]?.total)} (${kb(bytes.stable[side][entry]?.total)} stable)`;
  row(`bytes, ${what}, js + wasm, gzip: lean (stable)`, cell("before"), cell("after"), entry === "page" ? kb(ky.total) : dash, "0", target);
}
for (const net of ["Fast 4G", "Slow 3G"]) {
  const p = pages?.pages?.[net] ?? {};
  const b = p["before: saferetry bundled + preload"];
  const a = p["saferetry bundled + preload"];
  // Each run's ratio to its own ky, then their median and range.
  const toKy = (side) => ranged(runs.pages, (r) => r.pages?.[net]?.[side] / r.pages?.[net]?.ky, 2);
  row(`page ready, ${net}, bundled + preload (ms; × ky per run)`, `${f(b)} (${toKy("before: saferetry bundled + preload")}× ky)`, `${f(a)} (${toKy("saferetry bundled + preload")}× ky)`, f(p.ky), f(p["raw fetch"]), net === "Fast 4G" ? "≤ 1.3× ky" : "");
}
// workerd's figures per request, then its own CPU per call with fetch stubbed (their `stubbed`).
for (const [what, of] of [["CPU per request", (figures) => figures], ["own CPU per call, fetch stubbed", (figures) => figures?.stubbed]]) {
  for (const signal of ["", "-signal"]) {
    for (const mode of MODES) {
      const w = of(workerd) ?? {};
      const key = `${mode}${signal}`;
      // Each run's distance to its own ky, then their median and range.
      const overKy = (k) => ranged(runs.workerd, (r) => of(r)?.[k] - of(r)?.[`ky${signal}`]);
      row(`workerd ${what}, "${mode}"${signal ? " + caller's signal" : ""} (µs; − ky per run)`, `${f(w[`${key}-before`])} (${overKy(`${key}-before`)} vs ky)`, `${f(w[key])} (${overKy(key)} vs ky)`, f(w[`ky${signal}`]), f(w[`raw${signal}`]), "≤ ky");
    }
  }
}
{
  const c = pages?.cold ?? {};
  // Each run's distance to its own ky, then their median and range.
  const minus = (key) => ranged(runs.pages, (r) => r.cold?.[key] - r.cold?.ky, 1);
  row("workerd cold start to first response (ms; − ky per run)", `${f(c["before: saferetry"], 1)} (${minus("before: saferetry")} vs ky)`, `${f(c.saferetry, 1)} (${minus("saferetry")} vs ky)`, f(c.ky, 1), f(c["raw fetch"], 1), "≤ ky + 5 ms");
}
for (const mode of MODES) {
  row(`Node success path, "${mode}", × raw fetch`, ranged(runs.node, (r) => r.before?.node[mode], 2), ranged(runs.node, (r) => r.after?.node[mode], 2), ranged(runs.node, (r) => r.ky.node, 2), "1.00", `${atMost(mode)}, below ky's`);
}
{
  const r = node?.retry ?? {};
  row("Node retry path, 503 then 503 then 200, no wait (bench/run.mjs), × three raw fetches", f(r["before: saferetry (503, 503, 200)"], 2), f(r["saferetry (503, 503, 200)"], 2), dash, "1.00", "no slower than before");
}
// bench/profile.mjs's figures: the same ratio with a caller's signal, the
// floor (the smallest wrapper keeping our guarantees) and, for the
// default mode, where the time over raw fetch goes.
const sides = profile?.sides ?? {};
const ratio = (name) => ranged(runs.profile, (r) => r.sides?.[name]?.ratio, 2);
for (const mode of MODES) {
  row(`Node success path, "${mode}" + caller's signal, × raw fetch (bench/profile.mjs)`, ratio(`before: saferetry "${mode}" + signal`), ratio(`saferetry "${mode}" + signal`), ratio("ky + signal"), ratio("raw fetch + signal"), `${atMost(mode)}, below ky's`);
}
row("Node, the floor (bench/floors.mjs's `floor`), × raw fetch, without / with a caller's signal", dash, `${ratio("floor")} / ${ratio("floor + signal")}`, dash, "1.00", "");
row("Node, the floor for a streamed answer (bench/floors.mjs's `floorStream`), × raw fetch, without / with a caller's signal", dash, `${ratio("floor stream")} / ${ratio("floor stream + signal")}`, dash, "1.00", "");
const GROUPS = ["wasm", "executor/glue", "Request", "Response", "AbortSignal", "timers", "promise jobs", "sockets", "GC", "idle", "fetch & rest"];
const signed = (x) => (Math.round(x) === 0 ? "0" : `${x > 0 ? "+" : ""}${Math.round(x)}`);
const overRaw = (name) => {
  const over = sides[name]?.over;
  if (!over) return dash;
  return `${GROUPS.map((g) => signed(over[g])).join(" / ")} (sum ${signed(Object.values(over).reduce((a, b) => a + b, 0))})`;
};
for (const signal of ["", " + signal"]) {
  row(`Node µs per call over raw fetch, "auto"${signal ? " + caller's signal" : ""}, profiled: ${GROUPS.join(" / ")}`,
    overRaw(`before: saferetry "auto"${signal}`), overRaw(`saferetry "auto"${signal}`), overRaw(`ky${signal}`), dash, "");
}
row('wasm → JS crossings per successful call, "auto" / "stream" / "buffer"', perMode(node?.before?.intoJs), perMode(node?.after?.intoJs), dash, dash, "");
row('JS → wasm crossings per successful call, "auto" / "stream" / "buffer"', perMode(node?.before?.intoWasm), perMode(node?.after?.intoWasm), dash, dash, "");
row('own CPU per successful call, fetch stubbed, Node (µs), "auto" / "stream" / "buffer"', perMode(node?.before?.ownCpu), perMode(node?.after?.ownCpu), f(node?.ky.ownCpu, 1), dash, "below ky's");

const before = stable.before ? `${BASE} (${path.basename(path.dirname(stable.before))})` : `${BASE} (not built)`;
console.log(`\n## Before/after (issues 26 and 37): before = ${before}, after = this checkout; both ${build}\n`);
console.log("| figure | before | after | ky | raw fetch | target |\n|---|---:|---:|---:|---:|---|");
console.log(rows.join("\n"));
console.log("\nEach figure's before and after come from the same run, interleaved; bytes: scripts/size.mjs on both builds of both"
  + " packages, ky's page bundled the same way. Own CPU: the median minus the required mechanics of the body mode"
  + " (\"auto\" buffers this answer; ky is charged the buffered mechanics, the larger floor).");
console.log("Node with a caller's signal, the floor and the groups: bench/profile.mjs (its tables above); workerd: CPU of workerd's own threads per request, and per call with fetch stubbed (no socket nor upstream: each client's own work).");
console.log(`Each figure is its median over ${RUNS} run${RUNS > 1 ? "s" : ""} of every part (BENCH_RUNS); [lo–hi]: its range over them. A target is met when its whole range is.`);
if (failed.length) {
  console.log(`\nNot measured here ("—"): ${failed.join("; ")}`);
  process.exitCode = 1;
}
