// Spike (issue 19 item 4): the executor of the sans-IO shape. The wasm
// `Machine` (src/sansio) decides everything — whether to retry, how long to
// wait, which timer bounds an attempt, when the operation ends — and answers
// each event with the next action as one number (`ms * 8 + kind`). This
// file only performs actions: `fetch` under an AbortController with the
// attempt's timer, the body read inside the attempt, `setTimeout` for a
// wait, and the caller's signal. It reports what happened, as plain values.
//
// Covered: `responseBody` "buffer" and "stream" ("auto" buffers), the statuses, Retry-After and rate-limit
// headers, network errors per runtime, attempt timer, deadline, retry quota,
// the caller's signal. Not covered (BENCHMARKS.md "Sans-IO spike"): `auto`'s
// choice by Content-Type and size, hop-by-hop redirects, `run`/`poll`/`subscribe`/
// `onRetry`, concurrency and rate limits' queue, shared budgets, per-call
// options, maxBodyBytes, body snippets, the fetch-fidelity details.
import { SpikePolicy } from "./saferetry_sansio.js";

const FETCH = 0, HEADERS = 1, SLEEP = 2, DONE = 3, FAIL = 4, FETCH_STREAM = 6;
const TIMER = {}, ABORT = {};
const reports = new WeakMap();

/** Which runtime's `fetch` errors are read (`policy::runtime`). */
function runtimeName() {
  const g = globalThis;
  if (g.Deno) return "deno";
  if (g.Bun) return "bun";
  if (g.navigator?.userAgent === "Cloudflare-Workers") return "workerd";
  if (typeof g.process?.versions?.node === "string" && g.document === undefined) return "node";
  return "browser";
}
const RUNTIME = runtimeName();

export class RetryError extends TypeError {
  constructor(outcome, cause) {
    super(`saferetry: ${outcome.message} (${outcome.reason})`, { cause });
    this.name = "RetryError";
    this.reason = outcome.reason;
    this.report = outcome.report;
    this.retryAt = outcome.retryAt ?? null;
  }
}

/** The report of the operation that produced `response`, built when asked. */
export function reportOf(response) {
  return reports.get(response)?.report();
}

export class RetryPolicy {
  constructor(options = {}) {
    const o = options;
    const policy = new SpikePolicy(RUNTIME, o.maxAttempts, o.totalMs, o.attemptMs, o.baseMs, o.capMs, o.throttleBaseMs, o.responseBody);
    const random = o.random ?? Math.random;
    this.fetch = (input, init) => execute(policy, random, input, init);
  }
}

const text = (v) => (typeof v === "string" ? v : undefined);

/** One attempt: the response and (`read`) its body, or what rejected. */
async function attempt(input, init, signal, read) {
  let res;
  try {
    res = await fetch(input instanceof Request ? input.clone() : input, { ...init, signal });
  } catch (error) {
    return { error, body: false };
  }
  if (!read) return { res };
  try {
    return { res, bytes: await res.arrayBuffer() };
  } catch (error) {
    return { error, body: true };
  }
}

/** The caller's Response: the host's status, headers, url, redirected and
 * type around the buffered body. */
function rebuilt(res, bytes) {
  const out = new Response(bytes.byteLength ? bytes : null, { status: res.status, statusText: res.statusText, headers: res.headers });
  for (const key of ["url", "redirected", "type"]) Object.defineProperty(out, key, { value: res[key] });
  return out;
}

async function execute(policy, random, input, init) {
  const signal = init?.signal ?? null;
  const method = init?.method ?? input?.method ?? "GET";
  const headers = init?.headers ?? (input instanceof Request ? input.headers : undefined);
  const hasKey = headers !== undefined && new Headers(headers).has("idempotency-key");
  const streamed = init?.body instanceof ReadableStream;
  const m = policy.machine();
  let aborted = signal?.aborted ?? false;
  let wake = null;
  const onAbort = () => {
    aborted = true;
    wake?.(ABORT);
  };
  signal?.addEventListener("abort", onAbort);
  let last = null; // the last attempt's outcome: its response, or its error (the cause)
  try {
    let a = m.start(Date.now(), random(), method, hasKey, !streamed, aborted);
    for (;;) {
      const kind = a % 8;
      const ms = (a - kind) / 8;
      if (kind === DONE) {
        const out = last.bytes ? rebuilt(last.res, last.bytes) : last.res;
        reports.set(out, m);
        return out;
      }
      if (kind === FAIL) {
        const outcome = m.outcome();
        m.free();
        if (outcome.reason === "cancelled" && signal?.aborted) throw signal.reason;
        throw new RetryError(outcome, last?.error);
      }
      if (kind !== FETCH && kind !== FETCH_STREAM && kind !== SLEEP) throw new Error(`saferetry spike: unexpected action ${kind}`);
      if (aborted) {
        a = m.onAbort(Date.now());
        continue;
      }
      let timer;
      const controller = kind === SLEEP ? null : new AbortController();
      // A streamed body follows the caller's signal after the hand-over.
      const attemptSignal = kind === FETCH_STREAM && signal ? AbortSignal.any([controller.signal, signal]) : controller?.signal;
      const ev = await new Promise((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, ms, TIMER);
        if (controller) attempt(input, init, attemptSignal, kind === FETCH).then(resolve);
      });
      clearTimeout(timer);
      wake = null;
      if (ev === TIMER || ev === ABORT) {
        controller?.abort();
        a = ev === TIMER ? m.onTimer(Date.now(), random()) : m.onAbort(Date.now());
      } else if (ev.error !== undefined) {
        last = ev;
        const e = ev.error, cause = e?.cause;
        a = m.onError(Date.now(), random(), ev.body, String(e?.name ?? "Error"), text(e?.message), cause !== undefined,
          text(e?.code), text(cause?.code), text(cause?.syscall), text(cause?.message), String(input?.url ?? input), streamed);
      } else {
        last = ev;
        const { res } = ev, h = res.headers;
        a = m.onResponse(Date.now(), random(), res.status, h.get("retry-after"), h.get("retry-after-ms"), res.type === "cors");
        if (a % 8 === HEADERS) {
          a = m.onRateLimitHeaders(h.get("ratelimit"), h.get("x-ratelimit-remaining") ?? h.get("x-rate-limit-remaining"),
            h.get("x-ratelimit-reset") ?? h.get("x-rate-limit-reset"), h.get("x-ratelimit-reset-after"));
        }
        if (a % 8 !== DONE && !ev.bytes) res.body?.cancel().catch(() => {}); // an unread body we will not hand over
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
