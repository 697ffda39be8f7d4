// A page under a service worker, in Chromium, Firefox and WebKit. The
// machine does not ask a browser's response whether it has a body
// (src/policy/runtime.rs `body_known`, `Always`): a browser's network gives
// every response one but an opaque one (empty for a 204), and Firefox's
// HEAD's answer none, which the machine never reads. A service worker may
// answer a page's `fetch` with a `Response` of its own, one without a body
// too: these checks hold that the page still gets a body (an empty one)
// there, as the rule says, and policy.fetch hands over what `fetch` gives:
// - the worker's 200 and 204 without a body, and a HEAD it passes to the
//   network, in each body mode: the body `fetch` gives (null or not, the
//   same bytes), one attempt that succeeded, the report's `responseBody`
//   by whether a body was handed over as it streams;
// - a GET the worker lets through to the network, the same.
// Were the worker's answer without a body null in a page, the buffered
// modes would read a body that is not there.
//
//   node tests/browsers/service-worker.mjs [chromium,firefox,webkit]
import http from 'node:http';
import { runPage } from './run-page.mjs';
import { servePackage } from './serve-package.mjs';

const BROWSERS = (process.argv[2] ?? 'chromium,firefox,webkit').split(',');

// Claims the page at once; answers /sw/none and /sw/204 itself, fetches
// /sw/head itself, lets everything else through.
const WORKER = `
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const { pathname } = new URL(event.request.url);
  if (pathname === '/sw/none') event.respondWith(new Response(null, { status: 200 }));
  if (pathname === '/sw/204') event.respondWith(new Response(null, { status: 204 }));
  if (pathname === '/sw/head') event.respondWith(fetch(event.request));
});`;

const PAGE = `<!doctype html><meta charset="utf-8"><title>service worker</title>
<script type="module">
try {
  const workers = navigator.serviceWorker;
  await workers.register('/sw/worker.js', { scope: '/sw/' });
  await workers.ready;
  for (let i = 0; i < 200 && !workers.controller; i++) await new Promise((r) => setTimeout(r, 50));
  const { RetryPolicy, reportOf } = await import('/pkg/web.js');
  const calls = [];
  for (const [path, method] of [['/sw/none', 'GET'], ['/sw/204', 'GET'], ['/sw/head', 'HEAD'], ['/sw/net', 'GET']]) {
    const host = await fetch(path, { method });
    const hostNull = host.body === null;
    const hostText = await host.text();
    for (const responseBody of ['stream', 'buffer', 'auto']) {
      const policy = new RetryPolicy({ responseBody, totalMs: 10000 });
      const controlled = workers.controller !== null;
      try {
        const res = await policy.fetch(path, { method });
        const report = reportOf(res);
        calls.push({ responseBody, path, method, controlled, hostNull, hostText, status: res.status, hostStatus: host.status, nullBody: res.body === null,
          text: await res.text(), reason: report.reason, attempts: report.attempts.length, reported: report.responseBody });
      } catch (error) {
        calls.push({ responseBody, path, method, controlled, error: String(error?.name) + ': ' + String(error?.message) });
      }
    }
  }
  window.__result = { calls };
} catch (error) {
  window.__result = { error: String(error?.stack ?? error) };
}
</script>`;

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/sw/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  if (url.pathname === '/sw/worker.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(WORKER);
  if (url.pathname === '/sw/head') return res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 5, 'cache-control': 'no-store' }).end('hello');
  if (url.pathname === '/sw/net') return res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 5, 'cache-control': 'no-store' }).end('hello');
  if (servePackage(url, res)) return;
  res.writeHead(404).end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

let passed = 0;
let failed = 0;
const check = (ok, what, detail) => {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ` — ${detail}`}`);
};

try {
  for (const browser of BROWSERS) {
    const { result } = await runPage({ browser, url: `${base}/sw/`, timeoutMs: 60_000 });
    if (result.error) {
      check(false, `${browser}: the page ran`, result.error);
      continue;
    }
    check(result.calls.length === 12, `${browser}: twelve calls made`, JSON.stringify(result.calls));
    for (const c of result.calls) {
      const label = `${browser} "${c.responseBody}" ${c.method} ${c.path}`;
      // Handed over as it streams: a body there, not a HEAD's (never
      // read), and in "stream", or of a 204 (never read either).
      const streamed = !c.hostNull && c.method !== 'HEAD' && (c.responseBody === 'stream' || c.path === '/sw/204');
      const want = {
        controlled: true, status: c.hostStatus, nullBody: c.hostNull, text: c.hostText,
        reason: 'succeeded', attempts: 1, reported: streamed ? 'stream' : 'buffer',
      };
      const got = Object.fromEntries(Object.keys(want).map((k) => [k, c[k]]));
      check(c.error === undefined && JSON.stringify(got) === JSON.stringify(want),
        `${label}: under the worker, the body fetch gives, in one attempt that succeeded, reported ${want.reported}`,
        `expected ${JSON.stringify(want)}, got ${JSON.stringify(c)}`);
    }
    // The rule itself: a body there, if empty, but for Firefox's HEAD.
    const nulls = result.calls.filter((c) => c.hostNull).map((c) => `${c.method} ${c.path}`);
    check(nulls.every((c) => c === 'HEAD /sw/head'), `${browser}: fetch gives every answer under the worker a body but a HEAD's`, nulls.join(', '));
  }
} finally {
  server.close();
  server.closeAllConnections();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
