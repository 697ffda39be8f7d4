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
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

// One GET of a small JSON document, `fetch` stubbed (`stubFetch`: no undici,
// whose own wasm would be traced too), each phase begun by `await
// phase(name)` (`tracePhases`).
const SCRIPT = `
const { RetryPolicy } = await import(process.argv[1] + "/src/node.js");
await phase("policy");
const policy = new RetryPolicy({ fetch: stubFetch });
await phase("first call");
await (await policy.fetch("http://127.0.0.1:9/")).text();
await phase("second call");
await (await policy.fetch("http://127.0.0.1:9/")).text();
`;

const PHASES = ["import", "policy", "first call", "second call"];

/** Runs `script` (a module's text, given `jsDir` as its `process.argv[1]`,
 * which awaits `phase(name)` as each of `phases` but the first begins) in
 * Node with wasm compiled lazily and each compilation traced: the
 * functions Liftoff compiled in each phase, their count, their bodies'
 * bytes and their indices in the module (`{ [phase]: { functions, bytes,
 * indices } }`). V8 prints its trace through a buffer of its own: a marker
 * the script printed between two phases could land anywhere in it (seen
 * inside a trace line, with the machine busy), so a phase begins with a
 * marker V8 itself prints, in order: the compilation of a one-function
 * module of its own. And the trace goes to a file: written to a pipe, it
 * lost parts of lines in about half the runs here (likely as Node makes
 * its standard output non-blocking, which V8's writes do not expect). */
export function tracePhases(script, jsDir, phases) {
  const dir = mkdtempSync(path.join(tmpdir(), "lazy-compile-"));
  const file = path.join(dir, "trace");
  const fd = openSync(file, "w");
  let out;
  try {
    execFileSync(
      process.execPath,
      ["--wasm-lazy-compilation", "--trace-wasm-compilation-times", "--input-type=module", "-e", PHASE + script, jsDir],
      { stdio: ["ignore", fd, "inherit"] },
    );
    out = readFileSync(file, "utf8");
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  const traced = Object.fromEntries(phases.map((p) => [p, { functions: 0, bytes: 0, indices: new Set() }]));
  const lines = [...out.matchAll(/^Compiled function (\S*?)#(\d+) using Liftoff, .*bodysize (\d+)/gm)];
  // The traced module: the one with the most functions compiled (a marker's has one).
  const count = new Map();
  for (const [, module] of lines) count.set(module, (count.get(module) ?? 0) + 1);
  const ours = [...count].sort((a, b) => b[1] - a[1])[0]?.[0];
  let at = 0;
  for (const [, module, index, size] of lines) {
    if (module !== ours) {
      at++;
      continue;
    }
    const t = traced[phases[at]];
    t.functions++;
    t.bytes += Number(size);
    t.indices.add(Number(index));
  }
  if (at !== phases.length - 1) throw new Error(`lazy-compile: ${at} phase markers traced for ${phases.length - 1} phases`);
  if (phases.slice(1).every((p) => traced[p].functions === 0)) throw new Error(`lazy-compile: no lazy compilation traced for ${jsDir}`);
  return traced;
}

// What a traced script has before its own text: bench/stub.mjs's
// `stubFetch`, and `await phase(name)`, which lets what the last phase
// left running settle (an operation ends a few turns after its caller's
// `await` resolved), then compiles and calls the one function of a module
// of its own (\`() -> i32\`, answering the phase's number: V8 compiles the
// same bytes only once), whose compilation V8 traces.
const PHASE = `
const { stubFetch } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, "bench/stub.mjs")).href)});
let phases = 0;
const phase = async () => {
  await new Promise((r) => setTimeout(r, 50));
  const marker = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 6, 1, 4, 0, 65, ++phases, 11]);
  new WebAssembly.Instance(new WebAssembly.Module(marker)).exports.f();
};
`;

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
