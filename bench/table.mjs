// `make bench`'s before/after table (issue 19): every figure for the
// package at a baseline commit ("before", bench/base.mjs: BENCH_BASE,
// default 3c83535) and for this checkout's build ("after"), side by side,
// measured in one run. Figures, not pass/fail.
//
// It runs bench/run.mjs, bench/pageload.mjs and bench/workerd-cpu.mjs with
// BENCH_BEFORE set to the before package, so each loads both packages and
// measures them interleaved in the same rounds (their own tables print as
// they go, the before package's rows marked "before:"), then measures the
// bytes per entry of both (scripts/size.mjs) and prints one table at the
// end. A part that cannot run here (no Chromium, no workerd) leaves its
// rows as "—".
//
//   node bench/table.mjs           (needs `make build`; BENCH_BASE=<commit>)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { basePackage } from "./base.mjs";
import { entrySizes } from "../scripts/size.mjs";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const NOW = path.join(REPO, "js");
const base = basePackage();
const work = mkdtempSync(path.join(tmpdir(), "saferetry-bench-"));
const failed = [];

/** Runs one bench script with the before package beside ours; its figures, or null. */
function part(script) {
  const json = path.join(work, `${path.basename(script, ".mjs")}.json`);
  try {
    execFileSync("node", [path.join(REPO, script)], {
      cwd: REPO, stdio: "inherit", env: { ...process.env, BENCH_BEFORE: base.dir, BENCH_JSON: json },
    });
    return JSON.parse(readFileSync(json, "utf8"));
  } catch (error) {
    failed.push(`${script}: ${error.message.split("\n")[0]}`);
    return null;
  }
}

const node = part("bench/run.mjs");
const pages = part("bench/pageload.mjs");
const workerd = part("bench/workerd-cpu.mjs");
async function sizesOf(dir) {
  try {
    return await entrySizes(dir);
  } catch (error) {
    failed.push(`bytes per entry of ${dir}: ${error.message.split("\n")[0]}`);
    return {};
  }
}
const bytes = { before: await sizesOf(base.dir), after: await sizesOf(NOW) };
rmSync(work, { recursive: true, force: true });

// ---- the table ----
const dash = "—";
const f = (x, digits = 0) => (x === undefined || x === null || Number.isNaN(x) ? dash : x.toFixed(digits));
const kb = (n) => (n === undefined ? dash : `${(n / 1024).toFixed(1)} KB`);
const times = (x, ref) => (x === undefined || ref === undefined ? "" : ` (${(x / ref).toFixed(2)}× ky)`);
const rows = [];
const row = (figure, before, after, ky, raw, target) => rows.push(`| ${figure} | ${before} | ${after} | ${ky} | ${raw} | ${target} |`);

for (const entry of ["page", "node", "workerd", "cloudflare", "tabs"]) {
  const b = bytes.before[entry];
  const a = bytes.after[entry];
  const what = { page: "page import", node: "Node import", workerd: "workerd import", cloudflare: "`saferetry/cloudflare`", tabs: "page with `tabBudget`" }[entry];
  row(`bytes, ${what} (js + wasm, gzip)`, kb(b?.total), kb(a?.total), dash, dash, entry === "page" ? "≤ 45 KB" : "");
}
for (const net of ["Fast 4G", "Slow 3G"]) {
  const p = pages?.pages?.[net] ?? {};
  const ky = p.ky;
  const b = p["before: saferetry bundled + preload"];
  const a = p["saferetry bundled + preload"];
  row(`page ready, ${net}, with preload (ms)`, `${f(b)}${times(b, ky)}`, `${f(a)}${times(a, ky)}`, f(ky), f(p["raw fetch"]), net === "Fast 4G" ? "≤ 1.3× ky" : "");
}
for (const mode of ["stream", "buffer"]) {
  const w = workerd ?? {};
  const b = w[`${mode}-before`];
  const a = w[mode];
  row(`workerd CPU per request, "${mode}" (µs)`, `${f(b)}${times(b, w.ky)}`, `${f(a)}${times(a, w.ky)}`, f(w.ky), f(w.raw), mode === "stream" ? "≤ ky" : "");
}
{
  const c = pages?.cold ?? {};
  const minus = (x) => (x === undefined || c.ky === undefined ? "" : ` (${x - c.ky >= 0 ? "+" : ""}${(x - c.ky).toFixed(1)} vs ky)`);
  row("workerd cold start to first response (ms)", `${f(c["before: saferetry"], 1)}${minus(c["before: saferetry"])}`, `${f(c.saferetry, 1)}${minus(c.saferetry)}`, f(c.ky, 1), f(c["raw fetch"], 1), "≤ ky + 5 ms");
}
for (const mode of ["stream", "buffer"]) {
  const n = node?.node ?? {};
  row(`Node success path, "${mode}", × raw fetch`, f(n.before?.[mode], 2), f(n.after?.[mode], 2), f(n.ky, 2), "1.00", mode === "buffer" ? "below ky's" : "");
}
row("wasm → JS crossings per successful call", f(node?.crossings?.before), f(node?.crossings?.after), dash, dash, "≤ 40");
row("own CPU per successful call, fetch stubbed (µs)", f(node?.ownCpu?.before, 1), f(node?.ownCpu?.after, 1), dash, dash, "");

console.log(`\n## Before/after (issue 19): before = ${base.ref} (${base.commit.slice(0, 12)}), after = this checkout\n`);
console.log("| figure | before | after | ky | raw fetch | target |\n|---|---:|---:|---:|---:|---|");
console.log(rows.join("\n"));
console.log("\nEach figure's before and after come from the same run, interleaved (bytes: scripts/size.mjs on both packages).");
if (failed.length) {
  console.log(`\nNot measured here: ${failed.join("; ")}`);
  process.exitCode = 1;
}
