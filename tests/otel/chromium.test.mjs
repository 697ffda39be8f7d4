// saferetry/otel in Chromium (Debian's, through playwright-core): the page
// tests/otel/page.mjs, bundled with esbuild, served from 127.0.0.1 with the
// wasm beside it; sdk-trace-web, sdk-metrics, instrumentation-fetch.
//   node --test tests/otel/chromium.test.mjs      (after scripts/build.sh)
//   CHROMIUM=/path/to/chromium                   another Chromium binary
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { startServer } from "./server.mjs";
import { CHECKS } from "./cases.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../..");
const OUT = path.join(REPO, "test-output/otel");
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const CLIENT = 2; // SpanKind.CLIENT
let server, browser, page;

before(async () => {
  mkdirSync(OUT, { recursive: true });
  await build({ entryPoints: [path.join(HERE, "page.mjs")], bundle: true, format: "esm", platform: "browser", outfile: path.join(OUT, "page.js"), logLevel: "warning" });
  const html = path.join(OUT, "index.html");
  (await import("node:fs")).writeFileSync(html, '<!doctype html><script type="module" src="/page.js"></script>');
  server = await startServer({ files: { "/": html, "/page.js": path.join(OUT, "page.js"), "/saferetry_web_bg.wasm": path.join(REPO, "js/src/saferetry_web_bg.wasm") } });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: FLAGS, timeout: 30_000 });
  page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(server.origin + "/");
  await page.waitForFunction(() => globalThis.ready === true);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const run = async (name) => {
  const got = await page.evaluate((n) => globalThis.runCase(n), name);
  console.log(got.text);
  assert.equal(got.ops.length, 1, got.text);
  const [op] = got.ops;
  for (const c of got.children) assert.equal(c.traceId, op.traceId);
  const sum = (metric, where = {}) =>
    got.metrics
      .filter((p) => p.metric === metric && Object.entries(where).every(([k, v]) => p.attributes[k] === v))
      .reduce((n, p) => n + (typeof p.value === "number" ? p.value : p.value.sum), 0);
  return { ...got, op, sum };
};
const traceparents = (p) => server.seen.get(p).map((r) => r.traceparent);

for (const [name, title, check] of CHECKS) {
  test(`in a page, ${title}`, async () => check(await run(name), { origin: server.origin, traceparents, busyPath: "/busy-once/chromium" }));
}

test("in a page with instrumentation-fetch, by default its spans are the attempts: they nest under the operation span with the resend count, and its traceparent is sent", async () => {
  const { op, children } = await run("instrumented-fetch");
  assert.equal(op.attributes["saferetry.attempts"], 2);
  assert.equal(children.length, 2);
  for (const c of children) assert.equal(c.kind, CLIENT);
  assert.deepEqual(children.map((c) => c.attributes["http.response.status_code"]), [503, 200]);
  assert.deepEqual(children.map((c) => c.attributes["http.request.resend_count"]), [undefined, 1]);
  assert.deepEqual(traceparents("/busy-once/web-b"), children.map((c) => `00-${c.traceId}-${c.spanId}-01`));
});

test("in a page, a fetch started offline waits for the network, and that wait is an offline event on its span", async () => {
  await page.context().setOffline(true);
  try {
    await page.evaluate(() => globalThis.startOffline());
    await new Promise((r) => setTimeout(r, 400));
  } finally {
    await page.context().setOffline(false);
  }
  const { answer, op, children } = await run("offline");
  assert.equal(answer, "ok");
  assert.equal(children.length, 1, "one request, once back online");
  const wait = op.events.find((e) => e.attributes["saferetry.wait.cause"] === "offline");
  assert.ok(wait, JSON.stringify(op.events));
  assert.equal(wait.attributes["saferetry.attempt"], 1);
  assert.ok(wait.attributes["saferetry.wait_ms"] >= 300, `waited ${wait.attributes["saferetry.wait_ms"]} ms offline`);
});
