// Chromium front end of the leak suite. The fault server (in this process,
// its staticDir the repository root) serves page.html, which runs the suite
// in the page against both of the server's origins. Run through
// `node tests/leaks/run.mjs chromium`.
//
// playwright-core launches the Debian Chromium, but the page is NOT a
// Playwright page: Playwright enables the DevTools Network domain on every
// page it manages, and that agent keeps data for every request (measured:
// Blink's heap grows 150-550 bytes per plain fetch() with Network enabled,
// and stays flat without it), which would be counted against the library.
// So we open a bare target over Playwright's browser CDP session
// (Target.createTarget in the default browser context, which Playwright
// leaves alone) and talk to it through Target.sendMessageToTarget, enabling
// no domain at all: Runtime.evaluate, Runtime.addBinding,
// HeapProfiler.collectGarbage, Runtime.getHeapUsage and
// Memory.getDOMCounters work without one.
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFaultServer } from '../../www/server/fault-server.mjs';
import { formatResult } from './workload.js';
import { startDocServer } from './doc-server.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXECUTABLE = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // window.gc() and exact (not bucketed) performance.memory figures:
  '--js-flags=--expose-gc', '--enable-precise-memory-info'];
const LAUNCH_MS = 30_000;
const PAGE_MS = 540_000; // ~140 s on a quiet machine; a loaded one took over 300
const COMMAND_MS = 30_000;

/** A CDP session to one target, carried over the browser session. */
class TargetSession {
  #browser;
  #sessionId;
  #next = 0;
  #pending = new Map();
  #handlers = new Map();

  static async attach(browserSession, targetId) {
    const { sessionId } = await browserSession.send('Target.attachToTarget', { targetId, flatten: false });
    return new TargetSession(browserSession, sessionId);
  }

  constructor(browserSession, sessionId) {
    this.#browser = browserSession;
    this.#sessionId = sessionId;
    browserSession.on('Target.receivedMessageFromTarget', (e) => {
      if (e.sessionId !== sessionId) return;
      const m = JSON.parse(e.message);
      if (m.id !== undefined) {
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (p) p(m);
      } else if (m.method) {
        this.#handlers.get(m.method)?.(m.params);
      }
    });
  }

  on(method, fn) { this.#handlers.set(method, fn); }

  send(method, params = {}, timeoutMs = COMMAND_MS) {
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.#pending.delete(id); reject(new Error(`${method}: no answer within ${timeoutMs} ms`)); }, timeoutMs);
      timer.unref();
      this.#pending.set(id, (m) => {
        clearTimeout(timer);
        if (m.error) reject(new Error(`${method}: ${JSON.stringify(m.error)}`));
        else resolve(m.result);
      });
      this.#browser.send('Target.sendMessageToTarget', { sessionId: this.#sessionId, message: JSON.stringify({ id, method, params }) })
        .catch((e) => { clearTimeout(timer); this.#pending.delete(id); reject(e); });
    });
  }

  async evaluate(expression) {
    const r = await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }
}

/** Runs the suite in Chromium; prints the figures; resolves true when every check passed. */
export async function runChromium(args = []) {
  const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
  const t0 = Date.now();
  const server = await startFaultServer({ port: 0, host: '127.0.0.1', staticDir: ROOT, altPort: 0 });
  // The dropped-response case's servers: one origin per round (Chromium
  // opens at most 6 connections per origin).
  const docs = [];
  for (let i = 0; i < 7; i += 1) docs.push(await startDocServer());
  let browser;
  try {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: EXECUTABLE, headless: true, args: FLAGS, timeout: LAUNCH_MS });
    const bs = await browser.newBrowserCDPSession();
    const { targetId } = await bs.send('Target.createTarget', { url: 'about:blank' });
    const page = await TargetSession.attach(bs, targetId);

    // The page asks for Blink's heap and the renderer's JS event listener
    // count by calling window.__leaksCdp(id); we answer with
    // window.__leaksCdpAnswer(id, figures), after a GC of both heaps. With
    // the Runtime domain disabled a binding reaches only the contexts that
    // exist when it is added, so it is added once the page's document is
    // there (the page waits for it before it starts).
    page.on('Runtime.bindingCalled', async ({ name, payload }) => {
      if (name !== '__leaksCdp') return;
      let figures;
      try {
        await page.send('HeapProfiler.collectGarbage');
        const { embedderHeapUsedSize, usedSize, backingStorageSize } = await page.send('Runtime.getHeapUsage');
        const { jsEventListeners } = await page.send('Memory.getDOMCounters');
        figures = { embedderHeapUsedSize, usedSize, backingStorageSize, jsEventListeners };
      } catch (e) {
        figures = { error: String(e?.message ?? e) };
      }
      await page.evaluate(`window.__leaksCdpAnswer(${JSON.stringify(payload)}, ${JSON.stringify(figures)})`).catch(() => {});
    });

    const q = new URLSearchParams({ alt: server.altUrl.replace(/\/$/, '') });
    for (const k of ['ops', 'warmup', 'concurrency']) if (opt(`--${k}`)) q.set(k, opt(`--${k}`));
    q.set('docs', docs.map((d) => d.url).join(','));
    if (args.includes('--dropped-only')) q.set('droppedOnly', '1');
    const t1 = Date.now();
    await page.send('Page.navigate', { url: `${server.url.replace(/\/$/, '')}/static/tests/leaks/page.html?${q}` });
    for (let i = 0; ; i += 1) { // bounded: 100 × 100 ms
      const here = await page.evaluate('location.pathname').catch(() => '');
      if (here.endsWith('/tests/leaks/page.html')) break;
      if (i >= 100) throw new Error(`page.html did not load within 10 s (at ${here || '?'})`);
      await sleep(100);
    }
    await page.send('Runtime.addBinding', { name: '__leaksCdp' });

    // Poll for window.__result, streaming the page's progress lines.
    let seen = 0;
    let result;
    for (;;) { // bounded by PAGE_MS
      const v = await page.evaluate(`(() => ({ done: window.__result !== undefined, result: window.__result ?? null,
        log: Array.isArray(window.__log) ? window.__log.slice(${seen}) : [] }))()`).catch(() => ({ done: false, log: [] }));
      for (const line of v.log) console.log(`# [page] ${line}`);
      seen += v.log.length;
      if (v.done) { result = v.result; break; }
      if (Date.now() - t1 > PAGE_MS) throw new Error(`page set no window.__result within ${PAGE_MS / 1000} s`);
      await sleep(500);
    }
    const pageMs = Date.now() - t1;
    if (result.error) throw new Error(`page: ${result.error}`);
    await bs.send('Target.closeTarget', { targetId }).catch(() => {});
    const lines = result.figures ? formatResult(result)
      : [...result.checks.map((c) => `${c.ok ? 'ok' : 'FAILED'} ${c.name}${c.detail ? ` (${c.detail})` : ''}`),
        `${result.checks.filter((c) => c.ok).length} passed, ${result.checks.filter((c) => !c.ok).length} failed`];
    lines.splice(lines.length - result.checks.length - 1, 0, ...(result.dropped ?? []),
      `browser: Chromium ${browser.version()}; launch ${t1 - t0} ms, page ${pageMs} ms`);
    for (const line of lines) console.log(line);
    return result.checks.every((c) => c.ok);
  } catch (e) {
    console.error(`leaks/chromium: ${e?.stack ?? e}`);
    console.log('0 passed, 1 failed');
    return false;
  } finally {
    await browser?.close().catch(() => {});
    await server.close();
    for (const d of docs) await d.close();
  }
}
