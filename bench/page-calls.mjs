// What a page's module costs per call, and the memory it holds, for one
// package or two side by side: `node bench/page-calls.mjs [js folder …]`
// (default: this checkout's js/, after `make build`; `PAGE_CALLS_ROUNDS`
// rounds, 5 by default, the folders in turn in each).
//
// The page's module (src/web.js's, `--features browser`) is built for
// bytes, with an allocator of its own (src/lib.rs), and runs in browsers,
// which print no per-call figures. So it runs here in Node, loaded by
// js/src/web.js, with Node's `process.versions.node` hidden while the
// policies are made (they apply a browser's rules: bench/page-module.mjs),
// each round in a fresh
// process, `fetch` stubbed (bench/stub.mjs's small JSON 200):
// - µs per successful call (20 000 in a row, the body read with `json()`);
// - µs per retried call (2 000: a 503 with `Retry-After: 0`, then the 200);
// - 20 bursts of 50 to 950 calls at once (every third call's first answer
//   a 503 with `Retry-After: 0`: it retries), the module's memory in
//   64 KiB pages after each, and the bursts' ms (each call's URL its own,
//   its path from 0 to 299 characters long): what its allocator holds
//   at a high-water mark and whether later bursts reuse it.
// Each row: the median of the rounds, and [lo–hi]; beside the first
// package, each round's difference to it (a process's JIT and this
// machine's load move a round's figures by ±20 %).
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ROUNDS = Number(process.env.PAGE_CALLS_ROUNDS ?? 5);

const SCRIPT = `
const { stubFetch } = await import(process.argv[2]);
const { pageFetch, browserPolicies } = await import(process.argv[3]);
const dir = process.argv[1] + "/src/";
let memory;
const Instance = WebAssembly.Instance;
WebAssembly.Instance = new Proxy(Instance, {
  construct(target, args) {
    const instance = new target(...args);
    if (instance.exports.memory && instance.exports.policy_execute) memory = instance.exports.memory;
    return instance;
  },
});
pageFetch();
await (await stubFetch()).text(); // Node's fetch classes loaded, before Node is hidden
const { RetryPolicy } = await import(dir + "web.js");
const busy = () => new Response("busy", { status: 503, headers: { "retry-after": "0" } });
let sent = 0;
const refused = new Set();
const once = (url) => url.endsWith("?busy") && !refused.has(url) && refused.add(url);
const noWait = { baseMs: 0, capMs: 0, quota: false, throttle: false };
const [policy, retrying, mixed] = browserPolicies(
  RetryPolicy,
  { fetch: stubFetch },
  { fetch: () => (sent++ % 2 === 0 ? Promise.resolve(busy()) : stubFetch()), ...noWait },
  { fetch: (url) => (once(url) ? Promise.resolve(busy()) : stubFetch()), ...noWait },
);
if (!memory) throw new Error("page-calls: the page's module was not instantiated");
const URL_ = "http://127.0.0.1:9/";
const timed = async (n, call) => {
  const t = performance.now();
  for (let i = 0; i < n; i++) await call();
  return ((performance.now() - t) * 1000) / n;
};
await timed(2000, async () => (await policy.fetch(URL_)).json());
const ok = await timed(20000, async () => (await policy.fetch(URL_)).json());
const before = sent;
const retried = await timed(2000, async () => (await retrying.fetch(URL_)).json());
if (sent - before !== 4000) throw new Error("page-calls: the retried calls sent " + (sent - before) + " requests, not 4000");
const pages = [];
const t = performance.now();
for (let burst = 0; burst < 20; burst++) {
  const n = 50 + ((burst * 137) % 901);
  const bodies = await Promise.all(Array.from({ length: n }, async (_, i) => (await mixed.fetch(URL_ + burst + "/" + i + "/" + "x".repeat(i % 300) + (i % 3 ? "" : "?busy"))).json()));
  if (bodies.some((b) => b.ok !== true)) throw new Error("page-calls: a burst's call did not end with the 200");
  pages.push(memory.buffer.byteLength / 65536);
}
const bursts = performance.now() - t;
console.log(JSON.stringify({ ok, retried, pages, bursts }));
`;

function once(jsDir) {
  const [stub, page] = ["stub.mjs", "page-module.mjs"].map((f) => path.join(REPO, "bench", f));
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", SCRIPT, jsDir, stub, page], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop());
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cell = (xs, digits) => `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}]`;

const dirs = process.argv.slice(2).map((d) => path.resolve(d));
if (!dirs.length) dirs.push(path.join(REPO, "js"));
const runs = dirs.map(() => []);
for (let round = 0; round < ROUNDS; round++) dirs.forEach((dir, i) => runs[i].push(once(dir)));

console.log(`the page's module in Node (a browser's rules, fetch stubbed), ${ROUNDS} rounds, median [lo–hi]:\n`);
console.log("| package | µs per successful call | µs per retried call (503, then 200) | pages after the first burst / the last | the 20 bursts, ms | − the first package, paired: µs per successful / retried call, bursts' ms |");
console.log("|---|---:|---:|---:|---:|---:|");
dirs.forEach((dir, i) => {
  const r = runs[i];
  const pick = (f) => r.map(f);
  // Each round's figure less the first package's in the same round.
  const paired = (f, digits) => cell(r.map((x, k) => f(x) - f(runs[0][k])), digits);
  const less = i ? `${paired((x) => x.ok, 1)} / ${paired((x) => x.retried, 1)}, ${paired((x) => x.bursts, 0)}` : "";
  console.log(
    `| ${path.relative(process.cwd(), dir) || "."} | ${cell(pick((x) => x.ok), 1)} | ${cell(pick((x) => x.retried), 1)} | ${median(pick((x) => x.pages[0]))} / ${median(pick((x) => x.pages.at(-1)))} | ${cell(pick((x) => x.bursts), 0)} | ${less} |`,
  );
});
