// `make bench`'s before/after table (issue 26): every figure for the
// package at a baseline commit ("before", bench/base.mjs: BENCH_BASE,
// default main at ee5cc5a) and for this checkout ("after"), side by side,
// measured in one run, each against ky and raw fetch where they apply.
// Figures, not pass/fail.
//
// Both packages are measured as shipped: the lean build (`make ship`,
// LEAN=1, built by bench/base.mjs from each tree) where its toolchain
// installs (`scripts/bootstrap.sh lean`), else the stable build (this
// checkout's `make build`; the before package built likewise), which the
// table then says. It runs bench/run.mjs, bench/pageload.mjs and
// bench/workerd-cpu.mjs with BENCH_NOW and BENCH_BEFORE set to the two
// packages, so each loads both and measures them interleaved in the same
// rounds (their own tables print as they go, the before package's rows
// marked "before:"), then measures the bytes per entry of both builds of
// both (scripts/size.mjs) and prints one table at the end. A part that
// cannot run here (no Chromium, no workerd, no lean toolchain) leaves its
// cells as "—" and the table says why.
//
//   node bench/table.mjs           (needs `make build`; BENCH_BASE=<commit>;
//                                  BENCH_LEAN=0: the stable builds only)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BASE, basePackage, leanPackage } from "./base.mjs";
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

const stable = { before: attempt(`the before package (${BASE})`, () => basePackage().dir), after: path.join(REPO, "js") };
const skipLean = process.env.BENCH_LEAN === "0";
const lean = skipLean ? null : attempt("the lean builds", () => {
  run("bash", ["scripts/bootstrap.sh", "lean"], { cwd: REPO });
  return { before: stable.before && basePackage(BASE, { lean: true }).dir, after: leanPackage().dir };
});
const measured = lean ?? stable;
const build = lean ? "lean (`make ship`)" : `stable (\`make build\`: ${skipLean ? "BENCH_LEAN=0" : "the lean toolchain did not install or build"})`;

/** Runs one bench script on both packages; its figures, or null. */
function part(script) {
  const json = path.join(work, `${path.basename(script, ".mjs")}.json`);
  const env = { ...process.env, BENCH_NOW: measured.after, BENCH_JSON: json };
  if (measured.before) env.BENCH_BEFORE = measured.before;
  return attempt(script, () => {
    run("node", [path.join(REPO, script)], { cwd: REPO, env });
    return JSON.parse(readFileSync(json, "utf8"));
  });
}

const node = part("bench/run.mjs");
const pages = part("bench/pageload.mjs");
const workerd = part("bench/workerd-cpu.mjs");
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
const times = (x, ref) => (x === undefined || ref === undefined ? "" : ` (${(x / ref).toFixed(2)}× ky)`);
const rows = [];
const row = (figure, before, after, kyCell, raw, target) => rows.push(`| ${figure} | ${before} | ${after} | ${kyCell} | ${raw} | ${target} |`);
const MODES = ["auto", "stream", "buffer"];
const perMode = (figures) => MODES.map((m) => f(figures?.[m], 1)).join(" / ");

const ENTRIES = {
  page: ["page `import { RetryPolicy }`", "≤ 40 KB lean (moonshot 30)"],
  node: ["Node import", "≤ 45 KB lean"],
  workerd: ["workerd import", "≤ 45 KB lean"],
  cloudflare: ["`saferetry/cloudflare`", "≤ 45 KB lean"],
  tabs: ["page with `tabBudget`", "≤ 45 KB lean"],
  outbox: ["page with an `outbox`", "≤ 45 KB lean"],
};
for (const [entry, [what, target]] of Object.entries(ENTRIES)) {
  const cell = (side) => `${kb(bytes.lean[side][entry]?.total)} (${kb(bytes.stable[side][entry]?.total)} stable)`;
  row(`bytes, ${what}, js + wasm, gzip: lean (stable)`, cell("before"), cell("after"), entry === "page" ? kb(ky.total) : dash, "0", target);
}
for (const net of ["Fast 4G", "Slow 3G"]) {
  const p = pages?.pages?.[net] ?? {};
  const b = p["before: saferetry bundled + preload"];
  const a = p["saferetry bundled + preload"];
  row(`page ready, ${net}, bundled + preload (ms)`, `${f(b)}${times(b, p.ky)}`, `${f(a)}${times(a, p.ky)}`, f(p.ky), f(p["raw fetch"]), net === "Fast 4G" ? "≤ 1.3× ky" : "");
}
for (const mode of ["stream", "buffer"]) {
  const w = workerd ?? {};
  const b = w[`${mode}-before`];
  const a = w[mode];
  row(`workerd CPU per request, "${mode}" (µs)`, `${f(b)}${times(b, w.ky)}`, `${f(a)}${times(a, w.ky)}`, f(w.ky), f(w.raw), "≤ ky");
}
{
  const c = pages?.cold ?? {};
  const minus = (x) => (x === undefined || c.ky === undefined ? "" : ` (${x - c.ky >= 0 ? "+" : ""}${(x - c.ky).toFixed(1)} vs ky)`);
  row("workerd cold start to first response (ms)", `${f(c["before: saferetry"], 1)}${minus(c["before: saferetry"])}`, `${f(c.saferetry, 1)}${minus(c.saferetry)}`, f(c.ky, 1), f(c["raw fetch"], 1), "≤ ky + 5 ms");
}
for (const mode of MODES) {
  row(`Node success path, "${mode}", × raw fetch`, f(node?.before?.node[mode], 2), f(node?.after?.node[mode], 2), f(node?.ky.node, 2), "1.00", mode === "auto" ? "" : "below ky's");
}
row('wasm → JS crossings per successful call, "auto" / "stream" / "buffer"', perMode(node?.before?.intoJs), perMode(node?.after?.intoJs), dash, dash, "");
row('JS → wasm crossings per successful call, "auto" / "stream" / "buffer"', perMode(node?.before?.intoWasm), perMode(node?.after?.intoWasm), dash, dash, "");
row('own CPU per successful call, fetch stubbed, Node (µs), "auto" / "stream" / "buffer"', perMode(node?.before?.ownCpu), perMode(node?.after?.ownCpu), f(node?.ky.ownCpu, 1), dash, "below ky's");

const before = stable.before ? `${BASE} (${path.basename(path.dirname(stable.before))})` : `${BASE} (not built)`;
console.log(`\n## Before/after (issue 26): before = ${before}, after = this checkout; both ${build}\n`);
console.log("| figure | before | after | ky | raw fetch | target |\n|---|---:|---:|---:|---:|---|");
console.log(rows.join("\n"));
console.log("\nEach figure's before and after come from the same run, interleaved; bytes: scripts/size.mjs on both builds of both"
  + " packages, ky's page bundled the same way. Own CPU: the median minus the required mechanics of the body mode"
  + " (\"auto\" buffers this answer; ky is charged the buffered mechanics, the larger floor).");
if (failed.length) {
  console.log(`\nNot measured here ("—"): ${failed.join("; ")}`);
  process.exitCode = 1;
}
