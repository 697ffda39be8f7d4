// Issue 19 item 4: the sans-IO spike (src/sansio, spike/) beside the shipped
// shape (js/), ky and raw fetch, in one run. Figures, not pass/fail
// (BENCHMARKS.md "Sans-IO spike").
//
//   scripts/build.sh && SANSIO=1 scripts/build.sh && node bench/sansio.mjs
//   LEAN=1 scripts/build.sh && LEAN=1 SANSIO=1 scripts/build.sh && node bench/sansio.mjs
//   node bench/sansio.mjs --bytes NAME=DIR ...   (only the bytes, of copies
//                         of builds: DIR holds js/ and spike/)
//
// 1. bytes: a page's `import { RetryPolicy }` (esbuild browser bundle,
//    minified, + its wasm, gzip; scripts/size.mjs), Node's import and a
//    Worker's bundle; ky's page bundle the same way;
// 2. crossings per successful call, fetch stubbed: wasm → JS (every import
//    wrapped, as bench/cpu.mjs counts them) and JS → wasm (every export);
// 3. own CPU per successful call, fetch stubbed (median minus the required
//    mechanics', bench/cpu.mjs);
// 4. Node success path on loopback, ratio to raw fetch;
// 5. workerd CPU per request and cold start (bench/workerd-cpu.mjs and
//    bench/pageload.mjs, with the spike added).
// Env: SANSIO_PARTS="bytes crossings cpu node workerd cold" (default all).
import http from "node:http";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { cpuTicks, instrument, interleaved, mechanicsOnly, median, withStub } from "./cpu.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SHIPPED = path.join(REPO, "js/src/node.js");
const SPIKE = path.join(REPO, "spike/src/node.js");
const TARGET = "http://127.0.0.1:9/";
const kb = (n) => (n / 1024).toFixed(1);

// ---------------- 2. crossings (in a worker: an instrumented instance) ----------------
if (!isMainThread && workerData?.module) {
  const imports = {}, exports = {};
  instrument(imports);
  // Every export too: the glue keeps `instance.exports`, so a wrapped copy counts JS → wasm.
  const Wrapped = WebAssembly.Instance;
  WebAssembly.Instance = function (module, imp) {
    const real = new Wrapped(module, imp).exports;
    const counted = {};
    for (const [name, f] of Object.entries(real)) {
      if (typeof f !== "function") counted[name] = f;
      else {
        exports[name] = 0;
        counted[name] = (...args) => (exports[name]++, f(...args));
      }
    }
    return { exports: counted };
  };
  const { RetryPolicy } = await import(workerData.module);
  const policy = new RetryPolicy(workerData.options);
  const calls = 1000;
  await withStub(async () => {
    for (let i = 0; i < 200; i++) await (await policy.fetch(TARGET)).arrayBuffer(); // warm up
    for (const c of [imports, exports]) for (const k of Object.keys(c)) c[k] = 0;
    for (let i = 0; i < calls; i++) await (await policy.fetch(TARGET)).arrayBuffer();
  });
  const per = (c) => Object.fromEntries(Object.entries(c).filter(([, n]) => n > 0).map(([k, n]) => [k, n / calls]).sort((a, b) => b[1] - a[1]));
  const sum = (o) => Object.values(o).reduce((s, n) => s + n, 0);
  const i = per(imports), e = per(exports);
  parentPort.postMessage({ intoJs: sum(i), intoWasm: sum(e), imports: i, exports: e });
}

function crossings(module, options) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { module, options } });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

// ---------------- 1. bytes ----------------
async function kyPage() {
  const esbuild = await import(path.join(REPO, "node_modules/esbuild/lib/main.js"));
  const dir = mkdtempSync(path.join(tmpdir(), "sansio-ky-"));
  try {
    writeFileSync(path.join(dir, "app.mjs"), 'import ky from "ky";\nglobalThis.client = ky.create({ retry: 2 });\n');
    const out = await esbuild.build({
      entryPoints: [path.join(dir, "app.mjs")], bundle: true, format: "esm", minify: true, platform: "browser",
      write: false, outdir: path.join(dir, "dist"), nodePaths: [path.join(REPO, "node_modules")], logLevel: "silent",
    });
    return gzipSync(out.outputFiles[0].contents, { level: 9 }).length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function bytes(builds) {
  const { entrySizes } = await import("../scripts/size.mjs");
  const names = ["page", "node", "workerd"];
  console.log("\n## Bytes, gzip (page: esbuild browser bundle, minified, + wasm; node: the import's static graph + wasm; workerd: Wrangler-like bundle + wasm)\n");
  console.log("| build | shape | page: js + wasm | page | node | workerd |\n|---|---|---:|---:|---:|---:|");
  for (const [name, dir] of Object.entries(builds)) {
    for (const [shape, sub] of [["shipped", "js"], ["sans-IO spike", "spike"]]) {
      const s = await entrySizes(path.join(dir, sub), names);
      console.log(`| ${name} | ${shape} | ${kb(s.page.js)} + ${kb(s.page.wasm)} | **${kb(s.page.total)} KB** | ${kb(s.node.total)} KB | ${kb(s.workerd.total)} KB |`);
    }
  }
  console.log(`| — | ky | ${kb(await kyPage())} + 0 | **${kb(await kyPage())} KB** | — | — |`);
  console.log("| — | raw fetch | 0 | 0 | 0 | 0 |");
}

// ---------------- 3 and 4. CPU in Node ----------------
async function clients() {
  const shipped = await import(SHIPPED);
  const spike = await import(SPIKE);
  const { default: ky } = await import("ky");
  return {
    shipped: new shipped.RetryPolicy({ responseBody: "buffer" }),
    shippedAuto: new shipped.RetryPolicy(),
    shippedStream: new shipped.RetryPolicy({ responseBody: "stream" }),
    spike: new spike.RetryPolicy({ responseBody: "buffer" }),
    spikeStream: new spike.RetryPolicy({ responseBody: "stream" }),
    ky: ky.create({ retry: 2, timeout: 10_000 }),
  };
}

function sidesFor(c, url) {
  return {
    "raw fetch": async () => (await fetch(url)).arrayBuffer(),
    "required mechanics only": () => mechanicsOnly(url),
    'required mechanics, "stream"': async () => (await streamMechanics(url)).arrayBuffer(),
    ky: () => c.ky.get(url).arrayBuffer(),
    'shipped, "buffer"': async () => (await c.shipped.fetch(url)).arrayBuffer(),
    'shipped, "stream"': async () => (await c.shippedStream.fetch(url)).arrayBuffer(),
    'shipped, default ("auto")': async () => (await c.shippedAuto.fetch(url)).arrayBuffer(),
    'sans-IO spike, "buffer"': async () => (await c.spike.fetch(url)).arrayBuffer(),
    'sans-IO spike, "stream"': async () => (await c.spikeStream.fetch(url)).arrayBuffer(),
  };
}

/** The floor for a streamed answer: bench/cpu.mjs's mechanics without the
 * buffering (an AbortController and a timer per attempt, the host's own
 * Response handed over). */
async function streamMechanics(target) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    return await fetch(target, { signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

async function stubbed(c) {
  const times = await withStub(() => interleaved(sidesFor(c, TARGET), { rounds: 20, perRound: 500, warmUp: 500 }));
  const mech = median(times["required mechanics only"]), streamMech = median(times['required mechanics, "stream"']);
  console.log(`\n## Own CPU per successful call, fetch stubbed (Node ${process.versions.node}; 20 rounds × 500, interleaved; median)\n`);
  console.log("| client | µs per call | own µs (− the mechanics of its body mode) |\n|---|---:|---:|");
  for (const [name, xs] of Object.entries(times)) {
    const floor = name.includes("stream") ? streamMech : mech;
    console.log(`| ${name} | ${median(xs).toFixed(1)} | ${name === "raw fetch" || name.startsWith("required") ? "—" : (median(xs) - floor).toFixed(1)} |`);
  }
}

/** A loopback server answering a small JSON document with Content-Length. */
async function jsonServer() {
  const server = http.createServer((req, res) => {
    const body = '{"ok":true}';
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    res.end(body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

async function loopback(c) {
  const { server, url } = await jsonServer();
  try {
    const times = await interleaved(sidesFor(c, url), { rounds: 20, perRound: 100, warmUp: 200 });
    const raw = median(times["raw fetch"]);
    console.log(`\n## Node success path, loopback (2000 sequential GETs per client, 20 interleaved rounds; median)\n`);
    console.log("| client | µs | × raw fetch |\n|---|---:|---:|");
    for (const [name, xs] of Object.entries(times)) console.log(`| ${name} | ${median(xs).toFixed(1)} | ${(median(xs) / raw).toFixed(3)} |`);
  } finally {
    server.close();
  }
}

// ---------------- 5. workerd ----------------
const WORKERD = path.join(REPO, "node_modules/.bin/workerd");
const SPIKE_NAME = "saferetry-sansio-spike";

async function withWorkerd(name, source, upstream, run) {
  const { start, stop, workerdPort, wranglerWorker } = await import("../tests/runtimes/procs.mjs");
  const dir = path.join(REPO, "test-output/sansio-bench", name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, "node_modules"), { recursive: true });
  symlinkSync(path.join(REPO, "spike"), path.join(dir, "node_modules", SPIKE_NAME));
  wranglerWorker({ dir, source, packageDir: path.join(REPO, "js"), compatibilityDate: "2025-06-01", bindings: { UPSTREAM: upstream } });
  return run(dir, { start, stop, workerdPort });
}

async function workerdCpu(upstream) {
  const N = Number(process.env.WORKERD_SUBREQUESTS ?? 1000), ROUNDS = 5;
  const tick = 1e6 / Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
  const source = `import ky from "ky";
import { RetryPolicy } from "saferetry";
import { RetryPolicy as Spike } from "${SPIKE_NAME}";
const kyClient = ky.create({ retry: 2 });
const streamed = new RetryPolicy({ responseBody: "stream" });
const buffered = new RetryPolicy({ responseBody: "buffer" });
const spike = new Spike({ responseBody: "buffer" });
const spikeStream = new Spike({ responseBody: "stream" });
const CLIENTS = {
  raw: async (u) => (await fetch(u)).text(),
  ky: (u) => kyClient.get(u).text(),
  stream: async (u) => (await streamed.fetch(u)).text(),
  buffer: async (u) => (await buffered.fetch(u)).text(),
  spike: async (u) => (await spike.fetch(u)).text(),
  spikeStream: async (u) => (await spikeStream.fetch(u)).text(),
};
export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    const n = Number(url.searchParams.get("n"));
    for (let i = 0; i < n; i++) await CLIENTS[url.pathname.slice(1)](env.UPSTREAM);
    return new Response("ok");
  },
};
`;
  return withWorkerd("cpu", source, upstream, async (dir, { start, stop, workerdPort }) => {
    const child = start("workerd", WORKERD, ["serve", "config.capnp", "--control-fd=3"], { cwd: dir, extraFds: 1, echo: false });
    try {
      const port = await workerdPort(child);
      const names = { raw: "raw fetch", ky: "ky", stream: 'shipped, "stream"', buffer: 'shipped, "buffer"', spike: 'sans-IO spike, "buffer"', spikeStream: 'sans-IO spike, "stream"' };
      const run = async (c, n) => {
        const res = await fetch(`http://127.0.0.1:${port}/${c}?n=${n}`);
        if ((await res.text()) !== "ok") throw new Error(`${c}: ${res.status}`);
      };
      for (const c of Object.keys(names)) await run(c, 200);
      const us = Object.fromEntries(Object.keys(names).map((c) => [c, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const c of Object.keys(names)) {
          const before = cpuTicks(child.child.pid);
          await run(c, N);
          us[c].push(((cpuTicks(child.child.pid) - before) * tick) / N);
        }
      }
      const raw = median(us.raw);
      console.log(`\n## workerd CPU per request (workerd's threads, /proc; ${N} subrequests × ${ROUNDS} rounds, median)\n`);
      console.log("| client | µs CPU per request | × raw fetch |\n|---|---:|---:|");
      for (const [c, name] of Object.entries(names)) console.log(`| ${name} | ${median(us[c]).toFixed(0)} | ${(median(us[c]) / raw).toFixed(3)} |`);
    } finally {
      await stop(child);
    }
  });
}

async function coldStart(upstream) {
  const RUNS = Number(process.env.COLDSTART_RUNS ?? 15);
  const workers = {
    "raw fetch": `export default { async fetch(req, env) { const r = await fetch(env.UPSTREAM); return new Response(await r.text()); } };`,
    ky: `import ky from "ky"; const client = ky.create({ retry: 2 });
export default { async fetch(req, env) { return new Response(await client.get(env.UPSTREAM).text()); } };`,
    shipped: `import { RetryPolicy } from "saferetry"; const policy = new RetryPolicy();
export default { async fetch(req, env) { const r = await policy.fetch(env.UPSTREAM); return new Response(await r.text()); } };`,
    "sans-IO spike": `import { RetryPolicy } from "${SPIKE_NAME}"; const policy = new RetryPolicy();
export default { async fetch(req, env) { const r = await policy.fetch(env.UPSTREAM); return new Response(await r.text()); } };`,
  };
  const dirs = {};
  let tools;
  for (const [name, source] of Object.entries(workers)) {
    await withWorkerd(`cold-${name.replace(/\W+/g, "-")}`, source, upstream, (dir, t) => ((dirs[name] = dir), (tools = t)));
  }
  const one = async (dir) => {
    const t0 = performance.now();
    const p = tools.start("workerd", WORKERD, ["serve", "config.capnp", "--control-fd=3"], { cwd: dir, extraFds: 1, echo: false });
    try {
      const port = await tools.workerdPort(p);
      await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(20_000) })).text();
      return performance.now() - t0;
    } finally {
      await tools.stop(p, 0);
    }
  };
  const ms = Object.fromEntries(Object.keys(workers).map((n) => [n, []]));
  for (let i = 0; i < RUNS; i++) for (const [name, dir] of Object.entries(dirs)) ms[name].push(await one(dir)); // interleaved
  const ky = median(ms.ky);
  console.log(`\n## workerd cold start to the first response (median of ${RUNS}, interleaved; Wrangler's build)\n`);
  console.log("| Worker | ms | − ky |\n|---|---:|---:|");
  for (const [name, xs] of Object.entries(ms)) console.log(`| ${name} | ${median(xs).toFixed(1)} | ${(median(xs) - ky).toFixed(1)} |`);
}

// ---------------- main ----------------
if (isMainThread) {
  const args = process.argv.slice(2);
  const parts = (process.env.SANSIO_PARTS ?? "bytes crossings cpu node workerd cold").split(/\s+/);
  if (args[0] === "--bytes") {
    await bytes(Object.fromEntries(args.slice(1).map((a) => a.split("=")).map(([k, v]) => [k, path.resolve(v)])));
  } else {
    if (parts.includes("bytes")) await bytes({ "this build": REPO });
    if (parts.includes("crossings")) {
      console.log(`\n## Crossings per successful call (fetch stubbed, 1000 calls after 200 to warm up)\n`);
      console.log("| client | wasm → JS | JS → wasm | total |\n|---|---:|---:|---:|");
      const rows = [
        ['shipped, "buffer"', SHIPPED, { responseBody: "buffer" }],
        ['shipped, "stream"', SHIPPED, { responseBody: "stream" }],
        ['shipped, default ("auto")', SHIPPED, {}],
        ['sans-IO spike, "buffer"', SPIKE, { responseBody: "buffer" }],
        ['sans-IO spike, "stream"', SPIKE, { responseBody: "stream" }],
      ];
      for (const [name, module, options] of rows) {
        const c = await crossings(module, options);
        console.log(`| ${name} | ${c.intoJs.toFixed(1)} | ${c.intoWasm.toFixed(1)} | ${(c.intoJs + c.intoWasm).toFixed(1)} |`);
        if (process.env.SANSIO_DETAIL) console.log(JSON.stringify({ imports: c.imports, exports: c.exports }));
      }
    }
    if (parts.includes("cpu") || parts.includes("node")) {
      const c = await clients();
      if (parts.includes("cpu")) await stubbed(c);
      if (parts.includes("node")) await loopback(c);
    }
    if (parts.includes("workerd") || parts.includes("cold")) {
      const { server: upstream, url } = await jsonServer();
      try {
        if (parts.includes("workerd")) await workerdCpu(url);
        if (parts.includes("cold")) await coldStart(url);
      } finally {
        upstream.close();
      }
    }
  }
}
