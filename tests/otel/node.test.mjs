// saferetry/otel in Node with the real SDKs: sdk-trace-base and sdk-metrics
// (in-memory), context-async-hooks, the W3C propagator, and
// instrumentation-undici for the "instrumented fetch" cases. Every request
// goes to tests/otel/server.mjs on 127.0.0.1.
//   node --test tests/otel/node.test.mjs      (after scripts/build.sh)
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { memoryStore, outbox, reportOf, RetryError, RetryPolicy } from "../../js/src/node.js";
import { instrument, resendAttributes } from "../../js/src/otel.js";
import { startServer } from "./server.mjs";
import { render, SECRETS } from "./tree.mjs";

class Reader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
let server;
let undici;

before(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  server = await startServer();
});
after(async () => {
  undici?.disable();
  await server.close();
});

const id = (s) => s.spanContext().spanId;
/** The operation spans of policy `name` (its attempt spans name it too), in the order they ended. */
const opsOf = (name) => exporter.getFinishedSpans().filter((s) => s.attributes["saferetry.policy"] === name && "saferetry.operation" in s.attributes);
/** The operation span of policy `name` and its children, oldest first. */
function tree(name) {
  const spans = exporter.getFinishedSpans();
  const ops = opsOf(name);
  assert.equal(ops.length, 1, `one operation span for ${name}: ${ops.map((s) => s.name)}`);
  const [op] = ops;
  const children = spans.filter((s) => s.parentSpanContext?.spanId === id(op));
  children.sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  for (const c of children) assert.equal(c.spanContext().traceId, op.spanContext().traceId);
  return { op, children, text: render([op, ...children]) };
}

/** The data points of metric `metric` for policy `name`. */
async function points(metric, name) {
  const { resourceMetrics } = await reader.collect();
  const found = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === metric);
  return found.flatMap((m) => m.dataPoints).filter((p) => p.attributes["saferetry.policy"] === name);
}
const sumOf = async (metric, name, where = {}) => {
  const ps = (await points(metric, name)).filter((p) => Object.entries(where).every(([k, v]) => p.attributes[k] === v));
  return ps.reduce((n, p) => n + (typeof p.value === "number" ? p.value : p.value.sum), 0);
};
const countOf = async (metric, name, where = {}) => {
  const ps = (await points(metric, name)).filter((p) => Object.entries(where).every(([k, v]) => p.attributes[k] === v));
  return ps.reduce((n, p) => n + p.value.count, 0);
};

function policy(name, options = {}, instrumentOptions = {}) {
  const p = new RetryPolicy({ baseMs: 10, capMs: 20, ...options });
  instrument(p, { tracerProvider, meterProvider, name, ...instrumentOptions });
  return p;
}

describe("each attempt a span of its own (no instrumented fetch)", () => {
  test("a success is one operation span with one attempt span under it, whose traceparent the server received", async () => {
    const p = policy("success");
    const response = await p.fetch(`${server.origin}/ok`);
    assert.equal(await response.text(), "ok");
    const { op, children, text } = tree("success");
    console.log(text);
    assert.equal(op.name, "saferetry.fetch GET");
    assert.equal(op.kind, SpanKind.INTERNAL);
    assert.equal(op.attributes["http.request.method"], "GET");
    assert.equal(op.attributes["url.full"], `${server.origin}/ok`);
    assert.equal(op.attributes["server.address"], "127.0.0.1");
    assert.equal(op.attributes["server.port"], Number(new URL(server.origin).port));
    assert.equal(op.attributes["saferetry.stop_reason"], "succeeded");
    assert.equal(op.attributes["saferetry.attempts"], 1);
    assert.equal(op.attributes["http.response.status_code"], 200);
    assert.equal(op.status.code, SpanStatusCode.UNSET);
    assert.equal(children.length, 1);
    const [attempt] = children;
    assert.equal(attempt.name, "GET");
    assert.equal(attempt.kind, SpanKind.CLIENT);
    assert.equal(attempt.attributes["http.response.status_code"], 200);
    assert.equal(attempt.attributes["http.request.resend_count"], undefined);
    assert.equal(attempt.attributes["saferetry.policy"], "success", "the attempt span names its policy, as the operation's does");
    const sent = server.seen.get("/ok").at(-1).traceparent;
    assert.equal(sent, `00-${attempt.spanContext().traceId}-${id(attempt)}-01`);
    assert.equal(await sumOf("saferetry.client.attempts", "success", { "saferetry.attempt.stage": "responded" }), 1);
    assert.equal(await countOf("saferetry.client.operation.retries", "success"), 1);
    assert.equal(await sumOf("saferetry.client.operation.retries", "success"), 0);
    assert.equal(await countOf("saferetry.client.operation.duration", "success", { "saferetry.stop_reason": "succeeded" }), 1);
    const [level] = await points("saferetry.client.quota.level", "success");
    assert.equal(level.value, 500);
  });

  test("a 503 with Retry-After then a success shows the wait as an event and the resend's count on the second attempt", async () => {
    const p = policy("retry-after");
    const response = await p.fetch(`${server.origin}/busy-once/a`);
    assert.equal(response.status, 200);
    const { op, children, text } = tree("retry-after");
    console.log(text);
    assert.equal(op.attributes["saferetry.attempts"], 2);
    assert.equal(op.attributes["saferetry.stop_reason"], "succeeded");
    assert.ok(op.attributes["saferetry.wait_ms"] >= 1000, `wait_ms ${op.attributes["saferetry.wait_ms"]}`);
    const waits = op.events.filter((e) => e.name === "saferetry.wait");
    assert.equal(waits.length, 1);
    assert.equal(waits[0].attributes["saferetry.wait.cause"], "retry-after");
    assert.equal(waits[0].attributes["saferetry.retry_after_ms"], 1000);
    assert.equal(waits[0].attributes["saferetry.attempt"], 2);
    assert.deepEqual(children.map((c) => c.attributes["http.response.status_code"]), [503, 200]);
    assert.deepEqual(children.map((c) => c.attributes["http.request.resend_count"]), [undefined, 1]);
    const sent = server.seen.get("/busy-once/a").map((r) => r.traceparent);
    assert.deepEqual(sent, children.map((c) => `00-${c.spanContext().traceId}-${id(c)}-01`));
    assert.equal(await sumOf("saferetry.client.operation.retries", "retry-after"), 1);
    assert.ok((await sumOf("saferetry.client.operation.retry_delay", "retry-after")) >= 1);
    assert.equal(await sumOf("saferetry.client.attempts", "retry-after", { "saferetry.attempt.stage": "responded" }), 2);
    const [level] = await points("saferetry.client.quota.level", "retry-after");
    assert.equal(level.value, p.stats().quotaLevel);
  });

  test("a keyless POST whose connection dropped after sending stops at maybe-delivered, as an error span", async () => {
    const p = policy("maybe-delivered");
    const error = await p.fetch(`${server.origin}/drop`, { method: "POST", body: "x" }).catch((e) => e);
    assert.ok(error instanceof RetryError, String(error));
    assert.equal(error.reason, "maybe-delivered");
    const { op, children, text } = tree("maybe-delivered");
    console.log(text);
    assert.equal(op.name, "saferetry.fetch POST");
    assert.equal(op.attributes["saferetry.stop_reason"], "maybe-delivered");
    assert.equal(op.attributes["error.type"], "maybe-delivered");
    assert.equal(op.attributes["saferetry.attempts"], 1);
    assert.equal(op.status.code, SpanStatusCode.ERROR);
    assert.equal(children.length, 1);
    assert.equal(children[0].attributes["error.type"], "TypeError");
    assert.equal(server.seen.get("/drop").length, 1);
    assert.equal(await sumOf("saferetry.client.attempts", "maybe-delivered", { "saferetry.attempt.stage": "maybe-delivered" }), 1);
    assert.equal(await countOf("saferetry.client.operation.duration", "maybe-delivered", { "saferetry.stop_reason": "maybe-delivered" }), 1);
  });

  test("a cancelled run ends its span as cancelled, not as an error", async () => {
    const p = policy("cancel");
    const op = p.run(`${server.origin}/hang`);
    for (let i = 0; i < 200 && !server.seen.get("/hang"); i++) await new Promise((r) => setTimeout(r, 10));
    op.cancel();
    const outcome = await op.result;
    assert.equal(outcome.kind, "cancelled");
    const { op: span, children, text } = tree("cancel");
    console.log(text);
    assert.equal(span.name, "saferetry.run GET");
    assert.equal(span.attributes["saferetry.outcome"], "cancelled");
    assert.equal(span.attributes["saferetry.stop_reason"], "cancelled");
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    assert.equal(children.length, 1);
    assert.equal(children[0].attributes["error.type"], "AbortError");
    assert.equal(await sumOf("saferetry.client.attempts", "cancel", { "saferetry.attempt.stage": "maybe-delivered" }), 1);
  });

  test("a try-later run carries its stop reason and retry time, with the wait it refused as nothing waited", async () => {
    const p = policy("try-later");
    const outcome = await p.run(`${server.origin}/later`).result;
    assert.equal(outcome.kind, "try-later");
    const { op, children, text } = tree("try-later");
    console.log(text);
    assert.equal(op.attributes["saferetry.outcome"], "try-later");
    assert.equal(op.attributes["saferetry.stop_reason"], outcome.reason);
    assert.equal(op.attributes["saferetry.retry_at"], outcome.retryAt);
    assert.equal(op.attributes["error.type"], outcome.reason);
    assert.equal(op.attributes["http.response.status_code"], 503);
    assert.equal(op.status.code, SpanStatusCode.ERROR);
    assert.equal(children.length, 1);
    assert.equal(await countOf("saferetry.client.operation.duration", "try-later", { "saferetry.outcome": "try-later", "saferetry.stop_reason": outcome.reason }), 1);
  });

  test("a throttled call is a try-later span with error.type throttled and no attempt, counted by saferetry.client.throttled", async () => {
    // One attempt per call; a draw of 0 rejects as soon as the window may (5 requests, none accepted).
    const p = policy("throttled", { maxAttempts: 1, random: () => 0 });
    const before = server.seen.get("/later")?.length ?? 0;
    for (let i = 0; i < 5; i++) assert.equal((await p.fetch(`${server.origin}/later`)).status, 503);
    const outcome = await p.run(`${server.origin}/later`).result;
    assert.equal(server.seen.get("/later").length - before, 5, "the throttled call sent nothing");
    assert.equal(outcome.kind, "try-later");
    assert.equal(outcome.reason, "throttled");
    assert.ok(outcome.retryAt >= Date.now() + 3_500_000, "never before the server's Retry-After: 3600");
    const op = opsOf("throttled").at(-1);
    console.log(render([op]));
    assert.equal(op.attributes["error.type"], "throttled");
    assert.equal(op.attributes["saferetry.stop_reason"], "throttled");
    assert.equal(op.attributes["saferetry.outcome"], "try-later");
    assert.equal(op.attributes["saferetry.attempts"], 0);
    assert.equal(op.attributes["saferetry.retry_at"], outcome.retryAt);
    assert.equal(op.status.code, SpanStatusCode.ERROR);
    assert.equal(await sumOf("saferetry.client.throttled", "throttled", { "saferetry.operation": "run" }), 1);
    assert.equal(await sumOf("saferetry.client.throttled", "throttled"), 1, "the five calls that went out are not counted");
  });

  test("no credential, cookie, body or query value reaches an attribute, an event or a metric point", async () => {
    const p = policy("redaction");
    const url = `${server.origin}/ok?token=s3cr3t-token&page=2#frag`;
    const init = { method: "POST", body: "body-SECRET-90", headers: { authorization: "Bearer tok-SECRET-1234", cookie: "sid=sid-SECRET-5678" } };
    await (await p.fetch(url, init)).text();
    const refused = await p.fetch(`http://user:pa55word@127.0.0.1:1/ok`).catch((e) => e);
    assert.ok(refused instanceof TypeError);
    const spans = opsOf("redaction");
    assert.equal(spans.length, 2);
    const all = exporter.getFinishedSpans().filter((s) => spans.some((o) => id(o) === id(s) || s.parentSpanContext?.spanId === id(o)));
    console.log(render(all));
    assert.equal(spans[0].attributes["url.full"], `${server.origin}/ok?token=REDACTED&page=REDACTED`);
    assert.equal(spans[1].attributes["url.full"], "http://REDACTED:REDACTED@127.0.0.1:1/ok");
    assert.equal(spans[1].attributes["saferetry.stop_reason"], "refused");
    const { resourceMetrics } = await reader.collect();
    const text = JSON.stringify({ spans: all.map((s) => ({ a: s.attributes, e: s.events, n: s.name })), resourceMetrics });
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `${secret} leaked`);
  });

  test("a poll is one operation span: the submit and each status request under it, its waits as poll events", async () => {
    const p = policy("poll");
    const op = p.poll(`${server.origin}/ok`, { method: "POST", body: "x" }, {
      status: `${server.origin}/busy-once/poll`,
      phases: [{ everyMs: 20 }],
      verdict: (r) => (r.status === 200 ? "done" : "pending"),
    });
    const outcome = await op.result;
    assert.equal(outcome.kind, "succeeded", outcome.message);
    const { op: span, children, text } = tree("poll");
    console.log(text);
    assert.equal(span.name, "saferetry.poll POST");
    assert.equal(span.attributes["saferetry.attempts"], 1);
    assert.ok(span.attributes["saferetry.polls"] >= 1);
    assert.ok(span.events.some((e) => e.attributes["saferetry.wait.cause"] === "poll" || e.attributes["saferetry.wait.cause"] === "retry-after"), text);
    assert.ok(children.length >= 2);
    assert.deepEqual(children.map((c) => c.attributes["http.request.resend_count"]).slice(0, 2), [undefined, 1]);
  });
  test("a shared budget's mode is a gauge: 1 for the mode in force, 0 for the others", async () => {
    const p = policy("fleet", { shared: { exchange: () => ({ unavailable: "no authority here" }) } });
    await (await p.fetch(`${server.origin}/ok`)).text();
    const mode = p.stats().shared.mode;
    const modes = Object.fromEntries((await points("saferetry.client.budget.mode", "fleet")).map((pt) => [pt.attributes["saferetry.budget.mode"], pt.value]));
    assert.deepEqual(modes, { local: 0, leased: 0, fallback: 0, [mode]: 1 });
    assert.equal(mode, "fallback");
    const { op } = tree("fleet");
    assert.equal(op.attributes["saferetry.budget.mode"], "fallback");
  });
});

/** What an operation span says happened. */
const said = (s) => ({
  stop: s.attributes["saferetry.stop_reason"],
  outcome: s.attributes["saferetry.outcome"],
  errorType: s.attributes["error.type"],
  status: s.status.code,
  attempts: s.attributes["saferetry.attempts"],
  waited: typeof s.attributes["saferetry.wait_ms"],
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Resolves once the server received one more request to `path` than `before` (bounded). */
async function arrived(path, before) {
  for (let i = 0; i < 300 && (server.seen.get(path)?.length ?? 0) <= before; i++) await sleep(10);
  assert.ok(server.seen.get(path)?.length > before, `a request to ${path} arrived`);
}

describe("an operation's span says what happened, the same for fetch, run and poll", () => {
  test("a try-later operation's span has error.type, its stop reason, beside status Error: a run, a poll and a fetch alike", async () => {
    const p = policy("try-later-each");
    assert.equal((await p.run(`${server.origin}/later`).result).kind, "try-later");
    const polled = await p.poll(`${server.origin}/ok`, { method: "POST", body: "x" }, { status: `${server.origin}/later`, phases: [{ everyMs: 20 }] }).result;
    assert.equal(polled.kind, "try-later");
    const response = await p.fetch(`${server.origin}/later`);
    assert.equal(response.status, 503);
    assert.equal(reportOf(response).reason, "wait-exceeds-budget");
    const ops = opsOf("try-later-each");
    console.log(render(ops));
    assert.deepEqual(ops.map((s) => s.name), ["saferetry.run GET", "saferetry.poll POST", "saferetry.fetch GET"]);
    for (const op of ops) {
      assert.equal(op.status.code, SpanStatusCode.ERROR, op.name);
      assert.equal(op.attributes["saferetry.outcome"], "try-later", op.name);
      assert.equal(op.attributes["error.type"], "wait-exceeds-budget", op.name);
      assert.equal(op.attributes["error.type"], op.attributes["saferetry.stop_reason"], op.name);
    }
  });

  test("a fetch that resolves with a Response that did not succeed says what a run of the same request says: stop reason, outcome, error.type, status", async () => {
    const cases = [
      ["wait", "/later", {}, "wait-exceeds-budget"],
      ["exhausted", "/later", { maxAttempts: 1 }, "attempts-exhausted"],
      ["stopped", "/missing", {}, "http-stop"],
    ];
    for (const [tag, path, options, reason] of cases) {
      const response = await policy(`resolved-${tag}-fetch`, options).fetch(`${server.origin}${path}`);
      await response.text();
      assert.equal(reportOf(response).reason, reason);
      const outcome = await policy(`resolved-${tag}-run`, options).run(`${server.origin}${path}`).result;
      assert.equal(outcome.reason, reason);
      const [viaFetch] = opsOf(`resolved-${tag}-fetch`);
      const [viaRun] = opsOf(`resolved-${tag}-run`);
      console.log(render([viaFetch, viaRun]));
      assert.deepEqual(said(viaFetch), said(viaRun), `${tag}: fetch and run say the same`);
      assert.equal(viaFetch.attributes["error.type"], reason, tag);
      assert.equal(viaFetch.attributes["saferetry.outcome"], outcome.kind, tag);
      const duration = await countOf("saferetry.client.operation.duration", `resolved-${tag}-fetch`, { "saferetry.outcome": outcome.kind, "saferetry.stop_reason": reason });
      assert.equal(duration, 1, `${tag}: the duration point carries the outcome`);
    }
  });

  test("a request fetch refuses before sending is one attempt that was not sent: in the report, the attempts metric and the spans", async () => {
    const p = policy("refused-unsent");
    const url = `http://user:pa55word@127.0.0.1:${new URL(server.origin).port}/ok`;
    const before = server.seen.get("/ok")?.length ?? 0;
    const error = await p.fetch(url).catch((e) => e);
    assert.ok(error instanceof TypeError && !(error instanceof RetryError), `the host's own TypeError: ${error}`);
    assert.deepEqual(reportOf(error).attempts.map((a) => a.error?.stage), ["not-sent"]);
    const outcome = await p.run(url).result;
    assert.equal(outcome.reason, "refused");
    assert.deepEqual(outcome.report.attempts.map((a) => a.error?.stage), ["not-sent"]);
    assert.equal(server.seen.get("/ok")?.length ?? 0, before, "nothing reached the server");
    assert.equal(await sumOf("saferetry.client.attempts", "refused-unsent", { "saferetry.attempt.stage": "not-sent" }), 2);
    assert.equal(await sumOf("saferetry.client.attempts", "refused-unsent", { "saferetry.attempt.stage": "maybe-delivered" }), 0);
    const ops = opsOf("refused-unsent");
    console.log(render(exporter.getFinishedSpans().filter((s) => ops.some((o) => o === s || s.parentSpanContext?.spanId === id(o)))));
    for (const op of ops) {
      assert.equal(op.attributes["saferetry.stop_reason"], "refused", op.name);
      assert.equal(op.attributes["error.type"], "refused", op.name);
      assert.equal(op.attributes["saferetry.attempts"], 1, op.name);
      const children = exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === id(op));
      assert.deepEqual(children.map((c) => c.attributes["error.type"]), ["TypeError"], `${op.name}: one attempt span, its error's name`);
    }
  });

  test("instrumenting a policy changes no answer: a header fetch refuses is refused once with the host's TypeError, as without instrument", async () => {
    const init = { headers: { "x-test": "a\u0000b" } };
    const plain = await new RetryPolicy({ baseMs: 10 }).fetch(`${server.origin}/ok`, init).catch((e) => e);
    const p = policy("refused-header");
    const error = await p.fetch(`${server.origin}/ok`, init).catch((e) => e);
    assert.equal(plain.constructor, TypeError);
    assert.equal(error.constructor, TypeError, String(error));
    assert.equal(error.message, plain.message);
    assert.deepEqual(reportOf(error).attempts.map((a) => a.error?.stage), ["not-sent"]);
    const [op] = opsOf("refused-header");
    assert.equal(op.attributes["saferetry.stop_reason"], "refused");
    const children = exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === id(op));
    assert.deepEqual(children.map((c) => c.attributes["error.type"]), ["TypeError"], "its one attempt span ended, with the error's name");
  });

  test("a fetch cancelled through its signal ends as a cancelled run does: stop reason, outcome, attempts, wait, and no error status", async () => {
    const p = policy("cancelled-fetch");
    for (const reason of [undefined, "left the page"]) {
      const controller = new AbortController();
      const before = server.seen.get("/hang")?.length ?? 0;
      const pending = p.fetch(`${server.origin}/hang`, { signal: controller.signal });
      await arrived("/hang", before);
      controller.abort(reason);
      const error = await pending.catch((e) => e);
      assert.equal(error, controller.signal.reason, "rejects with the caller's reason, as fetch does");
    }
    const before = server.seen.get("/hang")?.length ?? 0;
    const op = policy("cancelled-run").run(`${server.origin}/hang`);
    await arrived("/hang", before);
    op.cancel();
    assert.equal((await op.result).kind, "cancelled");
    const [run] = opsOf("cancelled-run");
    const fetches = opsOf("cancelled-fetch");
    console.log(render([...fetches, run]));
    assert.equal(fetches.length, 2);
    for (const f of fetches) assert.deepEqual(said(f), said(run));
    assert.deepEqual(said(run), { stop: "cancelled", outcome: "cancelled", errorType: "cancelled", status: SpanStatusCode.UNSET, attempts: 1, waited: "number" });
    assert.equal(await sumOf("saferetry.client.attempts", "cancelled-fetch", { "saferetry.attempt.stage": "maybe-delivered" }), 2);
    assert.equal(await countOf("saferetry.client.operation.duration", "cancelled-fetch", { "saferetry.stop_reason": "cancelled", "saferetry.outcome": "cancelled" }), 2);
  });
});

describe("policy.fetch's waits for a rate slot and a permit, and the policy's own fetch", () => {
  test("a fetch that waited for a rate slot carries a rate-limit wait event before its first attempt", async () => {
    const p = policy("fetch-rate", { rate: { requests: 1, perMs: 300 } });
    await (await p.fetch(`${server.origin}/ok?rate1`)).text();
    await (await p.fetch(`${server.origin}/ok?rate2`)).text();
    const ops = opsOf("fetch-rate");
    console.log(render(ops));
    assert.equal(ops.length, 2);
    const waits = ops[1].events.filter((e) => e.name === "saferetry.wait");
    assert.equal(waits.length, 1, render(ops));
    assert.equal(waits[0].attributes["saferetry.wait.cause"], "rate-limit");
    assert.equal(waits[0].attributes["saferetry.attempt"], 1);
    const { "saferetry.wait_ms": waited, "saferetry.wait.planned_ms": planned } = waits[0].attributes;
    assert.ok(planned > 0 && planned <= 300 && waited >= planned - 10, `waited ${waited} ms of ${planned} for the slot`);
  });

  test("a fetch queued behind another for a concurrency permit carries a concurrency wait event", async () => {
    const p = policy("fetch-queue", { concurrency: 1 });
    const first = p.fetch(`${server.origin}/busy-once/fetch-queue`);
    const second = p.fetch(`${server.origin}/ok?queued`);
    await Promise.all([(await first).text(), (await second).text()]);
    const ops = opsOf("fetch-queue");
    console.log(render(ops));
    const queued = ops.find((s) => s.attributes["url.full"].endsWith("?queued=REDACTED"));
    const wait = queued.events.find((e) => e.attributes["saferetry.wait.cause"] === "concurrency");
    assert.ok(wait, render(ops));
    assert.equal(wait.attributes["saferetry.attempt"], 1);
    assert.ok(wait.attributes["saferetry.wait_ms"] < 1000, `waited ${wait.attributes["saferetry.wait_ms"]} ms: until the first fetch's attempt ended, not its Retry-After`);
  });

  test("a policy built with its own fetch keeps it: that fetch sends each attempt, inside the attempt span", async () => {
    const sentBy = [];
    const own = (input, init) => {
      sentBy.push(trace.getSpan(context.active())?.spanContext().spanId);
      return fetch(input, init);
    };
    const response = await policy("own-fetch", { fetch: own }).fetch(`${server.origin}/busy-once/own-fetch`);
    assert.equal(response.status, 200);
    const { op, children, text } = tree("own-fetch");
    console.log(text);
    assert.equal(op.attributes["saferetry.attempts"], 2);
    assert.equal(children.length, 2);
    assert.deepEqual(sentBy, children.map(id), "the policy's own fetch sent both attempts, each inside its attempt span");
    const run = await policy("own-fetch-run", { fetch: own }).run(`${server.origin}/ok`).result;
    assert.equal(run.kind, "succeeded");
    assert.deepEqual(sentBy.slice(2), tree("own-fetch-run").children.map(id), "and a run's");
  });
});

describe("the operation's life", () => {
  test("retryNow ends the first operation's span and starts one for the fresh operation", async () => {
    const p = policy("retry-now");
    const op = p.run(`${server.origin}/later`);
    assert.equal((await op.result).kind, "try-later");
    assert.equal((await op.retryNow({ force: true })).kind, "try-later");
    const ops = opsOf("retry-now");
    assert.equal(ops.length, 2);
    for (const o of ops) {
      const children = exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === id(o));
      assert.equal(children.length, 1, "each operation's attempt under its own span");
    }
  });

  test("an outbox's send and its later re-send each get a run span of their own", async () => {
    const p = policy("outbox", { totalMs: 500 });
    const box = await outbox(p, "orders", { store: memoryStore() });
    try {
      const sent = await box.send(`${server.origin}/busy-once/outbox`, { method: "PUT", body: "{}" });
      assert.equal(sent.kept, true, sent.notKept);
      await new Promise((r) => setTimeout(r, 1100));
      const done = new Promise((r) => box.addEventListener("sent", r, { once: true }));
      await box.flush();
      await Promise.race([done, new Promise((_, no) => setTimeout(() => no(new Error("no sent event in 5 s")), 5000))]);
    } finally {
      await box.close();
    }
    const ops = opsOf("outbox");
    console.log(render(ops));
    assert.deepEqual(ops.map((s) => [s.name, s.attributes["saferetry.outcome"]]), [["saferetry.run PUT", "try-later"], ["saferetry.run PUT", "succeeded"]]);
  });

  test("disable puts the policy's own methods back: no span or point after it", async () => {
    const p = new RetryPolicy();
    const own = { fetch: p.fetch, run: p.run, poll: p.poll };
    const handle = instrument(p, { tracerProvider, meterProvider, name: "disabled" });
    assert.notEqual(p.fetch, own.fetch);
    handle.disable();
    assert.deepEqual({ fetch: p.fetch, run: p.run, poll: p.poll }, own);
    await (await p.fetch(`${server.origin}/ok`)).text();
    assert.equal(exporter.getFinishedSpans().filter((s) => s.attributes["saferetry.policy"] === "disabled").length, 0);
    assert.equal((await points("saferetry.client.quota.level", "disabled")).length, 0);
  });
});

describe("an instrumented fetch (instrumentation-undici): its span is the attempt's", () => {
  before(() => {
    undici = new UndiciInstrumentation({ startSpanHook: () => resendAttributes() });
    undici.setTracerProvider(tracerProvider);
    undici.enable();
  });
  after(() => undici.disable());

  test("by default, undici's spans are the attempts: nested under the operation span, with the resend count, their traceparent at the server", async () => {
    const p = policy("undici");
    const response = await p.fetch(`${server.origin}/busy-once/undici`);
    assert.equal(response.status, 200);
    await response.text();
    const { op, children, text } = tree("undici");
    console.log(text);
    assert.equal(op.attributes["saferetry.attempts"], 2);
    assert.equal(children.length, 2, text);
    for (const c of children) assert.equal(c.kind, SpanKind.CLIENT);
    assert.deepEqual(children.map((c) => c.attributes["http.response.status_code"]), [503, 200]);
    assert.deepEqual(children.map((c) => c.attributes["http.request.resend_count"]), [undefined, 1]);
    const sent = server.seen.get("/busy-once/undici").map((r) => r.traceparent);
    assert.deepEqual(sent, children.map((c) => `00-${c.spanContext().traceId}-${id(c)}-01`));
  });

  test("two operations at once keep their attempts apart, and the queued one shows how long it waited for a permit", async () => {
    const p = policy("concurrent", { concurrency: 1 });
    const a = p.run(`${server.origin}/busy-once/c1`);
    const b = p.run(`${server.origin}/ok?c2`);
    const [oa, ob] = await Promise.all([a.result, b.result]);
    assert.equal(oa.kind, "succeeded");
    assert.equal(ob.kind, "succeeded");
    const spans = exporter.getFinishedSpans();
    const ops = opsOf("concurrent");
    assert.equal(ops.length, 2);
    const childrenOf = (op) => spans.filter((s) => s.parentSpanContext?.spanId === id(op));
    const [first, second] = ops.sort((x, y) => String(x.attributes["url.full"]).localeCompare(String(y.attributes["url.full"])));
    console.log(render([...ops, ...childrenOf(first), ...childrenOf(second)]));
    assert.equal(childrenOf(first).length, 2);
    assert.equal(childrenOf(second).length, 1);
    const queued = second.events.find((e) => e.attributes["saferetry.wait.cause"] === "concurrency");
    assert.ok(queued, "the queued run waited for concurrency");
    const planned = queued.attributes["saferetry.wait.planned_ms"];
    assert.ok(planned > 29000 && planned <= 30000, `planned ${planned} ms: until the deadline`);
    assert.ok(queued.attributes["saferetry.wait_ms"] < 5000, `waited ${queued.attributes["saferetry.wait_ms"]} ms: until the first run's attempt ended`);
  });
});
