// Deterministic failures: requests that fail the same way every time. The
// policy must send exactly as many requests as fetch (never retry them) and
// reject with a TypeError: the host's own, or one whose cause is the host's.
// These cases also feed `--shapes` (error-shapes.json).
import { ownRedirectError, retriedNetworkFailure, standardStop } from './deliberate.mjs';

export function failureCases({ add, runtime }) {
  const shape = { shape: true };
  // What a browser reports as a bare network failure is retried (README 4).
  const bare = { ...shape, ...retriedNetworkFailure(runtime) };
  const hopTo = (t, loc) => t.fetch(t.u({ loc }));
  // A refused Location where saferetry follows hops: its own words (README 3).
  const refusedHop = { ...bare, ...ownRedirectError(runtime, ['deno', 'bun', 'workerd'], 'a Location fetch will not follow') };
  // Deno refuses an unparsable Location even with redirect: "manual": its own error reaches the caller.
  const unparsableHop = { ...bare, ...ownRedirectError(runtime, ['bun', 'workerd'], 'a Location that is not a URL') };

  add('A redirect met with redirect: "error" fails as fetch fails, never retried', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }) }), { redirect: 'error' }), bare);
  add('An integrity value that does not match the body gets what fetch gives, never retried',
    (t) => t.fetch(t.u({ body: 'hello' }), { integrity: 'sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }), bare);
  add('A malformed integrity value (sha256-AAAA) on a body that does not match it rejects or resolves as fetch does',
    (t) => t.fetch(t.u({ body: 'hello' }), { integrity: 'sha256-AAAA' }), bare);
  add('A matching integrity value gets what fetch gives',
    (t) => t.fetch(t.u({ body: 'ok' }), { integrity: 'sha256-Jok2eyBcFs4y7UIAlCuLix4mLfxw2byfvHfElpmk8d8=' }), shape);
  add('A header value with a NUL byte fails as fetch fails, nothing sent', (t) => t.fetch(t.u(), { headers: { 'X-Test': 'a\u0000b' } }), shape);
  // WPT header-value-null-byte.any.js: the NUL is in the response's header.
  // workerd reports it as "Network connection lost.", as a lost connection (README 4).
  add('A response with a NUL byte in a header value fails as fetch fails, never retried', (t) => t.fetch(t.u({ nul: 1 })),
    { ...shape, ...retriedNetworkFailure(runtime, { runtimes: ['workerd', 'chromium', 'firefox', 'webkit'] }) });
  add('A header name with a space fails as fetch fails, nothing sent', (t) => t.fetch(t.u(), { headers: { 'Bad Name': 'x' } }), shape);
  add('A redirect to a data: URL fails as fetch fails, never retried', (t) => hopTo(t, 'data:text/plain,hi'), refusedHop);
  add('A redirect to an ftp: URL fails as fetch fails, never retried', (t) => hopTo(t, 'ftp://127.0.0.1/x'), refusedHop);
  add('A redirect to an unparsable Location (http://[bad) fails as fetch fails, never retried', (t) => hopTo(t, 'http://[bad'), unparsableHop);
  add('A redirect to a javascript: URL fails as fetch fails, never retried', (t) => hopTo(t, 'javascript:alert(1)'), refusedHop);
  add('An ftp: input URL fails as fetch fails, nothing sent', (t) => t.fetch(t.u().replace(/^http:/, 'ftp:')), shape);
  add('An unknown scheme (htp:) in the input URL fails as fetch fails, nothing sent', (t) => t.fetch(t.u().replace(/^http:/, 'htp:')), shape);
  add('An unparsable input URL fails as fetch fails, nothing sent', (t) => t.fetch('http://[bad/'), shape);
  for (const method of ['CONNECT', 'TRACE', 'TRACK']) {
    // Bun sends a CONNECT; the server drops the connection: a network failure, not retried (CONNECT is not idempotent).
    add(`The method ${method} (forbidden by the standard) gets what fetch gives, sent as often`, (t) => t.fetch(t.u(), { method }),
      { ...shape, ...(method === 'CONNECT' ? retriedNetworkFailure(runtime, { attempts: 1, runtimes: ['bun'] }) : {}) });
  }
  add('A method that is not a token gets what fetch gives, sent as often', (t) => t.fetch(t.u(), { method: 'BAD METHOD' }), shape);
  add('A URL with credentials gets what fetch gives, sent as often', (t) => t.fetch(t.u().replace('://', '://user:pass@')), shape);
  add('A GET with a body fails as fetch fails, nothing sent', (t) => t.fetch(t.u(), { method: 'GET', body: 'x' }), shape);
  add('A HEAD with a body fails as fetch fails, nothing sent', (t) => t.fetch(t.u(), { method: 'HEAD', body: 'x' }), shape);
  add('A ReadableStream body without duplex: "half" fails as fetch fails, nothing sent', (t) => t.fetch(t.u(), {
    method: 'POST', body: new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('streamed')); c.close(); } }),
  }), shape);
  add('An invalid redirect mode fails as fetch fails, nothing sent', (t) => t.fetch(t.u(), { redirect: 'bogus' }), shape);
  add('mode: "navigate" in init gets what fetch gives, sent as often', (t) => t.fetch(t.u(), { mode: 'navigate' }), shape);
  add('cache: "only-if-cached" outside mode "same-origin" gets what fetch gives, sent as often', (t) => t.fetch(t.u(), { cache: 'only-if-cached', mode: 'cors' }), shape);
  // Bun and workerd do not block the port: a refused connection, retried.
  add('A blocked port (25) fails as fetch fails, nothing sent', (t) => t.fetch(t.u().replace(/:\d+\//, ':25/')),
    { ...shape, ...retriedNetworkFailure(runtime, { runtimes: ['bun', 'workerd', 'chromium', 'firefox', 'webkit'] }) });
  add('21 redirects fail as fetch fails, never retried', (t) => t.fetch(t.u({ hops: 21 })),
    { ...bare, ...standardStop(runtime, ['bun'], 21, "a 21st redirect is refused, where Bun's fetch follows it"),
      ...ownRedirectError(runtime, ['deno', 'workerd'], 'a 21st redirect') });
  add('mode: "same-origin" redirected to another origin gets what fetch gives, never retried', (t) => t.fetch(t.u({ loc: t.u({}, 'alt') }), { mode: 'same-origin' }),
    { ...bare, ...standardStop(runtime, ['deno', 'bun', 'workerd'], 1, 'mode "same-origin" is enforced on a hop to another origin, which this runtime\'s fetch follows') });
  // Requests that fail whatever the network does (policy::runtime::doomed):
  // a browser's bare TypeError for them is a refusal, never retried.
  add('mode: "same-origin" to another origin gets what fetch gives, sent as often', (t) => t.fetch(t.u({}, 'alt'), { mode: 'same-origin' }), shape);
  // Outside browsers https: to the plain-HTTP port is a failed TLS handshake: a network failure, retried (README 1).
  add('mode: "same-origin" to another scheme and port gets what fetch gives, sent as often',
    (t) => t.fetch(t.u({}, 'alt').replace('http:', 'https:'), { mode: 'same-origin' }),
    runtime === 'workerd' ? { skip: "workerd's failed TLS handshake is an Error whose message carries a fresh random reference on every call" }
      : { ...shape, ...retriedNetworkFailure(runtime, { runtimes: ['node', 'deno', 'bun'] }) });
  add('integrity with mode: "no-cors" to another origin gets what fetch gives, never retried',
    (t) => t.fetch(t.u({ body: 'ok' }, 'alt'), { mode: 'no-cors', integrity: 'sha256-Jok2eyBcFs4y7UIAlCuLix4mLfxw2byfvHfElpmk8d8=' }), shape);
  add('A header value with a NUL byte on a Request input fails as fetch fails, nothing sent',
    (t) => t.fetch(new Request(t.u()), { headers: { 'X-Test': 'a\u0000b' } }), shape);
  add('A header value with a NUL byte on a POST with an idempotency key fails as fetch fails, nothing sent',
    (t) => t.fetch(t.u(), { method: 'POST', body: 'p', headers: { 'X-Test': 'a\u0000b' }, retry: { idempotencyKey: 'k-1' } }), shape);
}
