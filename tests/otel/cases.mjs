// The cases' checks, shared by the runtimes whose cases run remotely
// (Chromium's page, the workerd Worker): each gets what the runtime
// recorded — `{ answer, op, children, sum(metric, where) }`, spans as plain
// data (`kind`, `status` as numbers) — and the server (`origin`,
// `traceparents(path)`, the retry case's `busyPath`).
import assert from "node:assert/strict";
import { SECRETS } from "./tree.mjs";

const CLIENT = 2; // SpanKind.CLIENT
const ERROR = 2; // SpanStatusCode.ERROR
const sent = (spans) => spans.map((c) => `00-${c.traceId}-${c.spanId}-01`);

export const CHECKS = [
  ["success", "a success is an operation span with an attempt span whose traceparent the server received", ({ op, children, sum }, server) => {
    assert.equal(op.name, "saferetry.fetch GET");
    assert.equal(op.attributes["url.full"], `${server.origin}/ok`);
    assert.equal(op.attributes["saferetry.stop_reason"], "succeeded");
    assert.equal(children.length, 1);
    assert.equal(children[0].kind, CLIENT);
    assert.equal(children[0].attributes["saferetry.policy"], "success", "the attempt span names its policy");
    assert.equal(server.traceparents("/ok").at(-1), sent(children)[0]);
    assert.equal(sum("saferetry.client.attempts", { "saferetry.attempt.stage": "responded" }), 1);
  }],
  ["retry-after", "a 503 with Retry-After then a success is two attempts, a retry-after wait event and a resend count", ({ op, children, sum }, server) => {
    assert.equal(op.attributes["saferetry.attempts"], 2);
    assert.equal(op.events.find((e) => e.name === "saferetry.wait").attributes["saferetry.wait.cause"], "retry-after");
    assert.deepEqual(children.map((c) => c.attributes["http.response.status_code"]), [503, 200]);
    assert.deepEqual(children.map((c) => c.attributes["http.request.resend_count"]), [undefined, 1]);
    assert.deepEqual(server.traceparents(server.busyPath), sent(children));
    assert.equal(sum("saferetry.client.operation.retries"), 1);
  }],
  ["maybe-delivered", "a keyless POST that failed after sending stops at maybe-delivered as an error span", ({ answer, op, children, sum }) => {
    assert.equal(answer, "maybe-delivered");
    assert.equal(op.attributes["saferetry.stop_reason"], "maybe-delivered");
    assert.equal(op.status, ERROR);
    assert.equal(children.length, 1);
    assert.equal(sum("saferetry.client.attempts", { "saferetry.attempt.stage": "maybe-delivered" }), 1);
  }],
  ["cancel", "a cancelled run ends its span as cancelled, not as an error", ({ answer, op }) => {
    assert.equal(answer, "cancelled");
    assert.equal(op.attributes["saferetry.outcome"], "cancelled");
    assert.notEqual(op.status, ERROR);
  }],
  ["try-later", "a try-later run carries its stop reason and retry time", ({ answer, op }) => {
    assert.equal(answer, "try-later");
    assert.equal(op.attributes["saferetry.outcome"], "try-later");
    assert.equal(typeof op.attributes["saferetry.retry_at"], "number");
    assert.equal(op.attributes["error.type"], op.attributes["saferetry.stop_reason"]);
    assert.equal(op.status, ERROR);
  }],
  ["fetch-later", "a fetch that resolves with the server's 503 but did not succeed carries error.type and outcome, as a run does", ({ answer, op }) => {
    assert.equal(answer, 503);
    assert.equal(op.attributes["saferetry.stop_reason"], "wait-exceeds-budget");
    assert.equal(op.attributes["error.type"], "wait-exceeds-budget");
    assert.equal(op.attributes["saferetry.outcome"], "try-later");
    assert.equal(op.status, ERROR);
  }],
  ["refused", "a request fetch refuses before sending is one attempt, counted not-sent", ({ answer, op, children, sum }) => {
    assert.equal(answer, "refused");
    assert.equal(op.attributes["saferetry.stop_reason"], "refused");
    assert.equal(op.attributes["error.type"], "refused");
    assert.equal(op.attributes["saferetry.attempts"], 1);
    assert.equal(children.length, 1);
    assert.equal(sum("saferetry.client.attempts", { "saferetry.attempt.stage": "not-sent" }), 1);
    assert.equal(sum("saferetry.client.attempts", { "saferetry.attempt.stage": "maybe-delivered" }), 0);
  }],
  ["fetch-cancel", "a fetch cancelled through its signal ends as a cancelled run does: its stop reason, outcome and attempts, no error status", ({ answer, op }) => {
    assert.equal(answer, "AbortError");
    assert.equal(op.attributes["saferetry.stop_reason"], "cancelled");
    assert.equal(op.attributes["saferetry.outcome"], "cancelled");
    assert.equal(op.attributes["error.type"], "cancelled");
    assert.equal(op.attributes["saferetry.attempts"], 1);
    assert.notEqual(op.status, ERROR);
  }],
  ["redaction", "no credential, cookie, body or query value reaches a span or a metric point", (got, server) => {
    assert.equal(got.op.attributes["url.full"], `${server.origin}/ok?token=REDACTED&page=REDACTED`);
    const text = JSON.stringify(got);
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `${secret} leaked`);
  }],
];
