// What a page sees from fetch() when the network fails, in Chromium, Firefox
// and WebKit, against raw 127.0.0.1 fault servers that count what they got.
//
//   node tests/browsers/measure-failures.mjs [--runs 3] [--repeats 5] [browser...]
//       measure; writes failure-matrix.json and failure-matrix.md next to this file
//   node tests/browsers/measure-failures.mjs --render
//       rewrite failure-matrix.md from failure-matrix.json (no browser)
//   node tests/browsers/measure-failures.mjs --check [browser...]
//       re-measure once and fail (exit 1) if an error shape or a server count
//       differs from the recorded matrix and from the later sightings in
//       failure-seen.json; prints "N passed, M failed"
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, BROWSERS } from './webdriver.mjs';
import { freePort } from '../runtimes/port.mjs';
import { runPage } from './run-page.mjs';
import { startFaultServer } from './fault-servers.mjs';
import { pageHtml } from './failure-page.mjs';
import { renderMarkdown, shapeKey } from './failure-report.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const JSON_PATH = join(HERE, 'failure-matrix.json');
// Shapes seen by later checks, each with what it means for classification.
const SEEN_PATH = join(HERE, 'failure-seen.json');

// id, what happens, server mode (null: a closed port), repeated per run?
export const CASES = [
  ['s1', 'POST to a closed port (connection refused)', null, true],
  ['s4a', 'server closes on accept, before reading the request (FIN)', 'destroy-on-accept', true],
  ['s4b', 'server resets on accept, before reading the request (RST)', 'rst-on-accept', true],
  ['s5a', 'server reads the whole POST, then destroy() (FIN): response lost', 'read-then-destroy', true],
  ['s5b', 'server reads the whole POST, then resetAndDestroy() (RST)', 'read-then-rst', true],
  ['s6b', 'GET: 200, Content-Length 100, 7 bytes sent, then FIN (body cut)', 'cut-body', true],
  ['s9a', "POST → 307 to a closed port, redirect:'follow'", 'redirect-307', false],
  ['s9c', "POST → 307 to a closed port, redirect:'manual'", 'redirect-307', false],
  ['s7a', 'POST read, never answered; AbortSignal.timeout(300) fires while waiting for headers', 'no-answer', false],
  ['s6a', 'GET: 200 + 7 of 100 bytes, then stall; AbortSignal.timeout(300) fires during text()', 'stall-body', false],
  ['s8a', 'caller abort() (no reason) at 100 ms, waiting for headers', 'no-answer', false],
  ['s8b', "caller abort(new Error('custom-reason')) at 100 ms", 'no-answer', false],
  ['s8c', "caller abort('string-reason') at 100 ms", 'no-answer', false],
  ['s8d', 'signal already aborted before fetch()', 'no-answer', false],
  ['s8e', 'caller abort() at 100 ms while reading a stalled body', 'stall-body', false],
  ['s8f', "caller abort(new Error('custom-reason')) at 100 ms while reading a stalled body", 'stall-body', false],
  ['s5c', 'keep-alive trap: POST "first" answered 200; 100 ms later POST "second" on the reused connection is read, then the connection destroyed (FIN)', 'keepalive-kill', false],
  ['s5e', 'as s5c, and the server stops listening for 400 ms after dropping "second" (an automatic resend is refused)', 'keepalive-kill', false],
  ['s5g', 'as s5c with GET (?n=first, ?n=second) instead of POST', 'keepalive-kill', false],
].map(([id, title, mode, repeat]) => ({ id, title, mode, repeat }));

async function measureRun(browser, handle, { repeats }) {
  const closedPort = await freePort();
  const servers = {};
  const page = createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (u.pathname === '/__counts') {
      const s = servers[u.searchParams.get('id')];
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(s ? s.counts : null));
    }
    if (u.pathname === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml());
    res.writeHead(404).end();
  });
  try {
    for (const c of CASES) {
      if (c.mode) servers[c.id] = await startFaultServer(c.mode, { closedPort, pauseMs: c.id === 's5e' ? 400 : 0 });
    }
    await new Promise((r) => page.listen(0, '127.0.0.1', r));
    const cfg = { closedPort, cases: CASES.map((c) => ({ id: c.id, port: servers[c.id]?.port ?? 0, repeats: c.repeat ? repeats : 1 })) };
    const url = `http://127.0.0.1:${page.address().port}/?cfg=${encodeURIComponent(JSON.stringify(cfg))}`;
    const log = process.env.VERBOSE ? (l) => process.stderr.write(`  [${browser}] ${l}\n`) : () => {};
    const r = await runPage({ browser, url, timeoutMs: 90_000, handle, onLog: log });
    return r.result;
  } finally {
    page.closeAllConnections?.();
    await new Promise((r) => page.close(() => r()));
    await Promise.all(Object.values(servers).map((s) => s.close()));
  }
}

async function measureBrowser(browser, opts) {
  const t0 = Date.now();
  const handle = await launch(browser);
  const launchMs = Date.now() - t0;
  try {
    const runs = [];
    for (let i = 0; i < opts.runs; i++) runs.push(await measureRun(browser, handle, opts));
    return { browserVersion: handle.browserVersion, ua: runs[0].ua, launchMs, totalMs: Date.now() - t0, runs: runs.map((r) => r.results) };
  } finally {
    await handle.close();
  }
}

function parseArgs(argv) {
  const o = { check: false, runs: 3, repeats: 5, browsers: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--check') o.check = true;
    else if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--repeats') o.repeats = Number(argv[++i]);
    else if (BROWSERS.includes(a)) o.browsers.push(a);
    else { console.error(`unknown argument ${a}`); process.exit(2); }
  }
  if (!o.browsers.length) o.browsers = [...BROWSERS];
  if (o.check) { o.runs = 1; o.repeats = 1; }
  return o;
}

async function main() {
  if (process.argv[2] === '--render') {
    writeFileSync(join(HERE, 'failure-matrix.md'), renderMarkdown(JSON.parse(readFileSync(JSON_PATH, 'utf8'))));
    return 0;
  }
  const opts = parseArgs(process.argv.slice(2));
  if (!opts.check) {
    const data = { generated: new Date().toISOString(), node: process.version, runs: opts.runs, repeats: opts.repeats, cases: CASES, browsers: {} };
    for (const b of opts.browsers) {
      process.stderr.write(`measuring ${b} (${opts.runs} runs)...\n`);
      data.browsers[b] = await measureBrowser(b, opts);
      process.stderr.write(`  ${b} ${data.browsers[b].browserVersion}: launch ${data.browsers[b].launchMs} ms, total ${data.browsers[b].totalMs} ms\n`);
    }
    writeFileSync(JSON_PATH, JSON.stringify(data, null, 1) + '\n');
    writeFileSync(join(HERE, 'failure-matrix.md'), renderMarkdown(data));
    console.log(`wrote ${JSON_PATH} and failure-matrix.md`);
    return 0;
  }

  const recorded = JSON.parse(readFileSync(JSON_PATH, 'utf8'));
  const seen = JSON.parse(readFileSync(SEEN_PATH, 'utf8'));
  let passed = 0, failed = 0;
  for (const b of opts.browsers) {
    const t0 = Date.now();
    let got;
    try {
      got = await measureBrowser(b, opts);
    } catch (e) {
      failed++;
      console.log(`FAIL ${b}: could not measure: ${e.message.split('\n')[0]}`);
      continue;
    }
    const rec = recorded.browsers[b];
    if (!rec) { failed++; console.log(`FAIL ${b}: nothing recorded for this browser`); continue; }
    if (rec.browserVersion !== got.browserVersion) console.log(`note ${b}: version ${got.browserVersion}, recorded ${rec.browserVersion}`);
    for (const c of CASES) {
      const later = (seen[b]?.[c.id] ?? []).map((s) => s.shape);
      const known = new Set([...rec.runs.flat().filter((r) => r.id === c.id).map(shapeKey), ...later]);
      const bad = got.runs.flat().filter((r) => r.id === c.id && !known.has(shapeKey(r)));
      if (!known.size) { failed++; console.log(`FAIL ${b} ${c.id}: no recorded shape`); continue; }
      if (!bad.length) { passed++; continue; }
      failed++;
      console.log(`FAIL ${b} ${c.id} (${c.title}): error shape or server count changed\n  got:      ${shapeKey(bad[0])}\n  recorded: ${[...known].join('\n            ')}`);
    }
    console.log(`${b} ${got.browserVersion}: checked in ${Date.now() - t0} ms`);
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
