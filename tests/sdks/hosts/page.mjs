// The Chromium page of hosts.mjs: runs the case named in its query string and
// leaves the outcome in window.__result for tests/browsers/run-page.mjs.
import { runCase } from './entry.mjs';

const q = new URLSearchParams(location.search);
runCase(Object.fromEntries(q)).then(
  (r) => { window.__result = r; },
  (e) => { window.__result = { harnessError: String(e?.stack ?? e) }; },
);
