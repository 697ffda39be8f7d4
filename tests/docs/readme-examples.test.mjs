// README.md's examples ("## Use"), run as written and checked against what
// each one's paragraph says: the seven fenced blocks are taken from the
// README itself, their `saferetry` imports pointed at the built package
// (js/, by its package.json exports) and their `/api/…` URLs at a loopback
// server this file starts, which answers a planned sequence of statuses
// and records every request. The Node examples run in a Node process of
// their own each (the GET first: the examples after it use its `policy`);
// the Worker and the shared budget are built by Wrangler and run in workerd
// (the budget's Durable Object too). Each runs as written, but for what it
// leaves to its reader, given here: `signal`, `body` and `show` (GIVEN);
// the outbox's store in Node, as its comment says; the shared budget's
// `env`, as a Worker's `fetch` has it; React's `useSyncExternalStore`
// (React is not a dependency: a stand-in that holds the store to the
// contract React checks, REACT below).
//   node --test tests/docs/readme-examples.test.mjs     (after scripts/build.sh)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { resolveExport, start, stop, workerdPort, wranglerWorker } from "../runtimes/procs.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const out = join(root, "test-output/readme-examples");
const pkg = join(root, "js");
const RUN_MS = 30_000; // bound on one example's process

/** The README's examples under "## Use": each fenced block with the bold
 * lead of the paragraph before it (`**A GET**` → "A GET"). */
export function examples(readme) {
  const lines = readme.split("\n");
  const from = lines.indexOf("## Use");
  const found = [];
  let lead = null;
  for (let i = from + 1; i < lines.length && !lines[i].startsWith("## "); i++) {
    const bold = lines[i].match(/^\*\*(.+?)\*\*/);
    if (bold) lead = bold[1].replace(/[.:]$/, "");
    const fence = lines[i].match(/^```(\w+)/);
    if (!fence) continue;
    const end = lines.indexOf("```", i + 1);
    found.push({ lead, lang: fence[1], code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return found;
}

const all = examples(readFileSync(join(root, "README.md"), "utf8"));
const example = (lead) => {
  const found = all.find((e) => e.lead === lead);
  assert.ok(found, `README.md "## Use" has an example led by **${lead}**: ${all.map((e) => e.lead).join(", ")}`);
  return found.code;
};

// ---------- the loopback server: planned statuses per path, every request recorded ----------
let server;
let base;
const plans = new Map(); // "/run/api/x" → statuses (0: drop the connection), the last one repeated
const seen = []; // { path, method, key, body }
before(async () => {
  server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const path = new URL(req.url, "http://x").pathname;
    seen.push({ path, method: req.method, key: req.headers["idempotency-key"] ?? null, body });
    const plan = plans.get(path) ?? [404];
    const status = plan.length > 1 ? plan.shift() : plan[0];
    if (status === 0) return req.socket.destroy(); // 0: the connection drops after the request was read
    res.writeHead(status, { "content-type": "application/json", ...(status === 503 ? { "retry-after": "0" } : {}) });
    res.end(JSON.stringify({ status }));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${server.address().port}`;
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
});
after(() => server?.close());

let runs = 0;
/** A fresh path prefix, with `plan` (path → statuses) in force under it. */
function run(plan) {
  const prefix = `/run${++runs}`;
  for (const [path, statuses] of Object.entries(plan)) plans.set(prefix + path, [...statuses]);
  return { url: base + prefix, requests: (path) => seen.filter((r) => r.path === prefix + path) };
}

/** `code` with its `saferetry` imports pointed at the built package (Node's conditions). */
function forNode(code) {
  return code.replace(/from "saferetry(\/[\w-]+)?"/g, (_, sub) => {
    const file = sub ? subpath(sub) : resolveExport(pkg, ["node", "default"]);
    return `from ${JSON.stringify(pathToFileURL(file).href)}`;
  });
}
/** `saferetry/<sub>`'s file for Node. */
function subpath(sub) {
  const target = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).exports[`.${sub}`];
  return join(pkg, typeof target === "string" ? target : target.node ?? target.default);
}

/** Runs `parts` (code) as one module in its own Node process, with the
 * example's `/api/` URLs under `url`; resolves with what it printed as its
 * result (`done(value)`). */
async function node(name, url, ...parts) {
  const file = join(out, `${name}.mjs`);
  const prelude = `const done = (v) => { console.log("RESULT " + JSON.stringify(v)); process.exit(0); };\n`;
  const code = prelude + parts.map(forNode).join("\n").replaceAll('"/api/', `"${url}/api/`);
  writeFileSync(file, code);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: out, timeout: RUN_MS }).catch((e) => {
    throw new Error(`${name} failed:\n${e.stderr || e.message}\n--- ${file}:\n${code}`);
  });
  const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
  assert.ok(line, `${name} printed no result:\n${stdout}`);
  return JSON.parse(line.slice(7));
}

// The names the examples leave to their reader.
const GIVEN = `const signal = AbortSignal.timeout(20_000);
const body = JSON.stringify({ amount: 42 });
const shown = [];
const show = (...args) => shown.push(args);
`;

test("README.md's Use section has the seven examples, each in a fenced js block", () => {
  assert.deepEqual(all.map((e) => e.lead), [
    "A GET", "A POST with an idempotency key", "`run()` in a UI", "A Cloudflare Worker",
    "A shared budget", "The outbox", "OpenTelemetry",
  ]);
  assert.deepEqual(all.filter((e) => !["js", "jsx"].includes(e.lang)), []);
});

test("the GET example: a 503 then a 200 is one retry, and reportOf tells both attempts", async () => {
  const r = run({ "/api/items": [503, 200] });
  const got = await node("get", r.url, GIVEN, example("A GET"),
    "done({ status: res.status, report: reportOf(res) });");
  assert.equal(got.status, 200);
  assert.equal(got.report.reason, "succeeded");
  assert.deepEqual(got.report.attempts.map((a) => a.status), [503, 200]);
  assert.equal(r.requests("/api/items").length, 2);
});

test("the POST example: with its key the POST is retried like a GET, the same key on every attempt; when retrying runs out, show() gets the reason", async () => {
  const ok = run({ "/api/items": [200], "/api/pay": [503, 200] });
  const got = await node("post", ok.url, GIVEN, example("A GET"), example("A POST with an idempotency key"), "done({ shown });");
  assert.deepEqual(got.shown, []);
  const pays = ok.requests("/api/pay");
  assert.equal(pays.length, 2, "retried once");
  assert.ok(pays[0].key && pays.every((p) => p.key === pays[0].key), `one key on every attempt: ${pays.map((p) => p.key)}`);
  assert.ok(pays.every((p) => p.method === "POST" && p.body === JSON.stringify({ amount: 42 })));

  // No response at all (policy.fetch resolves with any final response, as fetch does)
  const down = run({ "/api/items": [200], "/api/pay": [0] });
  const failed = await node("post-down", down.url, GIVEN, example("A GET"), example("A POST with an idempotency key"), "done({ shown });");
  assert.equal(failed.shown.length, 1, JSON.stringify(failed.shown));
  assert.equal(failed.shown[0][0], "attempts-exhausted");
  assert.equal(down.requests("/api/pay").length, 3, "keyed: retried after each drop, up to maxAttempts: 3");
});

// React's contract for useSyncExternalStore, which React itself checks:
// subscribe and getSnapshot are called unbound; getSnapshot returns the
// same value while nothing changed (else React renders forever); a change
// is announced through the listener. Returns the snapshot, and keeps every
// state announced in `states`.
const REACT = `const states = [];
function useSyncExternalStore(subscribe, getSnapshot) {
  const snapshot = getSnapshot();
  if (!Object.is(snapshot, getSnapshot())) throw new Error("getSnapshot answered a new value with nothing changed");
  subscribe(() => {
    const next = getSnapshot();
    if (!Object.is(next, getSnapshot())) throw new Error("getSnapshot answered a new value with nothing changed");
    states.push(next.state);
  });
  return snapshot;
}
`;

test("the run() example: an external store React can hold, requesting then waiting then succeeded, and a result that never rejects", async () => {
  const r = run({ "/api/items": [200, 503, 200] }); // the GET example's call takes the first 200
  const got = await node("run", r.url, GIVEN, REACT, example("A GET"), example("`run()` in a UI"),
    "done({ first: state.state, states, kind: outcome.kind, reason: outcome.reason, message: outcome.message });");
  assert.equal(got.first, "requesting");
  assert.deepEqual(got.states, ["waiting", "requesting", "succeeded"]);
  assert.equal(got.kind, "succeeded");
  assert.equal(got.reason, "succeeded");
  assert.equal(r.requests("/api/items").length, 3);
});

test("the outbox example: a write that ends try-later is kept, with the key it was sent with, and sent again once the server is back", async () => {
  const r = run({ "/api/items": [200], "/api/orders": [503, 503, 503, 200] });
  // As its comment says for Node: a fileStore.
  const code = example("The outbox")
    .replace('import { outbox } from "saferetry";', 'import { outbox, fileStore } from "saferetry";')
    .replace("{ ttl: 24 * 3600_000 }", '{ ttl: 24 * 3600_000, store: fileStore("./outbox-store") }');
  assert.notEqual(code, example("The outbox"), "the outbox example still opens an outbox with { ttl } and imports outbox");
  rmSync(join(out, "outbox-store"), { recursive: true, force: true });
  const got = await node("outbox", r.url, GIVEN, example("A GET"), code,
    `const kept = r.kept, pending = await box.pending();
     let sent = null;
     box.addEventListener("sent", () => { sent = true; });
     for (let i = 0; i < 100 && !sent; i++) { await new Promise((ok) => setTimeout(ok, 100)); await box.flush(); }
     done({ kept, retryAt: r.retryAt, pending: pending.length, sent, left: (await box.pending()).length });`);
  assert.equal(got.kept, true);
  assert.equal(typeof got.retryAt, "number");
  assert.equal(got.pending, 1);
  assert.equal(got.sent, true, "sent again once the server answered");
  assert.equal(got.left, 0);
  const orders = r.requests("/api/orders");
  assert.ok(orders.length >= 4, `3 attempts, then the re-send: ${orders.length}`);
  assert.ok(orders.every((o) => o.key === orders[0].key && o.key), "the key it was kept with");
});

test("the OpenTelemetry example: one span per operation and one per request, with the global tracer provider", async () => {
  const r = run({ "/api/items": [503, 200] });
  // (test-output/ is inside the repository: its node_modules resolve the SDK)
  const provider = `import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
`;
  // The GET's policy (its import and its policy), instrumented, then its call.
  const policy = example("A GET").split("\n").filter((l) => /^(import|const policy)/.test(l)).join("\n");
  const got = await node("otel", r.url, GIVEN, provider, policy,
    example("OpenTelemetry"),
    `const res = await policy.fetch("/api/items");
     await res.arrayBuffer();
     const spans = exporter.getFinishedSpans();
     done(spans.map((s) => ({ id: s.spanContext().spanId, parent: s.parentSpanContext?.spanId ?? null, kind: s.kind, attempt: "saferetry.attempt" in s.attributes, operation: "saferetry.operation" in s.attributes })));`);
  const ops = got.filter((s) => s.operation);
  assert.equal(ops.length, 1, JSON.stringify(got));
  const requests = got.filter((s) => s.parent === ops[0].id && s.kind === 2);
  assert.equal(requests.length, 2, `one CLIENT span per request: ${JSON.stringify(got)}`);
});

// ---------- workerd ----------
const COMPAT_DATE = "2025-06-01";

async function workerd(name, source, { bindings = {}, wranglerJsonc, config } = {}) {
  const dir = join(out, name);
  mkdirSync(dir, { recursive: true });
  wranglerWorker({ dir, source, packageDir: pkg, compatibilityDate: COMPAT_DATE, bindings, wranglerJsonc });
  if (config) writeFileSync(join(dir, "config.capnp"), config(readFileSync(join(dir, "config.capnp"), "utf8")));
  const p = start(name, join(root, "node_modules/.bin/workerd"), ["serve", join(dir, "config.capnp"), "--socket-addr", "http=127.0.0.1:0", "--control-fd=3"], { extraFds: 1, echo: false });
  const port = await workerdPort(p);
  return { url: `http://127.0.0.1:${port}`, close: () => stop(p) };
}

test("the Worker example, built by Wrangler, in workerd: its module-scope policy retries the upstream's 503", async () => {
  plans.set("/items", [503, 200]); // new URL("/items", UPSTREAM): the upstream's root
  const w = await workerd("worker", example("A Cloudflare Worker"), { bindings: { UPSTREAM: base } });
  try {
    const res = await fetch(w.url, { signal: AbortSignal.timeout(RUN_MS) });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 200 });
  } finally {
    await w.close();
  }
  assert.equal(seen.filter((q) => q.path === "/items").length, 2);
});

test("the shared budget example, built by Wrangler, in workerd: its quota and rate become the Durable Object's, which grants the policy's requests", async () => {
  const code = example("A shared budget");
  const imports = code.split("\n").filter((l) => l.startsWith("import "));
  const rest = code.split("\n").filter((l) => !l.startsWith("import ")).join("\n    ");
  // The example as a Worker's body: `env` is the request's; the class exported as docs/fleet-budgets.md says.
  const source = `${imports.join("\n")}
export { RetryBudget } from "saferetry/cloudflare";
export default {
  async fetch(request, env) {
    ${rest}
    const res = await policy.fetch(new URL("/budget", env.UPSTREAM));
    const ns = env.RETRY_BUDGET;
    const budget = await ns.get(ns.idFromName("api.example.com")).stats();
    return Response.json({ status: res.status, budget, policy: policy.stats() });
  },
};
`;
  const wranglerJsonc = JSON.stringify({
    name: "readme-budget", main: "main.mjs", compatibility_date: COMPAT_DATE,
    durable_objects: { bindings: [{ name: "RETRY_BUDGET", class_name: "RetryBudget" }] },
    migrations: [{ tag: "v1", new_classes: ["RetryBudget"] }],
  });
  const config = (text) => text
    .replace("bindings = [", 'bindings = [(name = "RETRY_BUDGET", durableObjectNamespace = "RetryBudget"), ')
    .replace('globalOutbound = "internet",', 'globalOutbound = "internet",\n  durableObjectNamespaces = [(className = "RetryBudget", uniqueKey = "saferetry-readme-RetryBudget")],\n  durableObjectStorage = (inMemory = void),');
  plans.set("/budget", [200]);
  const w = await workerd("budget", source, { bindings: { UPSTREAM: base }, wranglerJsonc, config });
  let got;
  try {
    // The policy asks the object in the background: a few calls, bounded, until it has.
    for (let i = 0; i < 20 && !(got?.budget.requests > 0); i++) {
      const res = await fetch(w.url, { signal: AbortSignal.timeout(RUN_MS) });
      assert.equal(res.status, 200, await res.clone().text());
      got = await res.json();
    }
  } finally {
    await w.close();
  }
  assert.equal(got.status, 200);
  assert.ok(got.budget.requests > 0, `the object granted: ${JSON.stringify(got.budget)}`);
  assert.equal(got.budget.config?.quota?.capacity, 500, JSON.stringify(got.budget.config));
  assert.equal(got.budget.config?.rate?.requests, 100, JSON.stringify(got.budget.config));
});
