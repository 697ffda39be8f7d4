// The otel tier's Worker (built by Wrangler in tests/otel/workerd.test.mjs):
// saferetry/otel with @opentelemetry/api alone — no SDK. The providers below
// are the smallest that record what the API hands them (a span's name,
// kind, parent, attributes, events, status; each instrument's calls), with
// a W3C `traceparent` propagator. `GET /?case=NAME` runs one case against
// the test server at ORIGIN and answers what was recorded, as JSON.
import { context, propagation, trace } from "@opentelemetry/api";
import { reportOf, RetryPolicy } from "saferetry";
import { instrument } from "saferetry/otel";

const hex = (n) => [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, "0")).join("");
let ended = [];
class RecordingSpan {
  constructor(name, options, parent) {
    this.name = name;
    this.kind = options?.kind;
    this.attributes = { ...options?.attributes };
    this.events = [];
    this.status = 0;
    this.parentId = parent?.spanId;
    this.ctx = { traceId: parent?.traceId ?? hex(16), spanId: hex(8), traceFlags: 1 };
  }
  spanContext() { return this.ctx; }
  setAttribute(k, v) { this.attributes[k] = v; return this; }
  setAttributes(a) { Object.assign(this.attributes, a); return this; }
  addEvent(name, attributes) { this.events.push({ name, attributes }); return this; }
  addLink() { return this; }
  addLinks() { return this; }
  setStatus(s) { this.status = s.code; return this; }
  updateName(n) { this.name = n; return this; }
  end() { ended.push(this); }
  isRecording() { return true; }
  recordException() {}
}
const tracerProvider = {
  getTracer: () => ({
    startSpan: (name, options, ctx) => new RecordingSpan(name, options, trace.getSpanContext(ctx ?? context.active())),
  }),
};
let points = [];
let observers = [];
const instrumentOf = (metric) => ({
  add: (value, attributes) => points.push({ metric, value, attributes }),
  record: (value, attributes) => points.push({ metric, value, attributes }),
  metric,
});
const meterProvider = {
  getMeter: () => ({
    createHistogram: instrumentOf,
    createCounter: instrumentOf,
    createObservableGauge: instrumentOf,
    createObservableUpDownCounter: instrumentOf,
    addBatchObservableCallback: (cb) => observers.push(cb),
    removeBatchObservableCallback: () => {},
  }),
};
propagation.setGlobalPropagator({
  inject(ctx, carrier, setter) {
    const sc = trace.getSpanContext(ctx);
    if (sc) (setter?.set ?? ((c, k, v) => (c[k] = v)))(carrier, "traceparent", `00-${sc.traceId}-${sc.spanId}-01`);
  },
  extract: (ctx) => ctx,
  fields: () => ["traceparent"],
});

const CASES = {
  success: (p, o) => p.fetch(`${o}/ok`).then((r) => r.text()),
  "retry-after": (p, o) => p.fetch(`${o}/busy-once/workerd`).then((r) => r.text()),
  "maybe-delivered": (p, o) => p.fetch(`${o}/drop`, { method: "POST", body: "x" }).catch((e) => e.reason),
  cancel: async (p, o) => {
    const op = p.run(`${o}/hang`);
    await new Promise((r) => setTimeout(r, 300));
    op.cancel();
    return (await op.result).kind;
  },
  "try-later": async (p, o) => (await p.run(`${o}/later`).result).kind,
  "fetch-later": async (p, o) => (await p.fetch(`${o}/later`)).status,
  // workerd sends a URL with credentials; it refuses a NUL byte in a header before sending.
  refused: (p, o) => p.fetch(`${o}/ok`, { headers: { "x-test": "a\u0000b" } }).catch((e) => reportOf(e)?.reason),
  "fetch-cancel": async (p, o) => {
    const controller = new AbortController();
    const answer = p.fetch(`${o}/hang`, { signal: controller.signal }).catch((e) => e.name);
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    return answer;
  },
  redaction: (p, o) =>
    p.fetch(`${o}/ok?token=s3cr3t-token&page=2`, { method: "POST", body: "body-SECRET-90", headers: { authorization: "Bearer tok-SECRET-1234", cookie: "sid=sid-SECRET-5678" } }).then((r) => r.text()),
  noop: async (p, o) => {
    // The API with no provider registered: the policy answers as it would without saferetry/otel.
    const plain = new RetryPolicy({ baseMs: 10 });
    instrument(plain);
    return (await plain.fetch(`${o}/busy-once/noop`)).status;
  },
};

export default {
  async fetch(request, env) {
    const name = new URL(request.url).searchParams.get("case");
    ended = [];
    points = [];
    observers = [];
    const p = new RetryPolicy({ baseMs: 10, capMs: 20 });
    instrument(p, { tracerProvider, meterProvider, name });
    const answer = await CASES[name](p, env.ORIGIN);
    for (const cb of observers) cb({ observe: (inst, value, attributes) => points.push({ metric: inst.metric, value, attributes }) });
    const spans = ended.map((s) => ({ name: s.name, kind: s.kind, attributes: s.attributes, events: s.events, status: s.status, traceId: s.ctx.traceId, spanId: s.ctx.spanId, parentId: s.parentId }));
    return Response.json({ answer, spans, points });
  },
};
