// `make profile` (and a step of `make bench`): where a successful call's time
// goes (issue 37), beside plain `fetch`. Sides: raw fetch; "the floor", the
// smallest wrapper keeping our guarantees (an AbortController and a timer
// per call, a caller's signal listened to once, the body read with
// arrayBuffer() and the Response rebuilt), and "the floor stream", the
// same for a streamed answer (the timer up to the headers, the host's
// Response handed over, the caller's signal still aborting its body); ky; saferetry's policy.fetch in
// each body mode ("auto", the default, "stream", "buffer") — each without
// and with a caller's signal (a fresh AbortController().signal per call, as
// SDKs pass). Each does N sequential GETs of a small JSON 200 (with
// Content-Length) from a loopback server in another process, so a profile
// holds only the client. Prints
//  1. µs per call by group, from `node --cpu-prof`: a fresh profiled child
//     per side and round, after a warm-up; each sample's time goes to the
//     innermost frame of its stack that says whose work it is (classifier()
//     below): wasm (saferetry's; undici's HTTP parser is wasm too, and is
//     fetch's), executor/glue (the package's js/src, wasm-bindgen's glue
//     included; ky's files for ky; the floor's function), Request and
//     Response (undici building them, their Headers and body streams, for
//     fetch itself or for a wrapper), AbortSignal, timers, promise jobs
//     (the microtask queue's own time), sockets (reads, and writes: the
//     syscall), GC, idle, (program), and fetch & rest (undici's own work,
//     Node's streams…); each group's median over the rounds;
//  2. each side minus raw fetch, by group: each child runs its side in
//     windows alternating with raw fetch's (the "side" role below), so the
//     two share the process's and the machine's state, and the difference
//     is taken within the child (on this shared 2-core machine, sides
//     profiled in separate processes differ by ±30% with the load
//     elsewhere; paired, by a few µs); and saferetry minus the floor;
//  3. each side's median call × raw fetch's, interleaved in one process
//     without the profiler (bench/cpu.mjs's rounds), against the issue's
//     targets ("stream" ≤ 1.15, "buffer" and "auto" ≤ 1.30, below ky's), and
//     workerd's CPU per request (bench/workerd-cpu.mjs) beside ky's.
//
//   node bench/profile.mjs     (needs `make build`; PROFILE_REQUESTS=N per
//                               side and run, default 3000; PROFILE_ROUNDS,
//                               default 3; PROFILE_INTERVAL=µs between
//                               samples, default 250; PROFILE_WORKERD=0
//                               skips workerd)
// The package measured is this checkout's js/, or BENCH_NOW=<a built js/
// folder>; with BENCH_BEFORE=<a built js/ folder> (`node bench/base.mjs`
// builds one), that package's sides run too, marked "before:".
// PROFILE_JSON=<file> writes the figures there; WORKERD_JSON=<file> takes
// workerd's from a bench/workerd-cpu.mjs run (bench/table.mjs passes the
// one it made) instead of running it again. PROFILE_DETAIL=1 also prints
// each side's heaviest frames, with their group and callers.
import http from "node:http";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { interleaved, median } from "./cpu.mjs";
import { successSides } from "./sides.mjs";
import { atMost } from "./targets.mjs";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const N = Number(process.env.PROFILE_REQUESTS ?? 3000);
// Every 250 µs: at 100, the sampling itself adds ~15% to a call's wall
// time on this 2-core machine (at 250, ~4%); 3000 calls still give a few
// thousand samples per run.
const INTERVAL = Number(process.env.PROFILE_INTERVAL ?? 250);
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 3);
const STALL = Math.max(1000, 4 * INTERVAL);
const WINDOWS = 10;
const WARM_UP = 2000; // the JIT settles: after 500 calls, raw fetch's mean is still ~1.5× its mean after 2000
const NOW = process.env.BENCH_NOW ?? path.join(REPO, "js");
const BEFORE = process.env.BENCH_BEFORE;

// ---- The sides (the profiled children and the interleaved run share them) ----

/** `{ name: async () => … }`, each one GET of `url` with its body read
 * (bench/sides.mjs: the same sides in every runtime). */
async function sides(url) {
  const ky = (await import("ky")).default;
  const packages = [];
  for (const [prefix, dir] of [["", NOW], ["before: ", BEFORE]]) {
    if (dir) packages.push([prefix, (await import(`${dir}/src/node.js`)).RetryPolicy]);
  }
  return successSides(url, { ky, packages });
}

// bench/workerd-cpu.mjs's client for a side (its BENCH_JSON keys).
function workerdKey(name) {
  const m = /^(before: )?(?:saferetry "(\w+)"|(raw fetch|ky|floor|floor stream))( \+ signal)?$/.exec(name);
  if (!m) return null;
  const base = m[2] ?? { "raw fetch": "raw", ky: "ky", floor: "floor", "floor stream": "floorstream" }[m[3]];
  return `${base}${m[4] ? "-signal" : ""}${m[1] ? "-before" : ""}`;
}

// ---- Attribution ----

const GROUPS = ["wasm", "executor/glue", "Request", "Response", "AbortSignal", "timers", "promise jobs", "sockets", "GC", "idle", "(program)", "fetch & rest"];
const UNDICI = "node:internal/deps/undici/undici";
// undici's functions that build a fetch Request (fetch builds one per call
// too; `Request`, without the underscore, is its dispatcher's, made by every
// call) or a Response (fetch makes one of what it received; a wrapper's
// rebuilt Response is another), its Headers (a Request's or a Response's,
// as they are built for; the caller's or the glue's own, a Request's), and
// its abort listeners. The WebIDL conversions and helpers they call count
// for them.
const REQUEST = /^(_Request|makeRequest|cloneRequest)$/;
const RESPONSE = /^(_?Response|initializeResponse|fromInnerResponse|makeResponse|cloneResponse)$/;
const HEADERS = /^(_?HeadersList|_?Headers|fill)$/;
const ABORT = /^(addAbortListener|abort|onAbort|\w*AbortSignal\w*)$/;
const SPECIAL = new Map([["(garbage collector)", "GC"], ["(idle)", "idle"], ["(program)", "(program)"], ["(root)", "(program)"]]);
const isWasm = (f) => f.url.startsWith("wasm://") || /^(wasm-function\[|\$)/.test(f.functionName);

/** Attributes a sample to a group: the innermost frame of its stack that
 * says whose work it is. Native builtins (no url), streams, events, util
 * and the like say nothing (Node's `new ReadableStream` spends most of its
 * time in `makeTransferable`, for one), so their time goes to the frame
 * that called them: undici (by function: building a Request or a
 * Response, an abort listener, else fetch's own work), the package's
 * glue, timers, the AbortSignal machinery, or wasm. */
function classifier(profile, ownUrls) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const up = (n) => nodes.get(parent.get(n.id));
  /** The group frame `n` itself says, or null. */
  const says = (n) => {
    const { functionName: fn, url } = n.callFrame;
    if (isWasm(n.callFrame)) {
      // undici's HTTP parser (llhttp) is wasm too: wasm called from
      // undici is fetch's own work.
      let m = n;
      while (m && (isWasm(m.callFrame) || !m.callFrame.url)) m = up(m);
      return m?.callFrame.url === UNDICI ? "fetch & rest" : "wasm";
    }
    if (ownUrls.some((d) => url.startsWith(d))) return "executor/glue";
    if (url === "node:internal/abort_controller") return "AbortSignal";
    if (url === "node:internal/event_target") {
      // EventTarget is the AbortSignal's, but for the `performance`
      // timeline's "resourcetimingbufferfull" event, dispatched for the
      // entry fetch records per call once the buffer is full: fetch's.
      let m = up(n);
      while (m && (!m.callFrame.url || m.callFrame.url === url)) m = up(m);
      return m?.callFrame.url.startsWith("node:internal/perf/") ? "fetch & rest" : "AbortSignal";
    }
    if (url === "node:events" && /MaxListeners/.test(fn)) return "AbortSignal"; // undici's, on each signal
    if (url === "node:internal/timers" || url === "node:timers") return "timers";
    // A body stream made: fetch's own for what it received, or a rebuilt
    // Response's.
    if (url === "node:internal/webstreams/readablestream" && fn === "ReadableStream") return "Response";
    if (url === UNDICI) {
      if (fn === "__name") return null; // esbuild's helper, called for each closure undici makes
      if (REQUEST.test(fn)) return "Request";
      if (RESPONSE.test(fn)) return "Response";
      if (ABORT.test(fn)) return "AbortSignal";
      return HEADERS.test(fn) ? "undici: Headers" : "undici";
    }
    // The socket's reads and writes (a write's time is the syscall's, which
    // wakes the server: scheduling, on a busy machine); the microtask queue
    // run itself (its self time is V8's promise jobs: resolutions, awaits
    // resumed); Node's global `fetch` (a lazy loader of undici's).
    if (url === "node:net" || url === "node:internal/stream_base_commons") return "sockets";
    if (url === "node:internal/process/task_queues") return "promise jobs";
    if (url === "node:internal/bootstrap/web/exposed-window-or-worker") return "fetch & rest";
    return null;
  };
  const classify = (id) => {
    const leaf = nodes.get(id);
    const special = SPECIAL.get(leaf.callFrame.functionName);
    if (special) return [special, special];
    // An undici helper counts for the undici function it serves: the
    // nearest one above it that builds a Request, a Response or a
    // listener; else Headers made on their own are a Request's, and the
    // rest is fetch's own work.
    let inUndici = false;
    let headers = false;
    let group = null;
    for (let n = leaf; n && !group; n = up(n)) {
      const g = says(n);
      if (g === null) continue;
      if (g.startsWith("undici")) {
        inUndici = true;
        headers ||= g === "undici: Headers";
      } else if (!inUndici || ["Request", "Response", "AbortSignal"].includes(g)) group = g;
      else break;
    }
    group ??= headers ? "Request" : "fetch & rest";
    const name = (n) => `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*\//, "")}`;
    let frame = name(leaf);
    for (let m = up(leaf), i = 0; m && i < 3; m = up(m), i++) frame += ` ← ${name(m)}`;
    return [group, frame];
  };
  const memo = new Map();
  return (id) => {
    if (!memo.has(id)) memo.set(id, classify(id));
    return memo.get(id);
  };
}

/** µs per call by group in a child's windows, for the side's and for
 * raw fetch's (`{ side, raw }`; `raw` null when it ran alone), with the
 * heaviest frames. A sample stands for the time until the next one, up to
 * STALL: a longer gap is the process (or the profiler's thread) waiting for
 * a core the rest of the machine holds, not work of the client's, and is
 * counted apart as "stalled" (large when the machine is busy). */
function attribute(profile, windows, ownUrls) {
  const classify = classifier(profile, ownUrls);
  const out = {};
  for (const w of windows) {
    out[w.who] ??= { groups: Object.fromEntries(GROUPS.map((g) => [g, 0])), stalled: 0, wall: 0, calls: 0, frames: {} };
    out[w.who].wall += w.t1 - w.t0;
    out[w.who].calls += w.calls;
  }
  const { samples, timeDeltas } = profile;
  let t = profile.startTime;
  let w = 0;
  for (let i = 0; i < samples.length; i++) {
    t += timeDeltas[i];
    while (w < windows.length && t >= windows[w].t1) w++;
    if (w === windows.length) break;
    if (t < windows[w].t0) continue;
    const o = out[windows[w].who];
    const dt = Math.max(0, timeDeltas[i + 1] ?? INTERVAL);
    o.stalled += Math.max(0, dt - STALL);
    const [group, frame] = classify(samples[i]);
    o.groups[group] += Math.min(dt, STALL);
    const key = `${group}: ${frame}`;
    o.frames[key] = (o.frames[key] ?? 0) + Math.min(dt, STALL);
  }
  for (const o of Object.values(out)) {
    for (const g of GROUPS) o.groups[g] /= o.calls;
    for (const k of Object.keys(o.frames)) o.frames[k] /= o.calls;
    o.stalled /= o.calls;
    o.wall /= o.calls;
    o.sampled = Object.values(o.groups).reduce((a, b) => a + b, 0);
  }
  return { side: out.side, raw: out.raw ?? null };
}

// ---- The parent ----

async function main() {
  const server = spawn(process.execPath, [fileURLToPath(import.meta.url), "server"], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    server.stdout.once("data", (d) => resolve(Number(String(d).trim())));
    server.once("exit", (code) => reject(new Error(`the upstream server ended (${code})`)));
  });
  const url = `http://127.0.0.1:${port}/`;
  const work = mkdtempSync(path.join(tmpdir(), "saferetry-profile-"));
  // Whose frames are a side's own JavaScript (its "executor/glue"): the
  // package's js/src (wasm-bindgen's glue included), ky's files, or for the
  // floor, bench/floors.mjs.
  const dirUrl = (dir) => pathToFileURL(realpathSync(dir)).href + "/";
  const ownOf = (name) => {
    if (name.startsWith("ky")) return [dirUrl(path.join(REPO, "node_modules/ky"))];
    if (name.startsWith("floor")) return [new URL("./floors.mjs", import.meta.url).href];
    return [dirUrl(path.join(name.startsWith("before: ") ? BEFORE : NOW, "src"))];
  };
  try {
    const all = await sides(url);
    const names = Object.keys(all);
    // Profiled in rounds, each side's child once per round, each round
    // starting one side later (as bench/workerd-cpu.mjs), so a burst of
    // load elsewhere on the machine lands in one run of a few sides. Per
    // side, each group's median over the runs; and minus raw fetch, the
    // median over the runs of the side's windows minus raw fetch's in the
    // same child.
    const runs = Object.fromEntries(names.map((n) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const shift = round % names.length;
      for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
        const dir = path.join(work, `${names.indexOf(name)}-${round}`);
        const child = spawnSync(process.execPath, [
          "--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${INTERVAL}`,
          fileURLToPath(import.meta.url), "side", name,
        ], { env: { ...process.env, PROFILE_URL: url }, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
        if (child.status !== 0) throw new Error(`profiling ${name}: exit ${child.status ?? child.signal}`);
        const file = path.join(dir, readdirSync(dir)[0]);
        runs[name].push(attribute(JSON.parse(readFileSync(file, "utf8")), JSON.parse(child.stdout), ownOf(name)));
        rmSync(dir, { recursive: true });
      }
    }
    const sum = (groups) => Object.values(groups).reduce((a, b) => a + b, 0);
    const medians = (rs, of) => Object.fromEntries(GROUPS.map((g) => [g, median(rs.map((r) => of(r, g)))]));
    const profiled = Object.fromEntries(names.map((n) => {
      const rs = runs[n];
      const groups = medians(rs, (r, g) => r.side.groups[g]);
      const over = n === "raw fetch" ? null : medians(rs, (r, g) => r.side.groups[g] - r.raw.groups[g]);
      return [n, {
        groups,
        sampled: sum(groups),
        stalled: median(rs.map((r) => r.side.stalled)),
        wall: median(rs.map((r) => r.side.wall)),
        runs: rs.map((r) => r.side.sampled),
        over,
        overRuns: over && rs.map((r) => r.side.sampled - r.raw.sampled),
        frames: [...rs].sort((a, b) => a.side.sampled - b.side.sampled)[rs.length >> 1].side.frames,
      }];
    }));

    // Ratios without the profiler: every side in turn in each round, in
    // this process (bench/cpu.mjs's interleaved rounds, as bench/run.mjs).
    const rounds = 20;
    const times = await interleaved(all, { rounds, perRound: Math.ceil(N / rounds), warmUp: 200 });
    const µs = Object.fromEntries(names.map((n) => [n, median(times[n])]));
    const ratio = Object.fromEntries(names.map((n) => [n, µs[n] / µs["raw fetch"]]));

    const workerd = workerdFigures();

    const f = (x, d = 1) => (x === undefined || x === null || Number.isNaN(x) ? "—" : x.toFixed(d));
    const signed = (x) => (Math.abs(x) < 0.05 ? "0.0" : `${x > 0 ? "+" : ""}${x.toFixed(1)}`);
    const header = (first, rest) => `| ${first} | ${rest.join(" | ")} |\n|---|${rest.map(() => "---:|").join("")}`;
    console.log(`\n## Where a successful call's time goes: µs per call by group (Node ${process.versions.node}, --cpu-prof every ${INTERVAL} µs, ${N} sequential GETs of an 11-byte JSON 200 per side and run, loopback server in another process; each group's median of ${ROUNDS} runs; "stalled": gaps between samples beyond ${STALL} µs, the machine busy elsewhere)\n`);
    console.log(header("side", [...GROUPS, "sum (each run's)", "stalled", "wall, profiled", "median, interleaved"]));
    for (const name of names) {
      const p = profiled[name];
      const all = p.runs.map((x) => x.toFixed(0)).join(", ");
      console.log(`| ${name} | ${GROUPS.map((g) => f(p.groups[g])).join(" | ")} | ${f(p.sampled)} (${all}) | ${f(p.stalled)} | ${f(p.wall)} | ${f(µs[name])} |`);
    }
    console.log(`\n## Each side minus raw fetch, by group (µs per call, profiled: the side's windows minus raw fetch's in the same child, median of ${ROUNDS} runs)\n`);
    console.log(header("side", [...GROUPS, "sum (each run's)"]));
    for (const name of names.filter((n) => n !== "raw fetch")) {
      const p = profiled[name];
      console.log(`| ${name} | ${GROUPS.map((g) => signed(p.over[g])).join(" | ")} | ${signed(sum(p.over))} (${p.overRuns.map((x) => x.toFixed(0)).join(", ")}) |`);
    }
    // What saferetry adds to the smallest wrapper keeping the same
    // guarantees: the distance the issue asks to prove necessary or close.
    console.log(`\n## saferetry minus the floor, by group (µs per call, profiled: the two rows above, each minus raw fetch, subtracted)\n`);
    console.log(header("side", [...GROUPS, "sum"]));
    for (const name of names.filter((n) => n.includes("saferetry"))) {
      // "stream" beside the floor that streams too; "buffer" and "auto"
      // (which buffers this answer) beside the one that reads the body.
      const base = name.includes('"stream"') ? "floor stream" : "floor";
      const floor = profiled[name.endsWith(" + signal") ? `${base} + signal` : base].over;
      const p = profiled[name].over;
      console.log(`| ${name} | ${GROUPS.map((g) => signed(p[g] - floor[g])).join(" | ")} | ${signed(sum(p) - sum(floor))} |`);
    }
    // The targets: in Node, the median call (interleaved, no
    // profiler) ≤ 1.15× raw fetch streamed, ≤ 1.30× buffered, below ky's
    // ratio; in workerd, CPU per request ≤ ky's. ky with a signal for a
    // side with a signal.
    console.log(`\n## Against the targets: Node median × raw fetch (interleaved, ${rounds} rounds, no profiler); workerd CPU per request (bench/workerd-cpu.mjs${workerd ? "" : ": not measured"})\n`);
    console.log("| side | Node × raw fetch | Node target | workerd µs CPU | workerd × ky | workerd target |\n|---|---:|---|---:|---:|---|");
    for (const name of names) {
      const signal = name.endsWith(" + signal");
      const kyName = signal ? "ky + signal" : "ky";
      const mode = /"(\w+)"/.exec(name)?.[1];
      const target = mode ? `${atMost(mode)} and < ky's ${f(ratio[kyName], 2)}` : "";
      const w = workerd?.[workerdKey(name)];
      const wKy = workerd?.[workerdKey(kyName)];
      console.log(`| ${name} | ${f(ratio[name], 2)} | ${target} | ${f(w, 0)} | ${w && wKy ? f(w / wKy, 2) : "—"} | ${mode ? "≤ ky" : ""} |`);
    }
    if (process.env.PROFILE_DETAIL) {
      for (const name of names) {
        console.log(`\n### ${name}: heaviest frames (µs per call)\n`);
        const top = Object.entries(profiled[name].frames).sort((a, b) => b[1] - a[1]).slice(0, 25);
        for (const [frame, t] of top) console.log(`${t.toFixed(2).padStart(7)}  ${frame}`);
      }
    }
    if (process.env.PROFILE_JSON) {
      writeFileSync(process.env.PROFILE_JSON, JSON.stringify({
        requests: N, interval: INTERVAL, node: process.versions.node,
        sides: Object.fromEntries(names.map((n) => {
          const { frames, ...p } = profiled[n];
          return [n, { ...p, median: µs[n], ratio: ratio[n] }];
        })),
        workerd,
      }));
    }
  } finally {
    server.stdin.end();
    rmSync(work, { recursive: true, force: true });
  }
}

/** workerd's CPU per request by client (bench/workerd-cpu.mjs's BENCH_JSON),
 * from WORKERD_JSON or a run of it; null when it cannot run here. */
function workerdFigures() {
  if (process.env.WORKERD_JSON) return JSON.parse(readFileSync(process.env.WORKERD_JSON, "utf8"));
  if (process.env.PROFILE_WORKERD === "0") return null;
  const json = path.join(tmpdir(), `saferetry-profile-workerd-${process.pid}.json`);
  const run = spawnSync(process.execPath, [path.join(REPO, "bench/workerd-cpu.mjs")], {
    env: { ...process.env, BENCH_JSON: json }, stdio: ["ignore", "inherit", "inherit"],
  });
  try {
    return run.status === 0 ? JSON.parse(readFileSync(json, "utf8")) : null;
  } finally {
    rmSync(json, { force: true });
  }
}

// ---- Roles: the server, a profiled child, the parent ----

if (process.argv[2] === "server") {
  // The loopback upstream, in a process of its own; ends with its stdin.
  const server = http.createServer((req, res) => {
    const body = '{"ok":true}';
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => console.log(server.address().port));
  process.stdin.resume().on("end", () => process.exit(0));
} else if (process.argv[2] === "side") {
  // One side, under --cpu-prof, after a warm-up: N calls in WINDOWS windows,
  // alternating with as many raw fetch calls (ABBA: the side first in
  // even windows, raw fetch in odd ones), so the side and its reference
  // share this process's and the machine's conditions; the windows' bounds
  // (µs, the profiler's clock: CLOCK_MONOTONIC) go to stdout. The raw
  // fetch side runs alone.
  const all = await sides(process.env.PROFILE_URL);
  const name = process.argv[3];
  const paired = name !== "raw fetch";
  const who = { side: all[name], raw: all["raw fetch"] };
  for (let i = 0; i < WARM_UP; i++) await who.side();
  if (paired) for (let i = 0; i < WARM_UP / 4; i++) await who.raw();
  const calls = Math.ceil(N / WINDOWS);
  const windows = [];
  for (let w = 0; w < WINDOWS; w++) {
    for (const k of !paired ? ["side"] : w % 2 ? ["raw", "side"] : ["side", "raw"]) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) await who[k]();
      windows.push({ who: k, calls, t0: Number(t0 / 1000n), t1: Number(process.hrtime.bigint() / 1000n) });
    }
  }
  console.log(JSON.stringify(windows));
  process.exit(0); // the profile is written on exit; undici's idle sockets need not linger
} else {
  await main();
}
