// A successful call beside plain `fetch` in every runtime a page or a
// server runs it in (issue 37's "as cheap as fetch", measured where
// bench/profile.mjs measures Node alone): Node, Deno, Bun, Chromium,
// Firefox and WebKit each run the same sides (bench/sides.mjs: raw fetch,
// the floors, ky, saferetry in each body mode, each without and with a
// caller's signal) against one loopback server in this process, sequential
// GETs of a small JSON 200 with Content-Length, timed by windows of calls
// and interleaved (each round every side's window once, each round
// starting one side later). Prints each side's median window × raw
// fetch's in the same runtime and run. workerd's figure is CPU per request
// (bench/workerd-cpu.mjs), not a client's wall time. Figures, not
// pass/fail.
//
//   node bench/runtimes.mjs   (needs `make build` and `make test`'s
//                              runtimes and browsers; RUNTIMES=node,deno,…
//                              only these; RUNTIMES_ROUNDS, default 15;
//                              RUNTIMES_WINDOW calls per window, default
//                              100; BENCH_NOW=<a built js/ folder>: that
//                              package; BENCH_BEFORE=<a built js/ folder>:
//                              that one's sides too, beside it in the same
//                              rounds; RUNTIMES_STUBBED=1: `fetch` stubbed
//                              (bench/stub.mjs), each side's µs per call
//                              over raw fetch's, its own work around
//                              `fetch`; RUNTIMES_JSON=<file>: the figures)
import http from "node:http";
import { spawn } from "node:child_process";
import { realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, ratios } from "./sides.mjs";
import { serveStatic } from "../tests/runtimes/serve.mjs";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const NOW = realpathSync(process.env.BENCH_NOW ?? path.join(REPO, "js"));
const BEFORE = process.env.BENCH_BEFORE && realpathSync(process.env.BENCH_BEFORE);
const ROUNDS = Number(process.env.RUNTIMES_ROUNDS ?? 15);
const PER_WINDOW = Number(process.env.RUNTIMES_WINDOW ?? 100);
const WARM_UP = 300;
const STUB = process.env.RUNTIMES_STUBBED === "1";
const ALL = ["node", "deno", "bun", "chromium", "firefox", "webkit"];
const RUNTIMES = process.env.RUNTIMES?.split(",") ?? ALL;
const BIN = path.join(REPO, "node_modules/.bin");
const KY = path.join(REPO, "node_modules/ky/distribution");

// What the browsers' page may load, by URL prefix: the package's files,
// ky's, and the sides with the floors.
const ROOTS = { "/pkg/": path.join(NOW, "src"), "/ky/": KY, "/bench/": path.join(REPO, "bench"), ...(BEFORE && { "/before/": path.join(BEFORE, "src") }) };
const BODY = '{"ok":true}';

const page = () => `<!doctype html><meta charset="utf-8"><title>saferetry: a successful call beside fetch</title>
<script type="module">
try {
  const packages = [["", (await import("/pkg/web.js")).RetryPolicy]];
  ${BEFORE ? 'packages.push(["before: ", (await import("/before/web.js")).RetryPolicy]);' : ""}
  const ky = (await import("/ky/index.js")).default;
  const { measured } = await import("/bench/sides.mjs");
  const url = ${STUB ? '"stub"' : 'location.origin + "/json"'};
  window.__result = { times: await measured(url, { ky, packages, rounds: ${ROUNDS}, perWindow: ${PER_WINDOW}, warmUp: ${WARM_UP} }) };
} catch (e) {
  window.__result = { error: String(e?.stack ?? e) };
}
</script>`;

/** Each saferetry side's µs per call less the same side of BENCH_BEFORE's
 * package, paired by round: "median [quartiles]". */
function pairedDelta(times) {
  const out = {};
  for (const name of Object.keys(times)) {
    const before = times[`before: ${name}`];
    if (!name.startsWith("saferetry") || !before) continue;
    const d = times[name].map((us, round) => us - before[round]).sort((a, b) => a - b);
    const q = (f) => d[Math.floor(f * (d.length - 1))].toFixed(1);
    out[name] = `${median(d).toFixed(1)} [${q(0.25)}…${q(0.75)}]`;
  }
  return out;
}

function serve(req, res) {
  const url = new URL(req.url, "http://127.0.0.1");
  if (url.pathname === "/json") {
    res.writeHead(200, { "content-type": "application/json", "content-length": BODY.length });
    return res.end(BODY);
  }
  if (url.pathname === "/") {
    res.writeHead(200, { "content-type": "text/html" });
    return res.end(page());
  }
  const prefix = Object.keys(ROOTS).find((p) => url.pathname.startsWith(p));
  if (!prefix) {
    res.writeHead(404);
    return res.end();
  }
  serveStatic(res, ROOTS[prefix], url.pathname.slice(prefix.length));
}

/** Node, Deno or Bun: bench/runtimes-client.mjs in a child, its JSON line. */
function scriptRuntime(runtime, origin) {
  const client = path.join(REPO, "bench/runtimes-client.mjs");
  const entries = [NOW, BEFORE].filter(Boolean).map((dir) => pathToFileURL(path.join(dir, "src/node.js")).href);
  const rest = [client, STUB ? "stub" : `${origin}/json`, pathToFileURL(path.join(KY, "index.js")).href, ROUNDS, PER_WINDOW, WARM_UP, ...entries].map(String);
  const [bin, args] = {
    node: [process.execPath, rest],
    deno: [path.join(BIN, "deno"), ["run", "--no-prompt", "--allow-net=127.0.0.1", `--allow-read=${[REPO, NOW, BEFORE].filter(Boolean).join(",")}`, "--no-lock", "--no-config", ...rest]],
    bun: [path.join(BIN, "bun"), ["run", ...rest]],
  }[runtime];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: REPO, env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1" }, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      const line = out.trim().split("\n").pop();
      if (code !== 0 || !line) return reject(new Error(`${runtime}: exit ${code}`));
      resolve(JSON.parse(line));
    });
  });
}

async function browser(runtime, origin) {
  const { runPage } = await import("../tests/browsers/run-page.mjs");
  const { result, browserVersion } = await runPage({ browser: runtime, url: `${origin}/`, timeoutMs: 300_000 });
  if (result.error) throw new Error(`${runtime}: ${result.error}`);
  return { ...result, version: browserVersion };
}

const server = http.createServer(serve);
server.keepAliveTimeout = 60_000;
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const origin = `http://127.0.0.1:${server.address().port}`;
const results = {};
const paired = {};
try {
  for (const runtime of RUNTIMES) {
    if (!ALL.includes(runtime)) throw new Error(`RUNTIMES: ${runtime} is not one of ${ALL.join(", ")}`);
    const t0 = Date.now();
    const { times, version } = ["node", "deno", "bun"].includes(runtime) ? await scriptRuntime(runtime, origin) : await browser(runtime, origin);
    results[runtime] = { version, ...ratios(times) };
    if (BEFORE) paired[runtime] = pairedDelta(times);
    console.error(`${runtime}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
} finally {
  server.close();
  server.closeAllConnections();
}

const x = (r, raw) => (!r ? "—" : STUB ? (r.us - raw.us).toFixed(1) : r.ratio.toFixed(2));
const COLUMNS = ["floor stream", "floor", "ky", 'saferetry "stream"', 'saferetry "buffer"', 'saferetry "auto"'];
if (BEFORE) COLUMNS.push('before: saferetry "stream"', 'before: saferetry "buffer"', 'before: saferetry "auto"');
const how = STUB ? "`fetch` stubbed: µs per call over raw fetch's" : "× raw fetch's, loopback server in another process";
console.log(`\n## A successful call beside fetch, in each runtime (bench/runtimes.mjs: median window of ${PER_WINDOW} sequential GETs, ${how}, ${ROUNDS} interleaved rounds)\n`);
for (const signal of ["", " + signal"]) {
  console.log(`${signal ? `With a caller's signal (${STUB ? "over" : "×"} raw fetch's without one)` : "Without a signal"}:\n`);
  console.log(`| runtime | raw fetch, µs per call | raw fetch${signal} | ${COLUMNS.map((c) => c + signal).join(" | ")} |`);
  console.log(`|---|---:|---:|${COLUMNS.map(() => "---:").join("|")}|`);
  for (const [runtime, r] of Object.entries(results)) {
    console.log(`| ${runtime} | ${r["raw fetch"].us.toFixed(0)} | ${x(r["raw fetch" + signal], r["raw fetch"])} | ${COLUMNS.map((c) => x(r[c + signal], r["raw fetch"])).join(" | ")} |`);
  }
  console.log();
}
if (BEFORE) {
  const sides = Object.keys(Object.values(paired)[0] ?? {});
  console.log("This package − BENCH_BEFORE's, µs per call: the median of each round's difference (the two sides' windows in the same round) [its quartiles]:\n");
  console.log(`| runtime | ${sides.join(" | ")} |\n|---|${sides.map(() => "---:").join("|")}|`);
  for (const [runtime, d] of Object.entries(paired)) console.log(`| ${runtime} | ${sides.map((k) => d[k]).join(" | ")} |`);
  console.log();
}
if (process.env.RUNTIMES_JSON) writeFileSync(process.env.RUNTIMES_JSON, JSON.stringify(results, null, 2));
