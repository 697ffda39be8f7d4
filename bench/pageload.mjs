// `make bench`, part 2: how long until a page can send its first request,
// and a Worker's cold start. Figures, not pass/fail.
//
//  1. Page load in headless Chromium with a mid-range phone emulated over
//     CDP (CPU ×4; "Fast 4G" 150 ms, 1.6 Mbps; "Slow 3G" 400 ms, 400 kbps;
//     brotli; cache off): median ms from navigation start until the page's
//     module has a ready client — raw fetch (nothing to load), ky, and
//     saferetry loaded several ways — and the bytes transferred.
//  2. workerd cold start: ms from starting workerd until the first response
//     of a Worker that makes one upstream request (raw fetch, ky, saferetry
//     as Wrangler builds it).
//
//   node bench/pageload.mjs        (PAGELOAD_RUNS=N loads per cell, default 9)
// Needs `make build` and Chromium (scripts/bootstrap.sh browsers). The
// package loaded is this checkout's js/, or BENCH_NOW=<a built js/ folder>
// (bench/table.mjs sets it to the lean build). With BENCH_BEFORE=<a built
// js/ folder> (bench/table.mjs sets it), that package is loaded too
// (bundled + preload; its Worker's cold start), interleaved with the rest;
// with BENCH_JSON=<file>, the figures are written there.
import http from "node:http";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brotliCompressSync, constants } from "node:zlib";
import { fileURLToPath } from "node:url";
import { wranglerWorker } from "../tests/runtimes/procs.mjs";
import { coldStart as oneColdStart } from "./workerd-start.mjs";
import { chromium } from "playwright-core";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(REPO, "test-output/pageload");
const BIN = path.join(REPO, "node_modules/.bin");
const RUNS = Number(process.env.PAGELOAD_RUNS ?? 9);
const COLD_RUNS = Number(process.env.COLDSTART_RUNS ?? 15);
const NETWORKS = {
  "Fast 4G": { latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 },
  "Slow 3G": { latency: 400, downloadThroughput: 400e3 / 8, uploadThroughput: 400e3 / 8 },
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const BEFORE = process.env.BENCH_BEFORE;
const NOW = process.env.BENCH_NOW ?? path.join(REPO, "js");

// ---------------- the pages ----------------
const READY = "performance.now()";
const page = ({ head = "", script, importMap }) => `<!doctype html>
<meta charset="utf-8">
<title>pageload</title>
${head}${importMap ? `<script type="importmap">${JSON.stringify({ imports: importMap })}</script>\n` : ""}<script type="module" src="${script}"></script>
`;

function esbuild(entry, outfile, extra = []) {
  execFileSync(path.join(BIN, "esbuild"), [entry, "--bundle", "--format=esm", "--platform=browser", "--minify",
    `--outfile=${outfile}`, "--log-level=warning", ...extra], { cwd: OUT });
}

/** Builds every variant under OUT/<name>/ and returns [{ name, path }]. */
function buildPages() {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const pkg = path.join(NOW, "src");
  const wasm = path.join(pkg, "saferetry_web_bg.wasm"); // the browser's module (web.js)
  const variants = [];
  const add = (name, files, html) => {
    const dir = path.join(OUT, name);
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    writeFileSync(path.join(dir, "index.html"), html);
    variants.push({ name, path: `/${name}/index.html` });
    return dir;
  };
  // raw fetch: the page's own module, nothing else.
  add("raw fetch", { "app.js": `window.__ready = ${READY}; window.__client = fetch;` }, page({ script: "app.js" }));
  // ky, bundled.
  let dir = add("ky", { "main.mjs": `import ky from "ky"; window.__client = ky.create({ retry: 2 }); window.__ready = ${READY};` }, page({ script: "app.js" }));
  esbuild(path.join(dir, "main.mjs"), path.join(dir, "app.js"));
  // saferetry, bundled by esbuild (the wasm copied beside the bundle, as the README says).
  const sr = `import { RetryPolicy } from ${JSON.stringify(path.join(pkg, "web.js"))}; window.__client = new RetryPolicy(); window.__ready = ${READY};`;
  dir = add("saferetry bundled", { "main.mjs": sr }, page({ script: "app.js" }));
  esbuild(path.join(dir, "main.mjs"), path.join(dir, "app.js"));
  copyFileSync(wasm, path.join(dir, path.basename(wasm)));
  // … plus the README's preload line, so the wasm downloads while the bundle does.
  const preloadOf = (file) => `<link rel="preload" href="${file}" as="fetch" type="application/wasm" crossorigin>\n`;
  const preload = preloadOf(path.basename(wasm));
  dir = add("saferetry bundled + preload", { "main.mjs": sr }, page({ head: preload, script: "app.js" }));
  esbuild(path.join(dir, "main.mjs"), path.join(dir, "app.js"));
  copyFileSync(wasm, path.join(dir, path.basename(wasm)));
  if (BEFORE) {
    const old = `import { RetryPolicy } from ${JSON.stringify(path.join(BEFORE, "src/web.js"))}; window.__client = new RetryPolicy(); window.__ready = ${READY};`;
    // A package before the browser's module (issue 26) loads the full one.
    const oldWasm = ["saferetry_web_bg.wasm", "saferetry_bg.wasm"].find((f) => existsSync(path.join(BEFORE, "src", f)));
    dir = add("before: saferetry bundled + preload", { "main.mjs": old }, page({ head: preloadOf(oldWasm), script: "app.js" }));
    esbuild(path.join(dir, "main.mjs"), path.join(dir, "app.js"));
    copyFileSync(path.join(BEFORE, "src", oldWasm), path.join(dir, oldWasm));
  }
  // … with the wasm inlined in the bundle as bytes and compiled synchronously
  // (an experiment, not a shipped entry: one request instead of two).
  dir = add("saferetry bundled, wasm inlined", {
    "main.mjs": `import bytes from ${JSON.stringify(wasm)};
import * as glue from ${JSON.stringify(path.join(pkg, "saferetry_web.js"))};
import { loaded } from ${JSON.stringify(path.join(pkg, "load.js"))};
import { RetryPolicy } from ${JSON.stringify(path.join(pkg, "core.js"))};
loaded(glue, glue.initSync({ module: bytes }));
window.__client = new RetryPolicy(); window.__ready = ${READY};`,
  }, page({ script: "app.js" }));
  esbuild(path.join(dir, "main.mjs"), path.join(dir, "app.js"), ["--loader:.wasm=binary"]);
  // unbundled: the package's files as they are, through an import map.
  const names = [...readdirSync(pkg), ...readdirSync(path.join(pkg, "outbox-stores")).map((f) => `outbox-stores/${f}`)];
  const files = Object.fromEntries(names.filter((f) => /\.(js|wasm)$/.test(f)).map((f) => [`pkg/${f}`, readFileSync(path.join(pkg, f))]));
  const app = `import { RetryPolicy } from "saferetry"; window.__client = new RetryPolicy(); window.__ready = ${READY};`;
  mkdirSync(path.join(OUT, "saferetry unbundled/pkg"), { recursive: true });
  add("saferetry unbundled", { ...files, "app.js": app }, page({ script: "app.js", importMap: { saferetry: "./pkg/web.js" } }));
  // … with modulepreload for the import chain and preload for the wasm.
  const hints = importChain(pkg, "web.js").map((f) => `<link rel="modulepreload" href="pkg/${f}">\n`).join("")
    + preloadOf(`pkg/${path.basename(wasm)}`);
  mkdirSync(path.join(OUT, "saferetry unbundled + hints/pkg"), { recursive: true });
  add("saferetry unbundled + hints", { ...files, "app.js": app }, page({ head: hints, script: "app.js", importMap: { saferetry: "./pkg/web.js" } }));
  return variants;
}

/** The modules `entry` imports statically, itself first, as the package has
 * them (the hints follow the package's files, not a list kept by hand). */
function importChain(pkg, entry) {
  const chain = [];
  for (const queue = [entry]; queue.length > 0; ) {
    const file = queue.shift();
    if (chain.includes(file)) continue;
    chain.push(file);
    const source = readFileSync(path.join(pkg, file), "utf8");
    for (const [, dep] of source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"\.\/([^"]+)"/gm)) {
      queue.push(path.posix.join(path.posix.dirname(file), dep));
    }
  }
  return chain;
}

// ---------------- a static server with brotli, no caching ----------------
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm" };
function serve(root) {
  const cache = new Map();
  const server = http.createServer((req, res) => {
    const file = path.join(root, decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (!file.startsWith(root) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      res.writeHead(404).end();
      return;
    }
    if (!cache.has(file)) {
      cache.set(file, brotliCompressSync(readFileSync(file), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "content-encoding": "br", "cache-control": "no-store" });
    res.end(cache.get(file));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

async function measurePages(variants, base) {
  const browser = await chromium.launch({
    executablePath: execFileSync("bash", ["-c", "command -v chromium"]).toString().trim(),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const rows = [];
  try {
    for (const [net, conditions] of Object.entries(NETWORKS)) {
      const times = new Map(variants.map((v) => [v.name, []]));
      const bytes = new Map();
      for (let i = 0; i < RUNS; i++) {
        for (const v of variants) { // interleaved: every variant sees the same machine state
          const context = await browser.newContext();
          const p = await context.newPage();
          const cdp = await context.newCDPSession(p);
          await cdp.send("Network.enable");
          await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
          await cdp.send("Network.emulateNetworkConditions", { offline: false, ...conditions });
          await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
          let transferred = 0;
          cdp.on("Network.loadingFinished", (e) => { transferred += e.encodedDataLength; });
          await p.goto(base + encodeURI(v.path));
          await p.waitForFunction(() => window.__ready !== undefined, null, { timeout: 60_000 });
          const ready = await p.evaluate(() => window.__ready);
          times.get(v.name).push(ready);
          bytes.set(v.name, transferred);
          await context.close();
        }
      }
      for (const v of variants) rows.push({ net, name: v.name, ms: median(times.get(v.name)), bytes: bytes.get(v.name) });
    }
  } finally {
    await browser.close();
  }
  return rows;
}

// ---------------- workerd cold start ----------------
async function coldStart(upstream) {
  const dir = path.join(OUT, "workerd");
  mkdirSync(dir, { recursive: true });
  const workers = {
    "raw fetch": `export default { async fetch(req, env) { const r = await fetch(env.UPSTREAM); return new Response(await r.text()); } };`,
    ky: `import ky from "ky"; const client = ky.create({ retry: 2 });
export default { async fetch(req, env) { return new Response(await client.get(env.UPSTREAM).text()); } };`,
    saferetry: `import { RetryPolicy } from "saferetry"; const policy = new RetryPolicy();
export default { async fetch(req, env) { const r = await policy.fetch(env.UPSTREAM); return new Response(await r.text()); } };`,
  };
  if (BEFORE) workers["before: saferetry"] = workers.saferetry;
  const dirOf = (name) => path.join(dir, name.replace(/\W+/g, "-"));
  for (const [name, source] of Object.entries(workers)) {
    const packageDir = name.startsWith("before:") ? BEFORE : NOW;
    wranglerWorker({ dir: dirOf(name), source, packageDir, compatibilityDate: "2025-06-01", bindings: { UPSTREAM: upstream } });
  }
  const results = Object.fromEntries(Object.keys(workers).map((name) => [name, []]));
  for (let i = 0; i < COLD_RUNS; i++) {
    for (const name of Object.keys(workers)) results[name].push((await oneColdStart(dirOf(name)))[1]); // interleaved
  }
  return Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
}

// ---------------- main ----------------
const variants = buildPages();
const server = await serve(OUT);
const base = `http://127.0.0.1:${server.address().port}`;
try {
  const rows = await measurePages(variants, base);
  console.log(`\n## Until a page's client is ready (headless Chromium, CPU ×4, brotli, cache off; median of ${RUNS} loads)\n`);
  const names = variants.map((v) => v.name);
  const ky = (net) => rows.find((r) => r.net === net && r.name === "ky").ms;
  console.log(`| | ${names.join(" | ")} |`);
  console.log(`|---|${names.map(() => "---:").join("|")}|`);
  console.log(`| bytes transferred | ${names.map((n) => rows.find((r) => r.name === n).bytes.toLocaleString("en")).join(" | ")} |`);
  for (const net of Object.keys(NETWORKS)) {
    console.log(`| ${net} ms (× ky) | ${names.map((n) => { const ms = rows.find((r) => r.net === net && r.name === n).ms; return `${ms.toFixed(0)} (${(ms / ky(net)).toFixed(2)})`; }).join(" | ")} |`);
  }
  const upstream = http.createServer((req, res) => res.end("ok"));
  await new Promise((r) => upstream.listen(0, "127.0.0.1", r));
  try {
    const cold = await coldStart(`http://127.0.0.1:${upstream.address().port}/`);
    console.log(`\n## workerd cold start to the first response (median of ${COLD_RUNS}; Wrangler's build)\n`);
    console.log("| Worker | ms | − ky |\n|---|---:|---:|");
    for (const [name, ms] of Object.entries(cold)) console.log(`| ${name} | ${ms.toFixed(1)} | ${(ms - cold.ky).toFixed(1)} |`);
    if (process.env.BENCH_JSON) {
      const pages = {};
      for (const r of rows) (pages[r.net] ??= {})[r.name] = r.ms;
      writeFileSync(process.env.BENCH_JSON, JSON.stringify({ pages, cold }));
    }
  } finally {
    upstream.close();
  }
} finally {
  server.close();
}
