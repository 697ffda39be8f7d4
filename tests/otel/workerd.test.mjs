// saferetry/otel in workerd with @opentelemetry/api alone (tests/otel/worker.mjs),
// built by Wrangler against js/, against tests/otel/server.mjs on 127.0.0.1.
//   node --test tests/otel/workerd.test.mjs      (after scripts/build.sh)
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { start, stop, workerdPort, wranglerWorker } from "../runtimes/procs.mjs";
import { startServer } from "./server.mjs";
import { SECRETS } from "./tree.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../..");
const DIR = path.join(REPO, "test-output/otel-workerd");
let server, workerd, base;

before(async () => {
  server = await startServer();
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(path.join(DIR, "node_modules/@opentelemetry"), { recursive: true });
  symlinkSync(path.join(REPO, "node_modules/@opentelemetry/api"), path.join(DIR, "node_modules/@opentelemetry/api"));
  wranglerWorker({ dir: DIR, source: readFileSync(path.join(HERE, "worker.mjs"), "utf8"), packageDir: path.join(REPO, "js"), compatibilityDate: "2025-06-01", bindings: { ORIGIN: server.origin } });
  workerd = start("workerd", path.join(REPO, "node_modules/.bin/workerd"), ["serve", "config.capnp", "--control-fd=3"], { cwd: DIR, extraFds: 1, echo: false });
  base = `http://127.0.0.1:${await workerdPort(workerd)}`;
});
after(async () => {
  if (workerd) await stop(workerd, 1000);
  await server?.close();
});

const run = async (name) => {
  const got = await (await fetch(`${base}/?case=${name}`, { signal: AbortSignal.timeout(20_000) })).json();
  const ops = got.spans.filter((s) => s.attributes["saferetry.policy"] === name);
  assert.equal(ops.length, 1, JSON.stringify(got.spans));
  const [op] = ops;
  const children = got.spans.filter((s) => s.parentId === op.spanId);
  for (const c of children) assert.equal(c.traceId, op.traceId);
  const sum = (metric, where = {}) => got.points.filter((p) => p.metric === metric && Object.entries(where).every(([k, v]) => p.attributes[k] === v)).reduce((n, p) => n + p.value, 0);
  return { ...got, op, children, sum };
};
const traceparents = (p) => server.seen.get(p).map((r) => r.traceparent);

test("in workerd, a success is an operation span with an attempt span whose traceparent the server received", async () => {
  const { op, children, sum } = await run("success");
  assert.equal(op.name, "saferetry.fetch GET");
  assert.equal(op.attributes["saferetry.stop_reason"], "succeeded");
  assert.equal(children.length, 1);
  assert.equal(traceparents("/ok").at(-1), `00-${children[0].traceId}-${children[0].spanId}-01`);
  assert.equal(sum("saferetry.client.attempts", { "saferetry.attempt.stage": "responded" }), 1);
  assert.equal(sum("saferetry.client.quota.level"), 500);
});

test("in workerd, a 503 with Retry-After then a success is two attempts, a retry-after wait event and a resend count", async () => {
  const { op, children, sum } = await run("retry-after");
  assert.equal(op.attributes["saferetry.attempts"], 2);
  assert.equal(op.events[0].attributes["saferetry.wait.cause"], "retry-after");
  assert.deepEqual(children.map((c) => c.attributes["http.request.resend_count"]), [undefined, 1]);
  assert.deepEqual(traceparents("/busy-once/workerd"), children.map((c) => `00-${c.traceId}-${c.spanId}-01`));
  assert.equal(sum("saferetry.client.operation.retries"), 1);
});

test("in workerd, a keyless POST that failed after sending stops at maybe-delivered as an error span", async () => {
  const { answer, op, sum } = await run("maybe-delivered");
  assert.equal(answer, "maybe-delivered");
  assert.equal(op.attributes["saferetry.stop_reason"], "maybe-delivered");
  assert.equal(op.status, 2);
  assert.equal(sum("saferetry.client.attempts", { "saferetry.attempt.stage": "maybe-delivered" }), 1);
});

test("in workerd, a cancelled run ends its span as cancelled, not as an error", async () => {
  const { answer, op } = await run("cancel");
  assert.equal(answer, "cancelled");
  assert.equal(op.attributes["saferetry.outcome"], "cancelled");
  assert.notEqual(op.status, 2);
});

test("in workerd, a try-later run carries its stop reason and retry time", async () => {
  const { answer, op } = await run("try-later");
  assert.equal(answer, "try-later");
  assert.equal(typeof op.attributes["saferetry.retry_at"], "number");
  assert.equal(op.status, 2);
});

test("in workerd, no credential, cookie, body or query value reaches a span or a metric point", async () => {
  const got = await run("redaction");
  assert.equal(got.op.attributes["url.full"], `${server.origin}/ok?token=REDACTED&page=REDACTED`);
  const text = JSON.stringify(got);
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${secret} leaked`);
});

test("in workerd, with the API alone and no provider, an instrumented policy answers as before", async () => {
  const got = await (await fetch(`${base}/?case=noop`)).json();
  assert.equal(got.answer, 200);
  assert.equal(got.spans.filter((s) => s.attributes["saferetry.policy"] === "noop").length, 0);
});
