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
import { CHECKS } from "./cases.mjs";

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
  const ops = got.spans.filter((s) => s.attributes["saferetry.policy"] === name && "saferetry.operation" in s.attributes);
  assert.equal(ops.length, 1, JSON.stringify(got.spans));
  const [op] = ops;
  const children = got.spans.filter((s) => s.parentId === op.spanId);
  for (const c of children) assert.equal(c.traceId, op.traceId);
  const sum = (metric, where = {}) => got.points.filter((p) => p.metric === metric && Object.entries(where).every(([k, v]) => p.attributes[k] === v)).reduce((n, p) => n + p.value, 0);
  return { ...got, op, children, sum };
};
const traceparents = (p) => server.seen.get(p).map((r) => r.traceparent);

for (const [name, title, check] of CHECKS) {
  test(`in workerd, ${title}`, async () => check(await run(name), { origin: server.origin, traceparents, busyPath: "/busy-once/workerd" }));
}

test("in workerd, the quota level is a gauge point", async () => {
  const { sum } = await run("success");
  assert.equal(sum("saferetry.client.quota.level"), 500);
});

test("in workerd, with the API alone and no provider, an instrumented policy answers as before", async () => {
  const got = await (await fetch(`${base}/?case=noop`)).json();
  assert.equal(got.answer, 200);
  assert.equal(got.spans.filter((s) => s.attributes["saferetry.policy"] === "noop").length, 0);
});
