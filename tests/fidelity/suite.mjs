// The fidelity suite: `policy.fetch` against the host's `fetch`, the same
// calls side by side (harness.mjs), in any of the seven runtimes. Web-standard
// APIs only. Same interface as tests/e2e/suite.mjs, so the same runners load it:
//
//   cases({ saferetry, server: { url, altUrl }, runtime }) -> [{ name, run, skip, shape, deliberate }]
//   runSuite({ saferetry, server, runtime, filter, log, timeoutMs, mode })
//     mode "compare" (default): one line per case, then "N passed, M failed"
//     mode "shapes": only the deterministic-failure cases, the host alone;
//       one "shape <json>" line per case (what the host throws)
//     mode "selfcheck": the host's fetch on both sides; every case must pass,
//       the deliberate ones by failing (checks that the harness compares
//       like with like)
import { makeHarness, restoreGlobalFetch } from './harness.mjs';
import { failureCases } from './cases-failures.mjs';
import { basicCases } from './cases-basic.mjs';
import { schemeCases } from './cases-schemes.mjs';
import { redirectCases } from './cases-redirect.mjs';
import { abortCases } from './cases-abort.mjs';
import { globalCases } from './cases-global.mjs';

export function cases({ saferetry, server, runtime = 'unknown', selfcheck = false }) {
  const h = makeHarness({ saferetry, server, runtime, selfcheck });
  for (const register of [globalCases, failureCases, schemeCases, basicCases, redirectCases, abortCases]) register(h);
  return h.list;
}

function selects(filter, name) {
  if (filter == null || filter === '') return true;
  if (typeof filter === 'function') return filter(name);
  return name.toLowerCase().includes(String(filter).toLowerCase());
}

const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' | ');

async function bounded(fn, ms) {
  let timer;
  try {
    return await Promise.race([
      Promise.resolve().then(fn),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms); }),
    ]);
  } finally {
    clearTimeout(timer);
    restoreGlobalFetch(); // a case that timed out may have left its fetch in the slot
  }
}

// A case takes 2 s at most when nothing hangs; a runner's longer bound (the
// e2e suite's 15 s) is cut to this.
const MAX_CASE_MS = 5000;

export async function runSuite({ saferetry, server, runtime = 'unknown', filter, log = (line) => console.log(line), timeoutMs = MAX_CASE_MS, mode = 'compare' }) {
  timeoutMs = Math.min(timeoutMs, MAX_CASE_MS);
  const shapes = mode === 'shapes';
  const selected = cases({ saferetry, server, runtime, selfcheck: mode === 'selfcheck' }).filter((c) => (!shapes || c.shape) && selects(filter, c.name));
  const results = [];
  let passed = 0, failed = 0, skipped = 0;
  for (const c of selected) {
    if (c.skip) {
      skipped += 1;
      results.push({ name: c.name, status: 'skipped', ok: null, skipped: c.skip, error: null, ms: 0 });
      log(`skip ${c.name} — ${c.skip}`);
      continue;
    }
    const t0 = Date.now();
    let error = null;
    let value;
    try {
      value = await bounded(shapes ? c.shapeRun : c.run, timeoutMs);
    } catch (err) {
      error = err instanceof Error ? `${err.name}: ${err.message}` : `thrown: ${String(err)}`;
    }
    const ms = Date.now() - t0;
    // The self-check's host-against-host run cannot show a deliberate difference.
    if (mode === 'selfcheck' && c.deliberate) error = error ? null : 'a deliberate difference showed between the host and itself';
    if (error) failed += 1; else passed += 1;
    const tag = c.deliberate ? ` [deliberate: ${c.deliberate}]` : '';
    if (shapes && !error) log(`shape ${JSON.stringify({ case: c.name, ...value })}`);
    else log(error ? `FAIL ${c.name}${tag} (${ms} ms) — ${oneLine(error)}` : `ok   ${c.name}${tag} (${ms} ms)`);
    results.push({ name: c.name, status: error ? 'failed' : 'passed', ok: !error, error, ms });
  }
  if (skipped) log(`(${skipped} skipped)`);
  log(`${passed} passed, ${failed} failed`);
  return { passed, failed, skipped, results };
}
