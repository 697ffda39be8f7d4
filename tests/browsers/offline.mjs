// The offline wait, in a real Chromium taken offline by the DevTools
// protocol (chromedriver's `/goog/cdp/execute`: `navigator.onLine` turns
// false, every request fails, and going back online fires `online`). The
// machine asks its executor to listen to `online` while it waits; these
// checks hold it to the README ("The rules", `offline`):
// - an operation started offline sends nothing and shows `waiting` (why
//   `offline`); the `online` event resumes it, and it succeeds with one
//   request;
// - one still offline at its deadline ends `try-later` with reason
//   `offline`, having sent nothing.
// Firefox and WebKit have no WebDriver command that takes the browser
// offline, so they are not checked here.
//
//   node tests/browsers/offline.mjs
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch } from './webdriver.mjs';
import { servePackage } from './serve-package.mjs';

const PAGE = `<!doctype html><meta charset="utf-8"><title>offline</title>
<script type="module">
import { RetryPolicy } from '/pkg/web.js';
window.__policy = new RetryPolicy({ totalMs: 20000 });
window.__short = new RetryPolicy({ totalMs: 1500 });
window.__ready = true;
</script>`;

let hits = 0;
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  if (url.pathname === '/hit') {
    hits++;
    return res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok');
  }
  if (servePackage(url, res)) return;
  res.writeHead(404).end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

let passed = 0, failed = 0;
const check = (ok, what, detail) => {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? ` — ${detail}` : ''}`);
};

const h = await launch('chromium');
const js = (script, args = []) => h.session.executeScript(script, args);
const cdp = (cmd, params) => h.session.cmd('POST', '/goog/cdp/execute', { cmd, params });
const offline = (on) => cdp('Network.emulateNetworkConditions', { offline: on, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
/** Waits (bounded) until `script` returns a truthy value; returns it. */
async function until(what, script, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await js(script);
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

try {
  await h.session.navigate(base + '/');
  await until('the package loaded', 'return window.__ready === true');
  await cdp('Network.enable', {});

  // 1. Started offline, resumed by `online`.
  await offline(true);
  check(await js('return navigator.onLine') === false, 'the DevTools protocol took the page offline (navigator.onLine false)');
  await js(`window.__states = [];
    const op = window.__policy.run('/hit');
    const seen = (s) => window.__states.push({ state: s.state, why: s.why });
    seen(op.state); // entered inside run(), before anyone could subscribe
    op.subscribe(seen);
    op.result.then((r) => { window.__done = { kind: r.kind, reason: r.reason, attempts: r.report.attempts.length, status: r.response?.status }; });`);
  const waiting = await until('a waiting state', "return window.__states.find((s) => s.state === 'waiting')");
  check(waiting.why === 'offline', 'an operation started offline waits, why "offline"', JSON.stringify(waiting));
  await sleep(500);
  check(hits === 0 && !(await js('return window.__done')), 'nothing is sent while offline, and the operation has not ended', `${hits} requests`);
  await offline(false);
  const done = await until('the resumed operation', 'return window.__done');
  check(done.kind === 'succeeded' && done.status === 200 && done.attempts === 1 && hits === 1,
    'the online event resumes it: one request, succeeded', `${JSON.stringify(done)}, ${hits} requests`);

  // 2. Offline until the deadline.
  const before = hits;
  await offline(true);
  await js(`window.__late = undefined;
    window.__short.run('/hit').result.then((r) => { window.__late = { kind: r.kind, reason: r.reason }; });`);
  const late = await until('the offline operation to end', 'return window.__late', 10_000);
  check(late.kind === 'try-later' && late.reason === 'offline' && hits === before,
    'one still offline at its deadline ends try-later, reason "offline", having sent nothing', `${JSON.stringify(late)}, ${hits - before} requests`);
  await offline(false);
} catch (e) {
  check(false, 'the offline checks ran', e.message);
} finally {
  await h.close();
  server.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
