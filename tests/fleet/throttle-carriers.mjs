// The throttle tier's carriers (tests/fleet/throttle.mjs): how each one's
// clients are started with their variants' specs and how their operations
// come back. Every client runs the same steady load (steady.mjs):
//   node      Node processes (throttle-client.mjs): saferetry on
//             `redisBudget` (a real redis-server started here), cockatiel,
//             the AWS-style limiter
//   workerd   Worker isolates (worker.mjs POST /steady, workerd-fleet.mjs):
//             saferetry on `durableBudget`, the authority in a real Durable
//             Object of w0's namespace
//   chromium  Chromium windows of one browser (throttle-tab.mjs): saferetry
//             on `tabBudget`, the authority in the leader tab
// Each carrier: `prepare()` sets it up (before the load's t0 is chosen),
// `run(jobs, deadline)` starts every job — `{ key, client, spec }`, one
// client running the variant `key` — and resolves with `{ ops }`, the
// operations per key (and `note`, a line to print), `close()` stops what
// it started. Every wait is bounded by `deadline`.
import http from 'node:http';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { launch } from '../browsers/webdriver.mjs';
import { freePort } from '../runtimes/port.mjs';
import { start, stop, waitExit } from '../runtimes/procs.mjs';
import { killRedis, startRedis } from './redis-server.mjs';
import { buildFleet, startFleet } from './workerd-fleet.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');

/** Adds one client's operations to `results[key]`. */
const collect = (results, key, ops) => (results[key] ??= []).push(...ops);

export function nodeCarrier() {
  let redis, port;
  return {
    async prepare() {
      port = await freePort();
      redis = await startRedis(path.join(os.tmpdir(), `saferetry-throttle-${process.pid}`), port);
      return `redis-server on ${port}`;
    },
    async run(jobs, deadline) {
      const procs = jobs.map(({ key, client, spec }) => ({
        key, p: start(`${key}-${client}`, process.execPath, [path.join(HERE, 'throttle-client.mjs'), JSON.stringify({ ...spec, redisUrl: `redis://127.0.0.1:${port}` })], { echo: false }),
      }));
      const t0 = jobs[0].spec.t0;
      while (Date.now() < t0 && !procs.every(({ p }) => p.lines.includes('ready'))) await sleep(50); // bounded by t0
      const late = procs.filter(({ p }) => !p.lines.includes('ready'));
      if (late.length) throw new Error(`clients not ready before the load starts: ${late.map(({ p }) => `${p.name}: ${p.tail}`).join('; ')}`);
      const results = {};
      for (const { key, p } of procs) {
        await waitExit(p, deadline);
        const line = p.lines.find((l) => l.startsWith('{'));
        if (!line) throw new Error(`${p.name} printed no operations (${p.tail})`);
        collect(results, key, JSON.parse(line).ops);
      }
      return { ops: results };
    },
    close: () => redis && killRedis(redis),
  };
}

export function workerdCarrier({ k, upstreamUrl }) {
  let wd;
  return {
    async prepare() {
      const out = path.join(REPO, 'test-output/throttle-workerd');
      rmSync(out, { recursive: true, force: true });
      const { configFile } = buildFleet({ out, k, faultUrl: upstreamUrl });
      wd = await startFleet(configFile, k);
      return `workerd, ${k} isolates: ${wd.bases.join(' ')}`;
    },
    async run(jobs, deadline) {
      const results = {};
      await Promise.all(jobs.map(async ({ key, client, spec }) => {
        const res = await fetch(`${wd.bases[client]}/steady`, {
          method: 'POST', body: JSON.stringify(spec), headers: { 'content-type': 'application/json' },
          signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())),
        });
        const text = await res.text();
        if (!res.ok) throw new Error(`workerd w${client} ${key}: ${res.status} ${text.slice(0, 2000)}`);
        collect(results, key, JSON.parse(text).ops);
      }));
      return { ops: results };
    },
    close: () => wd && stop(wd.proc),
  };
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm' };
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>saferetry throttle tab</title>
<script>
  window.__errors = [];
  addEventListener('error', (e) => window.__errors.push(String(e.error?.stack ?? e.message)));
</script>
<script type="importmap">{ "imports": { "saferetry": "/pkg/web.js" } }</script>
<script type="module" src="/fleet/throttle-tab.mjs"></script>
`;

/** The tabs' pages: the page, tests/fleet's modules it imports, the package (js/src). */
function startPages() {
  const server = http.createServer((req, res) => {
    const p = new URL(req.url, 'http://x').pathname;
    const file = p === '/page.html' ? null
      : /^\/fleet\/(throttle-tab|steady|operate)\.mjs$/.test(p) ? path.join(HERE, p.slice(7))
        : /^\/pkg\/(outbox-stores\/)?[a-z_-]+\.(js|wasm)$/.test(p) ? path.join(REPO, 'js/src', p.slice(5)) : undefined;
    if (file === undefined || (file && !existsSync(file))) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    res.writeHead(200, { 'content-type': TYPES[file ? path.extname(file) : '.html'] });
    res.end(file ? readFileSync(file) : PAGE);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

export function chromiumCarrier({ k }) {
  let browser, pages, windows;
  const inWindow = async (handle, script, args = []) => {
    await browser.session.cmd('POST', '/window', { handle });
    return browser.session.executeScript(script, args, 15_000);
  };
  return {
    async prepare() {
      pages = await startPages();
      browser = await launch('chromium');
      await browser.session.setTimeouts({ script: 15_000, pageLoad: 20_000 });
      // Windows of their own, not background tabs: a hidden tab's timers run at most once a second.
      windows = [await browser.session.cmd('GET', '/window')];
      while (windows.length < k) windows.push((await browser.session.cmd('POST', '/window/new', { type: 'window' })).handle);
      for (const handle of windows) {
        await browser.session.cmd('POST', '/window', { handle });
        await browser.session.navigate(`${pages.url}/page.html`, 20_000);
        const end = Date.now() + 10_000;
        while (!(await browser.session.executeScript('return window.__ready === true'))) { // bounded by `end`
          if (Date.now() > end) throw new Error(`a tab page was not ready in 10 s: ${await browser.session.executeScript('return window.__errors.join("\\n")')}`);
          await sleep(100);
        }
      }
      return `Chromium ${browser.browserVersion}, ${k} windows`;
    },
    async run(jobs, deadline) {
      const visibility = [];
      for (const [client, handle] of windows.entries()) {
        visibility.push(await inWindow(handle, 'return window.__steady.start(arguments[0])', [jobs.filter((j) => j.client === client).map(({ key, spec }) => ({ key, ...spec }))]));
      }
      const { t0, durationMs } = jobs[0].spec;
      await sleep(Math.max(0, Math.min(t0 + durationMs, deadline) - Date.now()));
      const results = {};
      for (const handle of windows) {
        let r;
        while (!(r = await inWindow(handle, 'return window.__steady.result()'))) { // bounded by `deadline`
          if (Date.now() > deadline) throw new Error('a tab did not finish its load by the deadline');
          await sleep(200);
        }
        if (r.error) throw new Error(`a tab's load threw: ${r.error}`);
        for (const [key, ops] of Object.entries(r)) collect(results, key, ops);
      }
      return { ops: results, note: `the windows' visibility at the start: ${visibility.join(', ')}` };
    },
    async close() {
      await browser?.close();
      pages?.server.close();
      pages?.server.closeAllConnections?.();
    },
  };
}
