// Where a call's CPU goes in workerd, by group (issue 37 item 1: the
// profile beside plain `fetch`, as bench/profile.mjs prints it for Node).
// bench/workerd-cpu.mjs starts workerd with its inspector open and, after
// its stubbed rounds, calls `profiled` once per client: V8's sampling
// profiler over the inspector protocol while the Worker makes `n` calls
// through that client against bench/stub.mjs's `fetch` (no socket, upstream
// or network: only each client's work around `fetch`). Each sample's time
// goes to the innermost frame of its stack, grouped by whose work it is:
//
//   wasm        saferetry's module (its frames, and the JS↔wasm wrappers)
//   saferetry   the package's JavaScript (the executor, the glue, the entry)
//   client      the other clients' own code: ky's files, the floors
//               (bench/floors.mjs)
//   Response    workerd building and reading responses and their headers
//               (`new Response`, `text()`, `headers.get`, …): the stub's own
//               and any a client rebuilds
//   timers      `setTimeout`, `clearTimeout`
//   AbortSignal `AbortController`, listeners, `AbortSignal.any`
//   bench       the Worker's loop and the stub (every client pays them)
//   GC, idle, (program), other (native frames not named above)
//
// A profiled call costs more than an unprofiled one (sampling every 50 µs):
// read the groups for where the time goes, the stubbed table above them for
// the figures. The bundle Wrangler built (dist/main.js) says which source
// file each line came from (esbuild's `// <path>` markers), which is how a
// JavaScript frame finds its group.
import { readFileSync } from "node:fs";
import WebSocket from "ws";

export const GROUPS = ["wasm", "saferetry", "client", "Response", "timers", "AbortSignal", "bench", "GC", "idle", "(program)", "other"];

const NATIVE = new Map([
  ["(garbage collector)", "GC"],
  ["(idle)", "idle"],
  ["(program)", "(program)"],
  ["(root)", "(program)"],
  ["setTimeout", "timers"],
  ["clearTimeout", "timers"],
  ["AbortController", "AbortSignal"],
  ["AbortSignal", "AbortSignal"],
  ["any", "AbortSignal"],
  ["addEventListener", "AbortSignal"],
  ["removeEventListener", "AbortSignal"],
  ["Response", "Response"],
  ["Headers", "Response"],
  ["get", "Response"],
  ["text", "Response"],
  ["json", "Response"],
  ["arrayBuffer", "Response"],
  ["bytes", "Response"],
  ["clone", "Response"],
]);

/** The group of each line of bundle `file`, from esbuild's `// <path>`
 * markers: a function that answers it for a line counted from 0, as the
 * profiler's frames count them. */
function linesOf(file) {
  const marks = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, i) => {
      const m = /^\/\/ (\S+)$/.exec(text);
      if (m) marks.push([i, m[1]]);
    });
  const groupOf = (source) => {
    if (source.includes("node_modules/ky/") || source === "floors.mjs") return "client";
    if (/\/src\/[\w./-]+\.js$/.test(source)) return "saferetry"; // this checkout's package, or another (BENCH_BEFORE, BENCH_VARIANTS)
    return "bench"; // the Worker (main.mjs), the stub, esbuild's helpers
  };
  return (line) => {
    let lo = 0;
    let hi = marks.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (marks[mid][0] <= line) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at < 0 ? "bench" : groupOf(marks[at][1]);
  };
}

/** A frame's group. */
function classifier(bundle) {
  const lineGroup = linesOf(bundle);
  return ({ url, functionName, lineNumber }) => {
    if (url.startsWith("wasm://") || /^(js-to-wasm|wasm-to-js)/.test(functionName)) return "wasm";
    if (url.endsWith("main.js")) return lineGroup(lineNumber);
    return NATIVE.get(functionName) ?? "other";
  };
}

/** µs per call by group of `profile` (a CDP Profiler profile of `n` calls). */
function grouped(profile, n, groupOf) {
  const byId = new Map(profile.nodes.map((node) => [node.id, groupOf(node.callFrame)]));
  const out = Object.fromEntries(GROUPS.map((g) => [g, 0]));
  profile.samples.forEach((id, i) => {
    out[byId.get(id)] += profile.timeDeltas[i] ?? 0;
  });
  for (const g of GROUPS) out[g] /= n;
  return out;
}

/** The inspector of the workerd listening on `port`: `profiled(run, n)`
 * runs `run()` (which makes `n` calls) under the sampling profiler and
 * answers its µs per call by group; `close()`. `bundle`: the Worker's
 * dist/main.js. */
export async function inspector(port, bundle) {
  let targets = [];
  for (let i = 0; i < 100 && targets.length === 0; i++) {
    try {
      targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    } catch {
      // not listening yet
    }
    if (targets.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  if (targets.length === 0) throw new Error(`workerd's inspector on port ${port} lists no isolate`);
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let seq = 0;
  const pending = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(String(data));
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      pending.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 50 });
  const groupOf = classifier(bundle);
  return {
    async profiled(run, n) {
      await send("Profiler.start");
      let profile;
      try {
        await run();
      } finally {
        ({ profile } = await send("Profiler.stop"));
      }
      return grouped(profile, n, groupOf);
    },
    close: () => ws.close(),
  };
}
