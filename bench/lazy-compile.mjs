// How much of the default wasm module a Worker's first request compiles
// (issue 37: "workerd cold start ≤ ky + 5 ms"). V8 compiles a wasm
// function the first time it is called (lazy compilation, workerd's default
// and a flag in Node), so the first `policy.fetch` pays Liftoff for every
// function it runs — in workerd ~6 ms of the cold start, against ~5 for the
// whole module compiled at startup (bench/coldstart.mjs's flag rows). The
// bytes of those functions' bodies are a deterministic figure, where a cold
// start's milliseconds move by ±3 between runs on this machine: Node with
// `--wasm-lazy-compilation --trace-wasm-compilation-times` runs the package's
// Node entry (the same default module) with `fetch` stubbed, and this sums
// the bodies compiled while the policy is made, during its first call, and
// during a second. Figures, not pass/fail.
//
//   node bench/lazy-compile.mjs [js folder …]   (default: this checkout's js/)
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

// One GET of a small JSON document, `fetch` stubbed (no undici: its own wasm
// would be traced too), each phase begun by `phase(name)` (`tracePhases`).
const SCRIPT = `
const body = '{"ok":true}';
const stub = async () => new Response(body, { status: 200, headers: { "content-type": "application/json", "content-length": "11" } });
const { RetryPolicy } = await import(process.argv[1] + "/src/node.js");
phase("policy");
const policy = new RetryPolicy({ fetch: stub });
phase("first call");
await (await policy.fetch("http://127.0.0.1:9/")).text();
phase("second call");
await (await policy.fetch("http://127.0.0.1:9/")).text();
`;

const PHASES = ["import", "policy", "first call", "second call"];

/** Runs `script` (a module's text, given `jsDir` as its `process.argv[1]`,
 * which calls `phase(name)` as each of `phases` but the first begins) in
 * Node with wasm compiled lazily and each compilation traced: the
 * functions Liftoff compiled in each phase, their count, their bodies'
 * bytes and their indices in the module (`{ [phase]: { functions, bytes,
 * indices } }`). Once per phase, the script run up to its start (the
 * process ends there) and once whole: V8 prints its trace through a
 * buffer of its own, so a marker printed between two phases can land
 * anywhere in it (seen with the machine busy), where what one run
 * compiled does not depend on timing. */
export function tracePhases(script, jsDir, phases) {
  const compiledUpTo = (stop) => {
    const out = execFileSync(
      process.execPath,
      ["--wasm-lazy-compilation", "--trace-wasm-compilation-times", "--input-type=module", "-e", PHASE + script, jsDir, stop],
      { encoding: "utf8" },
    );
    const sizes = new Map();
    for (const m of out.matchAll(/^Compiled function \S*?#(\d+) using Liftoff, .*bodysize (\d+)/gm)) sizes.set(Number(m[1]), Number(m[2]));
    return sizes;
  };
  const traced = {};
  let before = new Map();
  phases.forEach((name, i) => {
    const upTo = compiledUpTo(phases[i + 1] ?? "");
    const indices = new Set([...upTo.keys()].filter((f) => !before.has(f)));
    traced[name] = { functions: indices.size, bytes: [...indices].reduce((sum, f) => sum + upTo.get(f), 0), indices };
    before = upTo;
  });
  if (traced[phases[2]].functions === 0) throw new Error(`lazy-compile: no lazy compilation traced for ${jsDir}`);
  return traced;
}

// What a traced script's `phase(name)` does: ends the process when `name`
// is the phase it is run up to (its second argument).
const PHASE = "const phase = (name) => { if (name === process.argv[2]) process.exit(0); };\n";

/** The functions Liftoff compiled in each phase, and their bodies' bytes:
 * `{ import: { functions, bytes }, policy, "first call", "second call" }`. */
export const lazyCompiled = (jsDir) => tracePhases(SCRIPT, jsDir, PHASES);

/** The table for the `[label, js folder]` pairs, under its heading. */
export function lazyTable(folders) {
  const lines = [
    "## wasm compiled lazily, by phase (bench/lazy-compile.mjs: the default module in Node's V8, fetch stubbed; functions, bodies' KB)",
    "",
    "| package | the module loaded: functions, KB | the policy made | its first call | its second call |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const [label, dir] of folders) {
    const p = lazyCompiled(dir);
    const cell = ({ functions, bytes }) => `${functions}, ${(bytes / 1024).toFixed(1)}`;
    lines.push(`| ${label} | ${cell(p.import)} | ${cell(p.policy)} | ${cell(p["first call"])} | ${cell(p["second call"])} |`);
  }
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const folders = process.argv.slice(2);
  const pairs = folders.length ? folders.map((f) => [f, path.resolve(f)]) : [["this checkout", path.join(REPO, "js")]];
  console.log(`\n${lazyTable(pairs)}`);
}
