// `make bench`, part 3: CPU per request in workerd — raw fetch, the floor
// (bench/profile.mjs's smallest wrapper keeping our guarantees, and its
// form for a streamed answer), ky, and
// saferetry in each body mode ("auto", "stream", "buffer"), each without and
// with a caller's signal (a fresh AbortController().signal per call, as SDKs
// pass) — as workerd's own CPU time (every thread, from /proc) over a few
// thousand subrequests to a loopback upstream. Figures, not pass/fail.
//
//   node bench/workerd-cpu.mjs        (WORKERD_SUBREQUESTS=N per client and round, default 1000;
//                                      WORKERD_ROUNDS=R rounds, default 6;
//                                      WORKERD_CLIENTS=buffer-signal,ky-signal,… only these clients,
//                                      each also run for the before/variant packages)
// Needs `make build`. The package measured is this checkout's js/, or
// BENCH_NOW=<a built js/ folder> (bench/table.mjs sets it to the lean
// build). With BENCH_BEFORE=<a built js/ folder> (bench/table.mjs sets it),
// that package runs beside it in the same Worker and rounds; with
// BENCH_JSON=<file>, the figures are written there: µs per request by
// client ("raw", "ky", "floor", "floorstream", "auto", "stream", "buffer"; "-signal" with
// a caller's signal; "-before" for the before package's). BENCH_VARIANTS=
// label=<a built js/ folder>,… adds more packages the same way ("-label"),
// for ablations. With more than one package, each other package's client is
// also printed as the median of its per-round differences to this
// checkout's (paired in the same round) with their spread.
//
// Then each client's own CPU with `fetch` stubbed (WORKERD_STUBBED=N calls
// per client and round, default 10000; 0 skips it): for those rounds the
// Worker puts bench/stub.mjs's `fetch` in the global slot, which answers
// at once with a fresh small JSON Response, as in Node's figures. No
// socket, upstream or network is left in the figure, only each client's
// work around `fetch`, as bench/run.mjs measures it in Node: µs per call,
// and its distance to the floor of its body mode ("stream": the floor for
// a streamed answer) and to ky, each paired in the same round. BENCH_JSON
// has them under `stubbed`, by client.
//
// Then where each client's CPU goes, by group (WORKERD_PROFILE=N calls per
// client, default 10000; 0 skips it): V8's sampling profiler, over workerd's
// inspector, during one more stubbed run of each client
// (bench/workerd-profile.mjs says how a sample finds its group). BENCH_JSON
// has them under `profiled`, by client.
import http from "node:http";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../tests/runtimes/port.mjs";
import { start, stop, workerdPort, wranglerWorker } from "../tests/runtimes/procs.mjs";
import { cpuTicks, median } from "./cpu.mjs";
import { GROUPS, inspector } from "./workerd-profile.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(REPO, "node_modules/.bin");
const OUT = path.join(REPO, "test-output/workerd-cpu");
const N = Number(process.env.WORKERD_SUBREQUESTS ?? 1000);
const STUBBED = Number(process.env.WORKERD_STUBBED ?? 10000);
const ROUNDS = Number(process.env.WORKERD_ROUNDS ?? 6);
const PROFILE = Number(process.env.WORKERD_PROFILE ?? 10000);
const ONLY = process.env.WORKERD_CLIENTS?.split(",");
const TICK_US = 1e6 / Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
const BEFORE = process.env.BENCH_BEFORE;
const NOW = process.env.BENCH_NOW ?? path.join(REPO, "js");
// Other packages beside this checkout's: [suffix, folder].
const OTHERS = [
  ...(BEFORE ? [["before", BEFORE]] : []),
  ...(process.env.BENCH_VARIANTS ? process.env.BENCH_VARIANTS.split(",").map((v) => v.split("=")) : []),
];

// One worker, one route per client: GET /<client>?n=N makes N sequential
// subrequests through that client and reads each body.
const WORKER = `import ky from "ky";
import { RetryPolicy } from "saferetry";
${OTHERS.map(([l], i) => `import { RetryPolicy as Other${i} } from "saferetry-${l}";`).join("\n")}
import { floor, floorStream } from "./floors.mjs"; // bench/floors.mjs, copied beside
import { stubFetch } from "./stub.mjs"; // bench/stub.mjs, copied beside
const kyClient = ky.create({ retry: 2 });
const fresh = () => new AbortController().signal;
const CLIENTS = {
  raw: async (u) => (await fetch(u)).text(),
  "raw-signal": async (u) => (await fetch(u, { signal: fresh() })).text(),
  floor: async (u) => (await floor(u)).text(),
  "floor-signal": async (u) => (await floor(u, fresh())).text(),
  floorstream: async (u) => (await floorStream(u)).text(),
  "floorstream-signal": async (u) => (await floorStream(u, fresh())).text(),
  ky: (u) => kyClient.get(u).text(),
  "ky-signal": (u) => kyClient.get(u, { signal: fresh() }).text(),
};
const packages = [["", RetryPolicy]${OTHERS.map(([l], i) => `, ["-${l}", Other${i}]`).join("")}];
for (const [suffix, Policy] of packages) {
  for (const mode of ["auto", "stream", "buffer"]) {
    const policy = new Policy(mode === "auto" ? {} : { responseBody: mode });
    CLIENTS[mode + suffix] = async (u) => (await policy.fetch(u)).text();
    CLIENTS[mode + "-signal" + suffix] = async (u) => (await policy.fetch(u, { signal: fresh() })).text();
  }
}
export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    const client = CLIENTS[url.pathname.slice(1)];
    const n = Number(url.searchParams.get("n"));
    if (!url.searchParams.has("stub")) {
      for (let i = 0; i < n; i++) await client(env.UPSTREAM);
      return new Response("ok");
    }
    const host = globalThis.fetch;
    globalThis.fetch = stubFetch; // for this round only
    try {
      for (let i = 0; i < n; i++) await client("http://127.0.0.1:9/");
    } finally {
      globalThis.fetch = host;
    }
    return new Response("ok");
  },
};
`;


const upstream = http.createServer((req, res) => {
  const body = '{"ok":true}';
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
});
upstream.keepAliveTimeout = 60_000;
await new Promise((r) => upstream.listen(0, "127.0.0.1", r));

rmSync(OUT, { recursive: true, force: true });
mkdirSync(path.join(OUT, "node_modules"), { recursive: true });
for (const [l, dir] of OTHERS) symlinkSync(path.resolve(dir), path.join(OUT, `node_modules/saferetry-${l}`));
mkdirSync(OUT, { recursive: true });
copyFileSync(path.join(REPO, "bench/floors.mjs"), path.join(OUT, "floors.mjs"));
copyFileSync(path.join(REPO, "bench/stub.mjs"), path.join(OUT, "stub.mjs"));
wranglerWorker({ dir: OUT, source: WORKER, packageDir: NOW, compatibilityDate: "2025-06-01", bindings: { UPSTREAM: `http://127.0.0.1:${upstream.address().port}/` } });

const inspectorPort = PROFILE > 0 ? await freePort() : 0;
const inspect = PROFILE > 0 ? [`--inspector-addr=127.0.0.1:${inspectorPort}`] : [];
const child = start("workerd", path.join(BIN, "workerd"), ["serve", "config.capnp", "--control-fd=3", ...inspect], { cwd: OUT, extraFds: 1, echo: false });
try {
  const port = await workerdPort(child);
  const ours = ["auto", "stream", "buffer"].flatMap((m) => [m, `${m}-signal`]);
  const base = ["raw", "raw-signal", "floor", "floor-signal", "floorstream", "floorstream-signal", "ky", "ky-signal", ...ours];
  const picked = ONLY ? ONLY.filter((c) => base.includes(c)) : base;
  if (!picked.includes("raw")) picked.unshift("raw"); // the × raw fetch column
  const mine = picked.filter((c) => ours.includes(c));
  const clients = [...picked, ...OTHERS.flatMap(([l]) => mine.map((c) => `${c}-${l}`))];
  const run = async (client, n, stubbed) => {
    const res = await fetch(`http://127.0.0.1:${port}/${client}?n=${n}${stubbed ? "&stub" : ""}`);
    if ((await res.text()) !== "ok") throw new Error(`${client}: ${res.status}`);
  };
  /** workerd's CPU per call of each client, µs by round: `n` calls a
   * client and round, through `fetch` or (`stubbed`) the stub. */
  const measure = async (n, stubbed) => {
    for (const c of clients) await run(c, 200, stubbed); // warm-up: JIT, the wasm, connections
    const us = Object.fromEntries(clients.map((c) => [c, []]));
    for (let r = 0; r < ROUNDS; r++) {
      // Interleaved rounds, each starting one client later: a client's
      // figure should not depend on which one ran before it (the garbage a
      // client leaves is collected during the next one's run).
      for (const c of [...clients.slice(r % clients.length), ...clients.slice(0, r % clients.length)]) {
        const before = cpuTicks(child.child.pid);
        await run(c, n, stubbed);
        us[c].push(((cpuTicks(child.child.pid) - before) * TICK_US) / n);
      }
    }
    return us;
  };
  const us = await measure(N, false);
  const raw = median(us.raw);
  console.log(`\n## workerd: CPU per request (workerd's own threads, /proc; ${N} subrequests × ${ROUNDS} rounds, median, min–max)\n`);
  console.log("| client | µs CPU per request | min–max | × raw fetch | paired Δ vs this checkout (median, min–max) |\n|---|---:|---:|---:|---:|");
  const parts = (c) => {
    const [, base, signal = "", other] = /^([a-z]+)(-signal)?(?:-(.+))?$/.exec(c);
    return { base, signal, other };
  };
  const name = (c) => {
    const { base, signal, other } = parts(c);
    const side = { raw: "raw fetch", floor: "floor (the smallest wrapper keeping our guarantees)", floorstream: "floor for a streamed answer", ky: "ky" }[base] ?? `saferetry, responseBody "${base}"`;
    return `${other ? `${other}: ` : ""}${side}${signal ? ", caller's signal" : ""}`;
  };
  const range = (xs) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
  /** Client `c`'s per-round differences to client `other`'s (paired in
   * the same round), as "median (min–max)"; empty without `other`. */
  const paired = (figures, c, other) => {
    if (!figures[other] || other === c) return "";
    const d = figures[c].map((x, i) => x - figures[other][i]);
    return `${median(d) >= 0 ? "+" : ""}${median(d).toFixed(0)} (${range(d)})`;
  };
  const mineOf = (c) => OTHERS.map(([l]) => `-${l}`).reduce((x, suffix) => (x.endsWith(suffix) ? x.slice(0, -suffix.length) : x), c);
  for (const c of clients) {
    console.log(`| ${name(c)} | ${median(us[c]).toFixed(0)} | ${range(us[c])} | ${(median(us[c]) / raw).toFixed(3)} | ${paired(us, c, mineOf(c))} |`);
  }
  const figures = Object.fromEntries(clients.map((c) => [c, median(us[c])]));
  if (STUBBED > 0) {
    const stubbed = await measure(STUBBED, true);
    console.log(`\n## workerd: own CPU per call, fetch stubbed (workerd's own threads, /proc; ${STUBBED} calls × ${ROUNDS} rounds, median, min–max; − the floor of its body mode and − ky: paired in each round)\n`);
    console.log("| client | µs CPU per call | min–max | − the floor of its body mode | − ky | paired Δ vs this checkout |\n|---|---:|---:|---:|---:|---:|");
    for (const c of clients) {
      const { base, signal } = parts(c);
      // ky returns the host's response: charged the buffered floor, as bench/cpu.mjs charges it.
      const floor = base === "stream" ? `floorstream${signal}` : `floor${signal}`;
      const own = !["raw", "floor", "floorstream"].includes(base);
      console.log(`| ${name(c)} | ${median(stubbed[c]).toFixed(0)} | ${range(stubbed[c])} | ${own ? paired(stubbed, c, floor) : ""} | ${own ? paired(stubbed, c, `ky${signal}`) : ""} | ${paired(stubbed, c, mineOf(c))} |`);
    }
    figures.stubbed = Object.fromEntries(clients.map((c) => [c, median(stubbed[c])]));
  }
  if (PROFILE > 0) {
    const profiler = await inspector(inspectorPort, path.join(OUT, "dist/main.js"));
    try {
      figures.profiled = {};
      for (const c of clients) figures.profiled[c] = await profiler.profiled(() => run(c, PROFILE, true), PROFILE);
    } finally {
      profiler.close();
    }
    console.log(`\n## workerd: where each call's CPU goes, fetch stubbed (µs per call by group, V8's sampling profiler every 50 µs over ${PROFILE} calls a client; bench/workerd-profile.mjs)\n`);
    console.log(`| client | ${GROUPS.join(" | ")} | sum |\n|---|${GROUPS.map(() => "---:|").join("")}---:|`);
    for (const c of clients) {
      const g = figures.profiled[c];
      console.log(`| ${name(c)} | ${GROUPS.map((k) => g[k].toFixed(1)).join(" | ")} | ${GROUPS.reduce((sum, k) => sum + g[k], 0).toFixed(1)} |`);
    }
  }
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(figures));
} finally {
  await stop(child);
  upstream.close();
}
