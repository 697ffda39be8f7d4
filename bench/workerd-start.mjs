// One cold start of a Worker built in `dir` (its config.capnp), as
// bench/pageload.mjs, bench/coldstart.mjs and bench/coldstart-pair.mjs time
// it: ms from spawning workerd to its port (over --control-fd) and to its
// first response, which must be the upstream's "ok" (a Worker that fails is
// not a start). And the sources of the Workers the last two start.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { start, stop, workerdPort } from "../tests/runtimes/procs.mjs";

const WORKERD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../node_modules/.bin/workerd");

/** `[ms to the port, ms to the first response]`; `config`: another file
 * of `dir` to start it with; `onLine`: sees each line workerd prints. */
export async function coldStart(dir, { config = "config.capnp", onLine } = {}) {
  const t0 = performance.now();
  const p = start("workerd", WORKERD, ["serve", config, "--control-fd=3"], { cwd: dir, extraFds: 1, echo: false });
  p.onLine = onLine;
  try {
    const port = await workerdPort(p);
    const t1 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    if (text !== "ok") throw new Error(`${dir}: ${res.status} ${text.slice(0, 200)}`);
    return [t1 - t0, performance.now() - t0];
  } finally {
    await stop(p, 0);
  }
}

/** A Worker's source that answers each request with the text of `call`'s
 * response (`call`: an expression; the upstream is `env.UPSTREAM`). */
export const answer = (call) => `export default { async fetch(req, env) { const r = await ${call}; return new Response(await r.text()); } };`;

const SRC = "./node_modules/saferetry/src";
/** The default module's file, and its glue, imported by a Worker. */
export const WASM = `import wasm from "${SRC}/saferetry_bg.wasm";`;
export const GLUE = `import * as glue from "${SRC}/saferetry.js";`;
/** A Worker's first lines that instantiate the default module by its glue. */
export const INSTANTIATED = `${WASM} ${GLUE} glue.initSync({ module: wasm });`;

/** Workers both benchmarks start: ky's client, the package's entry
 * imported (answering with the host's `fetch`), and saferetry's (a policy
 * made at the top level and its `policy.fetch`). */
export const KY_WORKER = `import ky from "ky"; const client = ky.create({ retry: 2 });\n${answer("client.get(env.UPSTREAM)")}`;
export const PACKAGE_WORKER = `import { RetryPolicy } from "saferetry"; globalThis.keep = RetryPolicy;\n${answer("fetch(env.UPSTREAM)")}`;
export const SAFERETRY_WORKER = `import { RetryPolicy } from "saferetry"; const policy = new RetryPolicy();\n${answer("policy.fetch(env.UPSTREAM)")}`;

/** One start of the Worker in `dir` with V8's own accounts on (its
 * function events, logged to `dir`/v8.log, and workerd's wasm compile
 * trace): ms V8 spent on the Worker's JavaScript (main.js) — parsing it at
 * startup (`parse`: the script, its inner functions pre-parsed); compiling
 * the functions first called before the first request (`startup`: parsed
 * whole, then to bytecode, and baseline code) and while it is served
 * (`request`) — and on compiling its wasm (`liftoff`: ms, `kb` and `fns`,
 * every function compiled, lazily, at its first call). The request is the
 * span from the first compile of the Worker's `fetch` handler (the last of
 * main.js's functions of that name) on. Slower than an unlogged start: its
 * figures are V8's accounts, not a start's ms. */
export async function v8Start(dir) {
  const log = path.join(dir, "v8.log");
  const flags = ["--log-function-events", `--logfile=${log}`, "--no-logfile-per-isolate", "--trace-wasm-compilation-times"];
  const config = readFileSync(path.join(dir, "config.capnp"), "utf8").replace("const config :Workerd.Config = (", `$&\n  v8Flags = ${JSON.stringify(flags)},`);
  writeFileSync(path.join(dir, "config-v8.capnp"), config);
  rmSync(log, { force: true });
  const lines = [];
  await coldStart(dir, { config: "config-v8.capnp", onLine: (line) => lines.push(line) });
  // `function,<event>,<script>,<from>,<to>,<ms>,<µs since V8 began>,<name>`
  const events = readFileSync(log, "utf8").split("\n").map((line) => line.split(","));
  const main = events.find((e) => e[0] === "script-details" && e[2] === "main.js")?.[1];
  const ofMain = events.filter((e) => e[0] === "function" && e[2] === main);
  const handler = ofMain.filter((e) => e[1] === "parse-function" && e[7] === "fetch").sort((a, b) => b[3] - a[3])[0];
  if (main === undefined || handler === undefined) throw new Error(`${dir}: no main.js or no compile of its fetch handler in V8's log`);
  const figures = { parse: 0, startup: 0, request: 0, liftoff: 0, kb: 0, fns: 0 };
  for (const [, event, , , , ms, at] of ofMain) {
    if (event === "parse-script") figures.parse += Number(ms);
    // Each function's compile: its parse ("parse-function", with whatever
    // it parses inside), its bytecode ("interpreter") and baseline code.
    else if (["parse-function", "interpreter", "baseline"].includes(event)) figures[Number(at) < Number(handler[6]) ? "startup" : "request"] += Number(ms);
  }
  for (const line of lines) {
    const m = /using Liftoff, took (\d+) μs.*bodysize (\d+)/.exec(line);
    if (m) [figures.liftoff, figures.kb, figures.fns] = [figures.liftoff + m[1] / 1000, figures.kb + m[2] / 1024, figures.fns + 1];
  }
  return figures;
}
