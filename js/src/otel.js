// saferetry/otel (docs/observability.md "Observability"): a policy's operations and attempts
// as OpenTelemetry spans, its retries as metrics. Glue only: every value
// comes from what the policy already produces (the report, the states of
// each operation, `stats()`); this file maps them to OpenTelemetry through
// tables and decides nothing. Its one dependency is `@opentelemetry/api`,
// and no other entry imports it: a page without it loads only core.js's two
// non-public hooks it reads (+35 B gzip, BENCHMARKS.md).
import { context, createContextKey, metrics, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { reportOf } from "./core.js";
import { check } from "./options.js";

const SCOPE = "saferetry";
const MARK = Symbol.for("saferetry.fetch");
// A policy's `fetch` with an observer of its states, and the `fetch` option
// it was built with (js/src/core.js, not public API).
const OBSERVED = Symbol.for("saferetry.observed");
const TRANSPORT = Symbol.for("saferetry.transport");
// The number of requests this operation handed to `fetch` before this one,
// for an instrumented `fetch`'s span (`resendAttributes`).
const RESENDS = createContextKey("saferetry.resend_count");
const resendOfInit = new WeakMap();

// ---- Tables: the policy's words to OpenTelemetry's ----

/** The span status of an operation that ended for `reason` (absent: unset). */
const STATUS_OF_REASON = {
  succeeded: undefined,
  "http-stop": undefined,
  cancelled: undefined,
};
/** A wait's cause as the span event names it (`why` of a `waiting` state, `waitKind` of a report). */
const CAUSE_OF_WHY = { queue: "concurrency" };
/** The metrics (docs/observability.md "Observability" says why each name): key, instrument, name, unit, description, advice. */
const INSTRUMENTS = [
  ["retries", "Histogram", "saferetry.client.operation.retries", "{retry}", "Retries per operation (attempts after the first; polls excluded).", { explicitBucketBoundaries: [0, 1, 2, 3, 4, 5, 10] }],
  ["retryDelay", "Histogram", "saferetry.client.operation.retry_delay", "s", "Time per operation with no attempt in flight: backoff, Retry-After, rate limit, queue, offline."],
  ["duration", "Histogram", "saferetry.client.operation.duration", "s", "Operations by outcome and stop reason, and how long each took."],
  ["attempts", "Counter", "saferetry.client.attempts", "{attempt}", "Attempts, by the stage their failure reached (responded: a status came back)."],
  ["throttled", "Counter", "saferetry.client.throttled", "{operation}", "Operations adaptive throttling ended try-later without sending a request (stop reason throttled)."],
  ["quotaLevel", "ObservableGauge", "saferetry.client.quota.level", "{token}", "Tokens in the retry quota (with a shared budget: the tokens this client holds)."],
  ["budgetMode", "ObservableGauge", "saferetry.client.budget.mode", "1", "The shared budget's mode: 1 for the mode in force, 0 for the others."],
  ["queued", "ObservableUpDownCounter", "saferetry.client.queued", "{operation}", "Operations waiting for a concurrency permit or a rate slot."],
  ["inFlight", "ObservableUpDownCounter", "saferetry.client.in_flight", "{request}", "Requests in flight."],
];
/** A URL's port when it names none. */
const DEFAULT_PORT = { "http:": 80, "https:": 443 };
/** `budget.mode` gauge: every mode, reported 1 for the one in force and 0 for the others. */
const MODES = ["local", "leased", "fallback"];

/** `url` without credentials or query values, as `url.full` may show it
 * (semantic conventions: userinfo `REDACTED:REDACTED`; here every query
 * value, not only known signature keys, and no fragment). */
export function redactUrl(url) {
  let u;
  try {
    u = new URL(url, globalThis.location?.href);
  } catch {
    return undefined;
  }
  if (u.username || u.password) {
    u.username = "REDACTED";
    u.password = "REDACTED";
  }
  const keys = [...u.searchParams.keys()];
  u.search = keys.length ? "?" + keys.map((k) => `${encodeURIComponent(k)}=REDACTED`).join("&") : u.search;
  u.hash = "";
  return u.href;
}

/** The HTTP semantic conventions' request attributes of `fetch(input, init)`. */
function requestAttributes(input, init) {
  const method = String(init?.method ?? input?.method ?? "GET").toUpperCase();
  const raw = input instanceof Request ? input.url : String(input?.href ?? input);
  const attributes = { "http.request.method": method };
  const full = redactUrl(raw);
  if (full === undefined) return attributes;
  const u = new URL(full);
  attributes["url.full"] = full;
  attributes["url.scheme"] = u.protocol.slice(0, -1);
  attributes["server.address"] = u.hostname;
  const port = u.port ? Number(u.port) : DEFAULT_PORT[u.protocol];
  if (port !== undefined) attributes["server.port"] = port;
  return attributes;
}

/** `init` with `retry.fetch` set to `transport` (a `retry` that is not
 * ours, such as ofetch's number, is left alone: the call then keeps its
 * own transport). */
function withTransport(init, transport) {
  const retry = init?.retry;
  if (retry !== undefined && (typeof retry !== "object" || retry === null)) return init;
  return { ...init, retry: { ...retry, fetch: transport } };
}

/** The global `fetch` of the moment, the host's beneath a policy installed there. */
function globalFetch(input, init) {
  const current = globalThis.fetch;
  return (current[MARK] ?? current)(input, init);
}

/** `http.request.resend_count` of a request an instrumented `fetch` is
 * sending for a policy: pass it to instrumentation-undici's `startSpanHook`
 * (`startSpanHook: () => resendAttributes()`) or instrumentation-fetch's
 * `applyCustomAttributesOnSpan` (`(span, request) => span.setAttributes(resendAttributes(request))`). */
export function resendAttributes(request) {
  const n = resendOfInit.get(request) ?? context.active().getValue(RESENDS);
  return n ? { "http.request.resend_count": n } : {};
}

/**
 * Instruments `policy`: its `fetch`, `run` and `poll` (and so an outbox's
 * sends) each make an operation span, each request it hands to `fetch`
 * runs inside that span's context (an attempt span of its own, or the
 * instrumented `fetch`'s), and its metrics are recorded. Returns
 * `{ disable() }`, which puts the policy's own methods back.
 */
export function instrument(policy, options) {
  const [tracerProvider, meterProvider, attemptSpans, name] = check("instrument", options);
  const tracer = (tracerProvider ?? trace).getTracer(SCOPE);
  const meter = (meterProvider ?? metrics).getMeter(SCOPE);
  const policyAttributes = name === undefined ? {} : { "saferetry.policy": name };
  const { fetch, run, poll } = policy;

  const made = {};
  for (const [key, kind, metric, unit, description, advice] of INSTRUMENTS) made[key] = meter[`create${kind}`](metric, { unit, description, advice });
  const { retries, retryDelay, duration, attempts, throttled, quotaLevel, budgetMode, queued, inFlight } = made;
  const observe = (result) => {
    const stats = policy.stats();
    if (stats.quotaLevel !== undefined) result.observe(quotaLevel, stats.quotaLevel, policyAttributes);
    result.observe(queued, stats.queued, policyAttributes);
    result.observe(inFlight, stats.inFlight, policyAttributes);
    const mode = stats.shared?.mode;
    if (mode === undefined) return;
    for (const m of MODES) result.observe(budgetMode, m === mode ? 1 : 0, { ...policyAttributes, "saferetry.budget.mode": m });
  };
  meter.addBatchObservableCallback(observe, [quotaLevel, budgetMode, queued, inFlight]);

  /** An operation's span and its count of requests handed to `fetch`. */
  const begin = (operation, input, init) => {
    const attributes = { ...policyAttributes, ...requestAttributes(input, init), "saferetry.operation": operation };
    const span = tracer.startSpan(`saferetry.${operation} ${attributes["http.request.method"]}`, { kind: SpanKind.INTERNAL, attributes }, context.active());
    return { span, ctx: trace.setSpan(context.active(), span), sends: 0, waits: [], attributes };
  };

  /** The `fetch` this call's requests go to, each inside `rec`'s context. */
  const transport = (holder, base) => (input, init) => {
    const rec = holder.rec;
    const resends = rec.sends++;
    if (!(attemptSpans === "auto" ? !instrumentedFetch() : attemptSpans)) {
      if (resends && init) resendOfInit.set(init, resends);
      return context.with(resends ? rec.ctx.setValue(RESENDS, resends) : rec.ctx, base, undefined, input, init);
    }
    const attributes = { ...policyAttributes, ...requestAttributes(input, init) };
    if (resends) attributes["http.request.resend_count"] = resends;
    const span = tracer.startSpan(attributes["http.request.method"], { kind: SpanKind.CLIENT, attributes }, rec.ctx);
    const ctx = trace.setSpan(rec.ctx, span);
    const fields = {};
    propagation.inject(ctx, fields);
    let sent = init;
    if (Object.keys(fields).length) {
      try {
        const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
        for (const [k, v] of Object.entries(fields)) headers.set(k, v);
        sent = { ...init, headers };
      } catch {
        // Headers `fetch` refuses: the call goes as it came, for `fetch` to refuse it with its own error.
      }
    }
    let answer;
    try {
      answer = context.with(ctx, base, undefined, input, sent);
    } catch (error) {
      failed(span, error);
      throw error;
    }
    Promise.resolve(answer).then(
      (response) => {
        span.setAttribute("http.response.status_code", response.status);
        span.end();
      },
      (error) => failed(span, error),
    );
    return answer;
  };

  /** Ends `rec`'s span and records the metrics from the operation's
   * `outcome`: `run`'s and `poll`'s; a `fetch`'s, the one it rejected with,
   * else `{ report }` of its Response (kind and message: its last state's).
   * `error`: what a `fetch` without an outcome threw (a bad option). */
  const end = (rec, outcome, error) => {
    const { span, state } = rec;
    const report = outcome?.report;
    const kind = outcome?.kind ?? state?.state;
    const attributes = { ...policyAttributes, "http.request.method": rec.attributes["http.request.method"], "saferetry.operation": rec.attributes["saferetry.operation"] };
    if (kind) attributes["saferetry.outcome"] = kind;
    if (report) {
      attributes["saferetry.stop_reason"] = report.reason;
      const tries = report.attempts.filter((a) => a.phase === undefined);
      const busy = report.attempts.reduce((sum, a) => sum + a.durationMs, 0);
      const waited = Math.max(0, report.elapsedMs - busy);
      const last = report.attempts.at(-1);
      span.setAttributes({
        ...attributes,
        "saferetry.attempts": tries.length,
        "saferetry.polls": report.attempts.length - tries.length,
        "saferetry.wait_ms": waited,
      });
      if (last?.status !== undefined) span.setAttribute("http.response.status_code", last.status);
      if (report.retryAt !== undefined) span.setAttribute("saferetry.retry_at", report.retryAt);
      if (report.budget !== undefined) span.setAttribute("saferetry.budget.mode", report.budget);
      for (const a of report.attempts) {
        const stage = a.error?.stage ?? "responded";
        attempts.add(1, { ...policyAttributes, "saferetry.attempt.stage": stage, "saferetry.operation": attributes["saferetry.operation"] });
      }
      if (report.reason === "throttled") throttled.add(1, attributes);
      retries.record(Math.max(0, tries.length - 1), attributes);
      retryDelay.record(waited / 1000, attributes);
      duration.record(report.elapsedMs / 1000, attributes);
    }
    const errorType = report ? (report.reason === "succeeded" ? undefined : report.reason) : error?.name;
    if (errorType !== undefined) span.setAttribute("error.type", errorType);
    const reason = report?.reason ?? errorType;
    if (!(reason in STATUS_OF_REASON)) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome?.message ?? state?.message ?? reason });
    waitEvents(rec, report);
    span.end();
  };

  /** The operation's states (`fetch`'s, `run`'s, `poll`'s), the last one
   * kept; a `waiting` state kept once it ends (the next state, or the
   * operation's end): when it began, how long it lasted, and how long it
   * could have (`planned_ms`: for a queue or the network, the deadline).
   * A rejected `fetch` hands over its outcome here too (js/src/core.js). */
  const onState = (holder) => (state) => {
    const rec = holder.rec;
    if (state.kind) return void (rec.outcome = state);
    rec.state = state;
    endWait(rec);
    if (state.state !== "waiting") return;
    const cause = CAUSE_OF_WHY[state.why] ?? state.why;
    rec.waiting = { at: Date.now(), attributes: { "saferetry.wait.cause": cause, "saferetry.wait.planned_ms": state.waitMs, "saferetry.attempt": state.attempt } };
  };
  const endWait = (rec) => {
    const w = rec.waiting;
    if (!w) return;
    rec.waiting = undefined;
    w.attributes["saferetry.wait_ms"] = Date.now() - w.at;
    rec.waits.push(w);
  };
  /** `rec`'s waits as span events at the times they began, each with the
   * `Retry-After` the report says the attempt before it was given. */
  const waitEvents = (rec, report) => {
    endWait(rec);
    for (const { at, attributes } of rec.waits) {
      const retryAfter = attributes["saferetry.wait.cause"] === "retry-after" ? report?.attempts[attributes["saferetry.attempt"] - 2]?.retryAfterMs : undefined;
      if (retryAfter !== undefined) attributes["saferetry.retry_after_ms"] = retryAfter;
      rec.span.addEvent("saferetry.wait", attributes, at);
    }
  };

  /** The transport the call would use: its own `retry.fetch`, else the policy's `fetch` option, else the global `fetch`. */
  const baseOf = (init) => init?.retry?.fetch ?? policy[TRANSPORT] ?? globalFetch;

  policy.fetch = Object.assign(
    (input, init) => {
      const holder = { rec: begin("fetch", input, init) };
      const rec = holder.rec;
      let answer;
      try {
        answer = policy[OBSERVED](input, withTransport(init, transport(holder, baseOf(init))), onState(holder));
      } catch (error) {
        end(rec, undefined, error);
        throw error;
      }
      return answer.then(
        (response) => {
          end(rec, { report: reportOf(response) });
          return response;
        },
        (error) => {
          end(rec, rec.outcome, error);
          throw error;
        },
      );
    },
    { [MARK]: fetch[MARK] },
  );

  /** `run` and `poll`: the operation's states as events, its result ends the span; `retryNow` starts another. */
  const operation = (kind, start) => (input, init, ...rest) => {
    const holder = { rec: begin(kind, input, init) };
    const watch = (rec, result) => result.then((outcome) => end(rec, outcome));
    const op = start(input, withTransport(init, transport(holder, baseOf(init))), ...rest);
    const listen = onState(holder);
    listen(op.state);
    op.subscribe(listen);
    watch(holder.rec, op.result);
    const retryNow = op.retryNow;
    op.retryNow = (o) => {
      holder.rec = begin(kind, input, init);
      const result = retryNow.call(op, o);
      watch(holder.rec, result);
      return result;
    };
    return op;
  };
  policy.run = operation("run", run.bind(policy));
  policy.poll = operation("poll", poll.bind(policy));

  return {
    disable() {
      meter.removeBatchObservableCallback(observe, [quotaLevel, budgetMode, queued, inFlight]);
      policy.fetch = fetch;
      delete policy.run;
      delete policy.poll;
    },
  };
}

/** Whether the host `fetch` already makes spans: an OpenTelemetry
 * instrumentation wrapped the global `fetch` (instrumentation-fetch marks
 * its wrapper `__wrapped`), or something listens to undici's request
 * channel (instrumentation-undici, Node's `fetch`). */
function instrumentedFetch() {
  if (globalThis.fetch?.__wrapped === true) return true;
  const channels = globalThis.process?.getBuiltinModule?.("node:diagnostics_channel");
  return channels?.hasSubscribers("undici:request:create") === true;
}

/** An attempt span whose request failed: its error's name, never its message (it may hold the URL). */
function failed(span, error) {
  span.setAttribute("error.type", error?.name ?? "Error");
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
