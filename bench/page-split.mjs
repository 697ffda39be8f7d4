// How small a page's wasm could get by loading only what a successful call
// runs (issue 37: "page import ≤ 35 KB gzip"; "page ready ≤ 1.3× ky"). A
// page downloads the whole browser module (saferetry_web) before its
// policy is ready, though a successful `policy.fetch` runs part of it. The
// bound of any split (a page module, the rest loaded at a first failure):
// the module with every function that path did not run replaced by
// `unreachable`, gzipped. It is a bound, not a build: a real split adds the
// glue between two modules, and a function the path ran counts whole, its
// failure branches too (the operation's future is one function). So if
// the bound is over the target, no split alone meets it: the code a
// successful call runs must itself be smaller. Deterministic; figures, not
// pass/fail.
//
//   node bench/page-split.mjs [js folder] [--names FILE]
//     (default: this checkout's js/; needs `make build`; with --names, the
//     browser's module of `NAMES=1 scripts/build.sh`,
//     target/names/saferetry_web_bg.wasm, the same code with its names:
//     the largest functions a successful call ran, by name)
//
// The module is the page's own, loaded by js/src/web.js, in Node: V8 there
// traces which functions it compiles lazily (bench/lazy-compile.mjs), which
// a browser does not print. `fetch` answers the module's file and, for the
// policies, bench/stub.mjs's small JSON 200 (or a 503 with `Retry-After: 0`
// first, for a retry); the policies are made with Node's
// `process.versions.node` hidden, so the module applies a browser's rules
// (bench/page-module.mjs).
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath, pathToFileURL } from "node:url";
import { entrySizes } from "../scripts/size.mjs";
import { leb } from "../scripts/short-imports.mjs";
import { demangle, parse } from "../scripts/wasm-profile.mjs";
import { tracePhases } from "./lazy-compile.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PHASES = ["import", "policy", "first call", "second call", "retry"];

const SCRIPT = `
const { pageFetch, browserPolicies } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, "bench/page-module.mjs")).href)});
const dir = process.argv[1] + "/src/";
const busy = () => new Response("busy", { status: 503, headers: { "retry-after": "0" } });
pageFetch();
await (await stubFetch()).text(); // Node's fetch classes loaded, before Node is hidden
const { RetryPolicy } = await import(dir + "web.js");
await phase("policy");
let sent = 0;
const [policy, retrying] = browserPolicies(RetryPolicy, { fetch: stubFetch }, { fetch: async () => (sent++ === 0 ? busy() : stubFetch()), baseMs: 1, capMs: 1 });
await phase("first call");
await (await policy.fetch("http://127.0.0.1:9/")).text();
await phase("second call");
await (await policy.fetch("http://127.0.0.1:9/")).text();
await phase("retry");
await (await retrying.fetch("http://127.0.0.1:9/")).text();
if (sent !== 2) throw new Error("page-split: the retry was not sent");
`;

/** `bytes` (a wasm module) with every function body whose index is not in
 * `kept` replaced by `unreachable`, and without custom sections. */
export function keepOnly(bytes, kept) {
  const { sections, bodies } = parse(bytes);
  const parts = [bytes.subarray(0, 8)];
  for (const { id, start, end } of sections) {
    if (id === 0) continue;
    if (id !== 10) {
      parts.push(bytes.subarray(start, end));
      continue;
    }
    const code = bodies.map(({ index, at, len }) => (kept.has(index) ? Buffer.concat([Buffer.from(leb(len)), bytes.subarray(at, at + len)]) : UNREACHABLE));
    const content = Buffer.concat([Buffer.from(leb(bodies.length)), ...code]);
    parts.push(Buffer.from([10, ...leb(content.length)]), content);
  }
  return Buffer.concat(parts);
}

// A function body of 3 bytes: no locals, `unreachable`, `end`.
const UNREACHABLE = Buffer.from([3, 0, 0x00, 0x0b]);

const kb = (n) => (n / 1024).toFixed(1);
const gz = (b) => gzipSync(b, { level: 9 }).length;

/** The phases' compiled functions and the bounds, for the package in `jsDir`. */
export function pageSplit(jsDir) {
  const traced = tracePhases(SCRIPT, jsDir, PHASES);
  const bytes = readFileSync(path.join(jsDir, "src/saferetry_web_bg.wasm"));
  const upTo = (last) => new Set(PHASES.slice(0, PHASES.indexOf(last) + 1).flatMap((p) => [...traced[p].indices]));
  const bound = (kept) => {
    const module = keepOnly(bytes, kept);
    new WebAssembly.Module(module); // still a valid module
    return gz(module);
  };
  const ran = upTo("second call");
  return { traced, ran, whole: gz(bytes), success: bound(ran), retry: bound(upTo("retry")), js: entrySizes(jsDir, ["page"]), bytes };
}

/** The `n` largest functions of `indices`, named from `namesFile` (the same
 * module as `bytes` with its name section): `[bytes, name]`. */
function largest(bytes, namesFile, indices, n) {
  const shipped = parse(bytes);
  const named = parse(readFileSync(namesFile));
  const same = shipped.bodies.length === named.bodies.length && shipped.bodies.every((b, i) => b.size === named.bodies[i].size);
  if (!same) throw new Error(`page-split: ${namesFile} is not the same code as the package's module (run NAMES=1 scripts/build.sh after make build)`);
  const size = new Map(named.bodies.map((b) => [b.index, b.size]));
  return [...indices].map((f) => [size.get(f), demangle(named.names.get(f) ?? `function ${f}`)]).sort((a, b) => b[0] - a[0]).slice(0, n);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--names");
  const namesFile = at < 0 ? undefined : args.splice(at, 2)[1];
  const jsDir = path.resolve(args[0] ?? path.join(REPO, "js"));
  const { traced, ran, whole, success, retry, js, bytes } = pageSplit(jsDir);
  const page = (await js).page.js;
  console.log("\n## What a successful call runs of the page's wasm (bench/page-split.mjs: the browser's module, compiled lazily in Node's V8, fetch stubbed)\n");
  console.log("| phase | functions compiled | KB of bodies |\n|---|---:|---:|");
  const labels = { import: "the module loaded", policy: "two policies made", "first call": "a successful call", "second call": "a second one", retry: "a 503 retried, then a 200" };
  for (const p of PHASES) console.log(`| ${labels[p]} | ${traced[p].functions} | ${kb(traced[p].bytes)} |`);
  console.log("\n| the page's wasm, gzip -9 | KB | + the page's JavaScript (scripts/size.mjs \"page\") |\n|---|---:|---:|");
  console.log(`| the whole module (what a page loads today) | ${kb(whole)} | ${kb(whole + page)} |`);
  console.log(`| only what the module loaded, the policies made and the successful calls ran | ${kb(success)} | ${kb(success + page)} |`);
  console.log(`| … and the retry | ${kb(retry)} | ${kb(retry + page)} |`);
  if (namesFile) {
    console.log("\n| the largest functions the module loaded, the policies made and the successful calls ran | bytes |\n|---|---:|");
    for (const [size, name] of largest(bytes, namesFile, ran, 15)) console.log(`| ${name} | ${size} |`);
  }
}
