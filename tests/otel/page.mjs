// The otel tier's Chromium page (bundled by tests/otel/chromium.test.mjs
// with esbuild): saferetry/otel with sdk-trace-web (StackContextManager, the
// W3C propagator), sdk-metrics, and instrumentation-fetch for the
// "instrumented fetch" case. `runCase(name)` runs one case and answers its
// spans and metric points as plain data; the Node side asserts.
import { propagation } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { FetchInstrumentation } from "@opentelemetry/instrumentation-fetch";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { StackContextManager, WebTracerProvider } from "@opentelemetry/sdk-trace-web";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { reportOf, RetryPolicy } from "../../js/src/web.js";
import { instrument, resendAttributes } from "../../js/src/otel.js";
import { render } from "./tree.mjs";

class Reader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const exporter = new InMemorySpanExporter();
const tracerProvider = new WebTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
tracerProvider.register({ contextManager: new StackContextManager(), propagator: new W3CTraceContextPropagator() });
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function policy(name, instrumentOptions = {}) {
  const p = new RetryPolicy({ baseMs: 10, capMs: 20 });
  instrument(p, { tracerProvider, meterProvider, name, ...instrumentOptions });
  return p;
}

const CASES = {
  success: async () => (await policy("success").fetch("/ok")).text(),
  "retry-after": async () => (await policy("retry-after").fetch("/busy-once/chromium")).text(),
  "maybe-delivered": () => policy("maybe-delivered").fetch("/drop", { method: "POST", body: "x" }).catch((e) => e.reason),
  cancel: async () => {
    const op = policy("cancel").run("/hang");
    await sleep(300);
    op.cancel();
    return (await op.result).kind;
  },
  "try-later": async () => (await policy("try-later").run("/later").result).kind,
  "fetch-later": async () => (await policy("fetch-later").fetch("/later")).status,
  // A URL with credentials: every browser refuses to build the request.
  refused: () => policy("refused").fetch(`${location.origin.replace("//", "//user:pa55word@")}/ok`).catch((e) => reportOf(e)?.reason),
  "fetch-cancel": async () => {
    const controller = new AbortController();
    const answer = policy("fetch-cancel").fetch("/hang", { signal: controller.signal }).catch((e) => e.name);
    await sleep(300);
    controller.abort();
    return answer;
  },
  redaction: async () =>
    (await policy("redaction").fetch("/ok?token=s3cr3t-token&page=2#frag", {
      method: "POST",
      body: "body-SECRET-90",
      headers: { authorization: "Bearer tok-SECRET-1234" },
    })).text(),
  "instrumented-fetch": async () => {
    const fetchInstrumentation = new FetchInstrumentation({
      applyCustomAttributesOnSpan: (span, request) => span.setAttributes(resendAttributes(request)),
    });
    fetchInstrumentation.setTracerProvider(tracerProvider);
    fetchInstrumentation.enable();
    try {
      const text = await (await policy("instrumented-fetch").fetch("/busy-once/web-b")).text();
      // instrumentation-fetch ends its span once the resource timing arrives (up to 300 ms later): bounded wait.
      const ended = () => exporter.getFinishedSpans().filter((s) => String(s.attributes["url.full"]).endsWith("/busy-once/web-b")).length;
      for (let i = 0; i < 100 && ended() < 3; i++) await sleep(50);
      return text;
    } finally {
      fetchInstrumentation.disable();
    }
  },
};

// The offline case's fetch starts while the page is offline (the Node side
// takes it offline and back through the DevTools protocol); `runCase("offline")`
// awaits it. Attempt spans of its own: instrumentation-fetch's `disable()`
// (the "instrumented-fetch" case) leaves its wrapper, passing through, in
// the global `fetch`, where `attemptSpans: "auto"` still sees it.
let offline;
globalThis.startOffline = () => {
  offline = policy("offline", { attemptSpans: true }).fetch("/ok?offline").then((r) => r.text());
};
CASES.offline = () => offline;

const plain = (s) => ({
  name: s.name,
  kind: s.kind,
  attributes: s.attributes,
  events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
  traceId: s.spanContext().traceId,
  spanId: s.spanContext().spanId,
  parentId: s.parentSpanContext?.spanId,
  status: s.status.code,
});

globalThis.runCase = async (name) => {
  const answer = await CASES[name]();
  const spans = exporter.getFinishedSpans();
  const ops = spans.filter((s) => s.attributes["saferetry.policy"] === name && "saferetry.operation" in s.attributes);
  const children = spans.filter((s) => ops.some((o) => o.spanContext().spanId === s.parentSpanContext?.spanId));
  const { resourceMetrics } = await reader.collect();
  const metrics = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .flatMap((m) => m.dataPoints.filter((p) => p.attributes["saferetry.policy"] === name).map((p) => ({ metric: m.descriptor.name, attributes: p.attributes, value: p.value })));
  return { answer, ops: ops.map(plain), children: children.map(plain), metrics, text: render([...ops, ...children]) };
};
globalThis.ready = true;
