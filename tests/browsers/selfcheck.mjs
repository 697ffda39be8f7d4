// Self-check of the browser harness: a page on 127.0.0.1 fetches from its own
// server and reports { ok, status, ua }. Runs in every browser (or those named
// on the command line) and prints one line each plus "N passed, M failed".
//   node tests/browsers/selfcheck.mjs [chromium] [firefox] [webkit]
import { createServer } from 'node:http';
import { runPage } from './run-page.mjs';
import { BROWSERS } from './webdriver.mjs';

const PAGE = `<!doctype html><meta charset="utf-8"><title>selfcheck</title>
<script type="module">
window.__log = ['page loaded'];
try {
  const res = await fetch('/ping', { method: 'POST', body: 'hello' });
  const text = await res.text();
  window.__log.push('fetched ' + res.status + ' ' + text);
  window.__result = { ok: res.ok && text === 'pong:hello', status: res.status, ua: navigator.userAgent };
} catch (e) {
  window.__result = { ok: false, error: String(e) };
}
</script>`;

let pings = 0;
const server = createServer((req, res) => {
  if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  if (req.url === '/ping' && req.method === 'POST') {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => { pings++; res.writeHead(200, { 'content-type': 'text/plain' }).end(`pong:${body}`); });
    return;
  }
  res.writeHead(404).end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/`;

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : BROWSERS;
let passed = 0, failed = 0;
for (const browser of wanted) {
  const before = pings;
  try {
    const r = await runPage({ browser, url, timeoutMs: 20_000 });
    const ok = r.result?.ok === true && pings === before + 1;
    ok ? passed++ : failed++;
    console.log(`${ok ? 'PASS' : 'FAIL'} ${browser} ${r.browserVersion}: launch ${r.timings.launchMs} ms, page ${r.timings.pageMs} ms, close ${r.timings.closeMs} ms; server saw ${pings - before} POST; result ${JSON.stringify(r.result)}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${browser}: ${e.message}`);
  }
}
server.close();
server.closeAllConnections();
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
