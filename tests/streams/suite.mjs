// The streams suite (issue 25): slow text streams read through the host's
// `fetch` and through `policy.fetch` side by side, in any of the seven
// runtimes; plus the stalled-JSON and abort controls. Web-standard APIs only.
// Same interface as tests/e2e/suite.mjs, so tests/runtimes/run.mjs loads it:
//
//   cases({ saferetry, server: { url, altUrl }, runtime }) -> [{ name, run }]
//   runSuite({ saferetry, server, runtime, filter, log, timeoutMs, mode })
//     runs the selected cases AT ONCE (each ~12 s), one line per case as it
//     ends: "ok   <name> (<ms> ms) | fig {json}" or "FAIL <name> (<ms> ms) —
//     <problems> | fig {json}", then "N passed, M failed".
//     mode "compare" (default): policy.fetch of `new RetryPolicy()` (the defaults);
//     mode "stream": `new RetryPolicy({ responseBody: "stream" })` for the
//       stream and abort cases (checks the harness on a library that still
//       buffers text); the stalled-JSON control always runs on the defaults.
import { selects } from '../e2e/run-cases.mjs';
import { streamCases } from './cases-streams.mjs';
import { controlCases } from './cases-control.mjs';

export function cases() {
  const list = [];
  const h = { add: (c) => list.push({ ...c, slot: list.length }) };
  streamCases(h);
  controlCases(h);
  return list;
}

// A stream takes 12 s; on the defaults of a library that buffers text a GET
// takes 30 s (three attempts) before it rejects.
const MAX_CASE_MS = 40_000;
const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' | ');

async function bounded(fn, ms) {
  let timer;
  try {
    return await Promise.race([fn(), new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runSuite({ saferetry, server, runtime = 'unknown', filter, log = (line) => console.log(line), timeoutMs = MAX_CASE_MS, mode = 'compare' }) {
  const options = mode === 'stream' ? { responseBody: 'stream' } : {};
  const selected = cases().filter((c) => selects(filter, c.name));
  const results = await Promise.all(selected.map(async (c) => {
    const t0 = Date.now();
    let problems;
    let fig = null;
    try {
      ({ problems, fig } = await bounded(() => c.run({ saferetry, server, runtime, slot: c.slot, options }), Math.max(timeoutMs, MAX_CASE_MS)));
    } catch (err) {
      problems = [`${err?.name}: ${err?.message ?? err}`];
    }
    const ms = Date.now() - t0;
    const error = problems.length ? problems.join('; ') : null;
    const tail = fig ? ` | fig ${JSON.stringify({ case: c.name, kind: c.kind, ...fig })}` : '';
    log(error ? `FAIL ${c.name} (${ms} ms) — ${oneLine(error)}${tail}` : `ok   ${c.name} (${ms} ms)${tail}`);
    return { name: c.name, status: error ? 'failed' : 'passed', ok: !error, error, ms };
  }));
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  log(`${passed} passed, ${failed} failed`);
  return { passed, failed, skipped: 0, results };
}
