// Open a page in a real browser and wait for `window.__result`.
//   import { runPage } from './run-page.mjs'
//   node tests/browsers/run-page.mjs <chromium|firefox|webkit> <url> [timeoutMs]
// The page sets window.__result (any JSON value) when it is done; lines it
// pushes to window.__log (array of strings) are streamed to onLog (default:
// stderr, prefixed with the browser name) while we wait.
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { launch, BROWSERS } from './webdriver.mjs';

const POLL = `const r = window.__result, l = Array.isArray(window.__log) ? window.__log.slice(arguments[0]) : [];
  return { done: r !== undefined, result: r === undefined ? null : JSON.parse(JSON.stringify(r)), log: l.map(String) };`;

/** Polls the open page until window.__result is set or the time is up. */
export async function waitForResult(session, { timeoutMs = 30_000, onLog = () => {} } = {}) {
  const until = Date.now() + timeoutMs;
  let seen = 0;
  for (;;) { // bounded by `until`
    const left = until - Date.now();
    const v = await session.executeScript(POLL, [seen], Math.max(1000, Math.min(10_000, left)));
    for (const line of v.log) onLog(line);
    seen += v.log.length;
    if (v.done) return v.result;
    if (left <= 0) throw new Error(`page set no window.__result within ${timeoutMs} ms`);
    await sleep(Math.min(100, left));
  }
}

/**
 * runPage({ browser, url, timeoutMs, screenshotPath?, onLog? })
 *   → { result, browser, browserVersion, userAgent, timings: { launchMs, pageMs, closeMs } }
 * timeoutMs bounds the page (navigation + waiting); launch has its own 30 s bound.
 */
export async function runPage({ browser, url, timeoutMs = 30_000, screenshotPath, onLog, handle }) {
  onLog ??= (line) => process.stderr.write(`[${browser}] ${line}\n`);
  const t0 = Date.now();
  const h = handle ?? await launch(browser);
  const t1 = Date.now();
  try {
    await h.session.setTimeouts({ pageLoad: timeoutMs, script: timeoutMs });
    await h.session.navigate(url, timeoutMs);
    const result = await waitForResult(h.session, { timeoutMs: timeoutMs - (Date.now() - t1), onLog });
    const userAgent = await h.session.executeScript('return navigator.userAgent');
    if (screenshotPath) await writeFile(screenshotPath, await h.session.screenshot());
    const t2 = Date.now();
    if (!handle) await h.close();
    return { result, browser, browserVersion: h.browserVersion, userAgent,
      timings: { launchMs: t1 - t0, pageMs: t2 - t1, closeMs: Date.now() - t2 } };
  } finally {
    if (!handle) await h.close(); // idempotent; also runs on error
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [browser, url, ms] = process.argv.slice(2);
  if (!BROWSERS.includes(browser) || !url) {
    console.error(`usage: node tests/browsers/run-page.mjs <${BROWSERS.join('|')}> <url> [timeoutMs]`);
    process.exit(2);
  }
  try {
    const r = await runPage({ browser, url, timeoutMs: Number(ms) || 30_000 });
    console.log(JSON.stringify(r.result));
    console.error(`[${browser}] ${r.browserVersion}: launch ${r.timings.launchMs} ms, page ${r.timings.pageMs} ms`);
  } catch (e) {
    console.error(`run-page: ${browser}: ${e.message}`);
    process.exitCode = 1;
  }
}
