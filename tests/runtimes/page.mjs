// A suite (suite.mjs beside this file: e2e or fidelity) in a browser page. Loaded two ways by run.mjs:
//  - as is, from a page whose import map maps `saferetry` to the installed
//    package's browser entry (what a browser-resolving bundler would pick);
//  - bundled by esbuild (--bundle --format=esm --platform=browser).
// Query: runtime=<chromium|firefox|webkit>&url=<server>&alt=<alt origin>[&filter=...][&mode=<suite mode>]
// Streams lines to window.__log and sets window.__result when done.
import * as saferetry from 'saferetry';
import { runSuite } from './suite.mjs';

window.__log ??= [];
window.__started = true;
const q = new URLSearchParams(location.search);
const log = (line) => window.__log.push(String(line));

let entry = null;
try {
  entry = import.meta.resolve('saferetry'); // the import map's answer; throws inside a bundle
} catch { /* bundled: no specifier left to resolve */ }
log(`entry ${entry ?? '(bundled)'}`);
// Where the wasm actually came from (the package's `new URL(..., import.meta.url)`).
const loaded = performance.getEntriesByType('resource').map((e) => e.name);
const wasm = loaded.filter((n) => /\.wasm(\?|$)/.test(n));
log(`wasm ${wasm.join(', ') || '(no resource entry)'}`);
// The package's modules the page loaded before it used anything but RetryPolicy (unbundled: one per file).
const modules = loaded.filter((n) => /\/saferetry\/src\/.*\.js(\?|$)/.test(n)).map((n) => n.replace(/^.*\/saferetry\/src\//, '').replace(/\?.*$/, ''));
const detected = new saferetry.RetryPolicy({}).runtime;
log(`detected ${detected}`);
try {
  // The fleet's authority is a module of its own in a browser, imported
  // only now: the wasm above is what a page that only retries loads.
  const { BudgetAuthority } = await import('saferetry/authority');
  const { passed, failed, skipped, results } = await runSuite({
    saferetry: { ...saferetry, BudgetAuthority },
    server: { url: q.get('url') ?? location.origin, altUrl: q.get('alt') },
    runtime: q.get('runtime'),
    filter: q.get('filter') || undefined,
    mode: q.get('mode') || undefined,
    log,
  });
  window.__result = { passed, failed, skipped, results, entry, wasm, modules, detected };
} catch (err) {
  window.__result = { error: `suite crashed: ${err?.stack ?? err}` };
}
