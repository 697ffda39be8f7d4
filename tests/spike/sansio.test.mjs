// The sans-IO spike (issue 19 item 4; src/sansio, spike/) against a real
// loopback server in Node: the cases its figures in BENCHMARKS.md stand on.
// Needs `SANSIO=1 scripts/build.sh`. Run: node --test tests/spike/
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { getEventListeners } from "node:events";
import { RetryPolicy, RetryError, reportOf } from "../../spike/src/node.js";

// Each path's behaviour per request number (1-based), and who came.
const seen = new Map();
let held = null;
const closedEarly = new Map();
const routes = {
  "/ok": (n, req, res) => json(res, 200, { ok: true }),
  "/503-then-ok": (n, req, res) => (n === 1 ? json(res, 503, {}, { "retry-after": "1" }) : json(res, 200, { n })),
  "/429-reset-after-then-ok": (n, req, res) =>
    n === 1 ? json(res, 429, {}, { "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": "1" }) : json(res, 200, { n }),
  "/reset-then-ok": (n, req, res) => (n === 1 ? req.socket.destroy() : json(res, 200, { n })),
  "/reset": (n, req) => req.socket.destroy(),
  "/slow-then-ok": (n, req, res) => (n === 1 ? setTimeout(() => json(res, 200, { late: true }), 1500) : json(res, 200, { n })),
  "/slow": (n, req, res) => setTimeout(() => json(res, 200, { late: true }), 1500),
  "/503-wait-long": (n, req, res) => json(res, 503, {}, { "retry-after": "10" }),
  "/404": (n, req, res) => json(res, 404, { missing: true }),
  "/500-then-stream": (n, req, res) => {
    if (n === 1) return json(res, 500, {});
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("first;");
    held = res; // ended by the test, once it holds the response
  },
  "/endless": (n, req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("start;");
  },
};

function json(res, status, body, headers = {}) {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  const n = (seen.get(path) ?? 0) + 1;
  seen.set(path, n);
  res.on("close", () => {
    if (!res.writableEnded) closedEarly.set(path, (closedEarly.get(path) ?? 0) + 1);
  });
  req.resume();
  req.on("end", () => routes[path](n, req, res));
});
let base;
before(async () => {
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const fast = { baseMs: 1, capMs: 5, random: () => 0 };

test("a successful GET resolves with the buffered response after one request, and its report says so", async () => {
  const res = await new RetryPolicy().fetch(`${base}/ok`);
  assert.equal(res.status, 200);
  assert.equal(res.url, `${base}/ok`);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), { ok: true });
  assert.equal(seen.get("/ok"), 1);
  const report = reportOf(res);
  assert.equal(report.reason, "succeeded");
  assert.equal(report.attempts.length, 1);
  assert.equal(report.attempts[0].status, 200);
  assert.equal(report.responseBody, "buffer");
});

test("a 503 with Retry-After: 1 waits the server's second, then the retry succeeds", async () => {
  const t0 = Date.now();
  const res = await new RetryPolicy({ ...fast, totalMs: 5000 }).fetch(`${base}/503-then-ok`);
  const took = Date.now() - t0;
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { n: 2 });
  assert.ok(took >= 1000 && took < 4000, `took ${took} ms`);
  const [first, second] = reportOf(res).attempts;
  assert.equal(first.status, 503);
  assert.equal(first.retryAfterMs, 1000);
  assert.equal(first.waitKind, "retry-after");
  assert.ok(first.plannedWaitMs >= 1000);
  assert.equal(second.status, 200);
});

test("a 429 whose X-RateLimit-Reset-After says 1 s waits at least that long before the retry", async () => {
  const t0 = Date.now();
  const res = await new RetryPolicy({ ...fast, totalMs: 5000 }).fetch(`${base}/429-reset-after-then-ok`);
  assert.equal(res.status, 200);
  assert.ok(Date.now() - t0 >= 1000);
  const [first] = reportOf(res).attempts;
  assert.equal(first.floorHeader, "x-ratelimit-reset-after");
  assert.ok(first.plannedWaitMs >= 1000);
});

test("a GET whose connection breaks is retried and succeeds", async () => {
  const res = await new RetryPolicy(fast).fetch(`${base}/reset-then-ok`);
  assert.equal(res.status, 200);
  assert.equal(seen.get("/reset-then-ok"), 2);
  const [first] = reportOf(res).attempts;
  assert.equal(first.error.stage, "maybe-delivered");
  assert.equal(first.error.code, "UND_ERR_SOCKET");
});

test("a POST without a key is not sent again after a maybe-delivered failure", async () => {
  const error = await new RetryPolicy(fast).fetch(`${base}/reset`, { method: "POST", body: "pay" }).catch((e) => e);
  assert.ok(error instanceof RetryError && error instanceof TypeError);
  assert.equal(error.reason, "maybe-delivered");
  assert.equal(error.report.attempts.length, 1);
  assert.equal(error.cause?.cause?.code, "UND_ERR_SOCKET", "the host's own error is the cause");
  assert.equal(seen.get("/reset"), 1);
});

test("a POST refused at connect (not sent) is retried up to maxAttempts", async () => {
  const closed = http.createServer();
  await new Promise((r) => closed.listen(0, "127.0.0.1", r));
  const port = closed.address().port;
  await new Promise((r) => closed.close(r));
  const error = await new RetryPolicy({ ...fast, maxAttempts: 3 })
    .fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "x" })
    .catch((e) => e);
  assert.equal(error.reason, "attempts-exhausted");
  assert.equal(error.report.attempts.length, 3);
  assert.ok(error.report.attempts.every((a) => a.error.stage === "not-sent" && a.error.code === "ECONNREFUSED"));
});

test("an attempt slower than attemptMs is aborted and retried; the retry succeeds", async () => {
  const t0 = Date.now();
  const res = await new RetryPolicy({ ...fast, attemptMs: 200 }).fetch(`${base}/slow-then-ok`);
  assert.equal(res.status, 200);
  assert.ok(Date.now() - t0 < 1500, "did not wait for the slow answer");
  const [first] = reportOf(res).attempts;
  assert.equal(first.error.code, "attempt-timeout");
  await waitFor(() => closedEarly.get("/slow-then-ok") === 1, "the slow request's connection was closed");
});

test("the total deadline ends the operation with reason deadline, and the request is aborted", async () => {
  const t0 = Date.now();
  const error = await new RetryPolicy({ ...fast, totalMs: 300, attemptMs: 5000 }).fetch(`${base}/slow`).catch((e) => e);
  const took = Date.now() - t0;
  assert.equal(error.reason, "deadline");
  assert.ok(took >= 290 && took < 1400, `took ${took} ms`);
  await waitFor(() => (closedEarly.get("/slow") ?? 0) >= 1, "the request's connection was closed");
});

test("the caller's abort during an attempt rejects with its reason at once and releases the listener", async () => {
  const controller = new AbortController();
  const reason = new Error("user left");
  setTimeout(() => controller.abort(reason), 100);
  const before = closedEarly.get("/slow") ?? 0;
  const t0 = Date.now();
  const error = await new RetryPolicy(fast).fetch(`${base}/slow`, { signal: controller.signal }).catch((e) => e);
  assert.equal(error, reason);
  assert.ok(Date.now() - t0 < 1000);
  assert.equal(getEventListeners(controller.signal, "abort").length, 0);
  await waitFor(() => (closedEarly.get("/slow") ?? 0) === before + 1, "the request's connection was closed");
});

test("the caller's abort during a wait rejects at once and sends nothing more", async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 150);
  const t0 = Date.now();
  const error = await new RetryPolicy({ ...fast, totalMs: 60_000 })
    .fetch(`${base}/503-wait-long`, { signal: controller.signal })
    .catch((e) => e);
  assert.equal(error.name, "AbortError");
  assert.ok(Date.now() - t0 < 1000);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(seen.get("/503-wait-long"), 1);
});

test("a signal that aborted before the call sends no request", async () => {
  const before = seen.get("/ok");
  const error = await new RetryPolicy().fetch(`${base}/ok`, { signal: AbortSignal.abort() }).catch((e) => e);
  assert.equal(error.name, "AbortError");
  assert.equal(seen.get("/ok"), before);
});

test("a 404 is not retried: the response itself is the answer", async () => {
  const res = await new RetryPolicy(fast).fetch(`${base}/404`);
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), { missing: true });
  assert.equal(reportOf(res).reason, "http-stop");
  assert.equal(seen.get("/404"), 1);
});

test('"stream" hands over the host\'s own response as its headers arrive, after retrying a 500', async () => {
  const res = await new RetryPolicy({ ...fast, responseBody: "stream" }).fetch(`${base}/500-then-stream`);
  assert.ok(held && !held.writableEnded, "resolved while the body was still open");
  held.end("second");
  assert.equal(res.status, 200);
  assert.equal(reportOf(res).responseBody, "stream");
  assert.equal(await res.text(), "first;second");
  assert.equal(seen.get("/500-then-stream"), 2);
});

test('"stream": the caller\'s abort after the hand-over still ends the body, and no listener of ours is left', async () => {
  const controller = new AbortController();
  const res = await new RetryPolicy({ responseBody: "stream" }).fetch(`${base}/endless`, { signal: controller.signal });
  assert.equal(getEventListeners(controller.signal, "abort").length, 0);
  const reader = res.body.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "start;");
  const reason = new Error("user left");
  controller.abort(reason);
  await assert.rejects(reader.read());
  await waitFor(() => (closedEarly.get("/endless") ?? 0) === 1, "the response's connection was closed");
});

test("bad options throw a RangeError or TypeError naming the field and what it accepts, and the module works after", () => {
  for (const [field, value] of [["maxAttempts", 0], ["totalMs", -1], ["baseMs", 1.5], ["attemptMs", NaN]]) {
    assert.throws(() => new RetryPolicy({ [field]: value }), (e) => e instanceof RangeError && e.message.includes(`\`${field}\``) && e.message.includes(".."));
  }
  assert.throws(() => new RetryPolicy({ responseBody: "later" }), (e) => e instanceof TypeError && e.message.includes("`responseBody`"));
  return new RetryPolicy().fetch(`${base}/ok`).then((res) => assert.equal(res.status, 200));
});

async function waitFor(check, what) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(check(), what);
}
