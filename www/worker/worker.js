// A Cloudflare Worker that calls an upstream through a saferetry policy.
//
//   GET|POST /proxy?u=<path on the upstream>   e.g. /proxy?u=/s/seq/run1?steps=503,503,200
//
// The upstream's final response comes back as is, plus
//   X-Saferetry-Attempts: 3
//   X-Saferetry-Reason:   succeeded | http-stop | attempts-exhausted | ...
//   X-Saferetry-Report:   the report as compact JSON (attempts: status or error, times)
// When no response arrived, the worker answers 502 (the request failed or may
// have been delivered) or 503 with Retry-After (try later) and the same
// headers, with `{ reason, message, retryAt, report }` as JSON.
//
// `env.UPSTREAM` is the upstream's origin (http://127.0.0.1:PORT); only paths
// on it are fetched, so the worker is not an open proxy.
import { RetryPolicy, RetryError, reportOf } from 'saferetry';

// One policy per isolate: its retry quota is shared by every request it serves.
const policy = new RetryPolicy({ maxAttempts: 3, totalMs: 8_000, attemptMs: 3_000, baseMs: 50, capMs: 500 });

const json = (body, status, headers = {}) =>
  new Response(JSON.stringify(body, null, 2), { status, headers: { 'content-type': 'application/json', ...headers } });

// Header values must be ByteStrings: escape anything outside printable ASCII.
const ascii = (s) => s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

function reportHeaders(report) {
  const attempts = report.attempts.map((a) => ({
    startMs: a.startMs, durationMs: a.durationMs, status: a.status, error: a.error?.stage, code: a.error?.code,
    waitMs: a.plannedWaitMs,
  }));
  return {
    'x-saferetry-attempts': String(report.attempts.length),
    'x-saferetry-reason': report.reason,
    'x-saferetry-report': ascii(JSON.stringify({ reason: report.reason, elapsedMs: report.elapsedMs, attempts })),
  };
}

async function proxy(request, env) {
  const target = new URL(request.url).searchParams.get('u');
  if (!target?.startsWith('/') || target.startsWith('//')) return json({ error: 'u=<path on the upstream> required' }, 400);
  const upstream = new URL(target, env.UPSTREAM);

  const init = { method: request.method, headers: {} };
  for (const name of ['content-type', 'idempotency-key']) {
    const value = request.headers.get(name);
    if (value) init.headers[name] = value; // a caller's Idempotency-Key makes a POST safe to repeat
  }
  if (!['GET', 'HEAD'].includes(request.method)) init.body = await request.arrayBuffer(); // buffered: replayable

  try {
    const res = await policy.fetch(upstream, init);
    const headers = new Headers(res.headers);
    for (const [k, v] of Object.entries(reportHeaders(reportOf(res)))) headers.set(k, v);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  } catch (err) {
    if (!(err instanceof RetryError)) throw err;
    const headers = reportHeaders(err.report);
    const body = { reason: err.reason, message: err.message, retryAt: err.retryAt, report: err.report };
    if (err.retryAt != null) {
      headers['retry-after'] = String(Math.max(0, Math.ceil((err.retryAt - Date.now()) / 1000)));
      return json(body, 503, headers);
    }
    return json(body, 502, headers);
  }
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === '/proxy') return proxy(request, env);
    if (pathname === '/') {
      return new Response('saferetry worker example\nGET|POST /proxy?u=/s/seq/<run>?steps=503,503,200\n');
    }
    return new Response('not found', { status: 404 });
  },
};
