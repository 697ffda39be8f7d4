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
import { runCases, selects, oneLine } from '../e2e/run-cases.mjs';
import { makeHarness, restoreGlobalFetch } from './harness.mjs';
import { failureCases } from './cases-failures.mjs';
import { basicCases } from './cases-basic.mjs';
import { schemeCases } from './cases-schemes.mjs';
import { redirectCases } from './cases-redirect.mjs';
import { abortCases } from './cases-abort.mjs';
import { globalCases } from './cases-global.mjs';
import { originCases } from './cases-origin.mjs';

export function cases({ saferetry, server, runtime = 'unknown', selfcheck = false }) {
  const h = makeHarness({ saferetry, server, runtime, selfcheck });
  for (const register of [globalCases, failureCases, originCases, schemeCases, basicCases, redirectCases, abortCases]) register(h);
  return h.list;
}

// A case takes 2 s at most when nothing hangs; a runner's longer bound (the
// e2e suite's 15 s) is cut to this.
const MAX_CASE_MS = 5000;

// The line and verdict of a case in each mode.
function judge(mode) {
  return (c, { error, value, ms }) => {
    if (mode === 'shapes') return error ? { error } : { error: null, line: `shape ${JSON.stringify({ case: c.name, ...value })}` };
    // The self-check's host-against-host run cannot show a deliberate difference.
    if (mode === 'selfcheck' && c.deliberate) error = error ? null : 'a deliberate difference showed between the host and itself';
    const tag = c.deliberate ? ` [deliberate: ${c.deliberate}]` : '';
    return { error, line: error ? `FAIL ${c.name}${tag} (${ms} ms) — ${oneLine(error)}` : `ok   ${c.name}${tag} (${ms} ms)` };
  };
}

export async function runSuite({ saferetry, server, runtime = 'unknown', filter, log = (line) => console.log(line), timeoutMs = MAX_CASE_MS, mode = 'compare' }) {
  const shapes = mode === 'shapes';
  const selected = cases({ saferetry, server, runtime, selfcheck: mode === 'selfcheck' })
    .filter((c) => (!shapes || c.shape) && selects(filter, c.name));
  return runCases(selected, {
    log, timeoutMs: Math.min(timeoutMs, MAX_CASE_MS), judge: judge(mode),
    run: shapes ? (c) => c.shapeRun() : (c) => c.run(),
    after: restoreGlobalFetch, // a case that timed out may have left its fetch in the slot
  });
}
