// Chromium front end of the leak suite: the fault server (in this process,
// its staticDir the repository root) serves page.html, which runs the
// suite in the page against both of the server's origins; playwright-core
// drives the Debian Chromium. Run through `node tests/leaks/run.mjs chromium`.
import { fileURLToPath } from 'node:url';
import { startFaultServer } from '../../www/server/fault-server.mjs';
import { formatResult } from './workload.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXECUTABLE = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // window.gc() and exact (not bucketed) performance.memory figures:
  '--js-flags=--expose-gc', '--enable-precise-memory-info'];
const LAUNCH_MS = 30_000;
const PAGE_MS = 180_000;

/** Runs the suite in Chromium; prints the figures; resolves true when every check passed. */
export async function runChromium(args = []) {
  const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
  const t0 = Date.now();
  const server = await startFaultServer({ port: 0, host: '127.0.0.1', staticDir: ROOT, altPort: 0 });
  let browser;
  try {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: EXECUTABLE, headless: true, args: FLAGS, timeout: LAUNCH_MS });
    const page = await browser.newPage();
    // Figures only the browser side can read: Blink's heap and the
    // renderer's JS event listener count (after a GC of both heaps).
    const cdp = await page.context().newCDPSession(page);
    await page.exposeFunction('__cdpFigures', async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      const { embedderHeapUsedSize } = await cdp.send('Runtime.getHeapUsage');
      const { jsEventListeners } = await cdp.send('Memory.getDOMCounters');
      return { embedderHeapUsedSize, jsEventListeners };
    });
    // The page's own progress lines only (not the browser's notes on every
    // 503 and abort).
    page.on('console', (m) => { if (m.type() === 'log') console.log(`# [page] ${m.text()}`); });
    page.on('pageerror', (e) => console.log(`# [page error] ${e.message}`));
    const q = new URLSearchParams({ alt: server.altUrl.replace(/\/$/, '') });
    for (const k of ['ops', 'warmup', 'concurrency']) if (opt(`--${k}`)) q.set(k, opt(`--${k}`));
    const t1 = Date.now();
    await page.goto(`${server.url.replace(/\/$/, '')}/static/tests/leaks/page.html?${q}`, { timeout: LAUNCH_MS });
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: PAGE_MS, polling: 500 });
    const result = await page.evaluate(() => window.__result);
    const pageMs = Date.now() - t1;
    if (result.error) throw new Error(`page: ${result.error}`);
    const lines = formatResult(result);
    lines.splice(lines.length - result.checks.length - 1, 0,
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
  }
}
