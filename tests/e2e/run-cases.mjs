// Runs a suite's selected cases one after another, each bounded: one line per
// case, then "(K skipped)" when any were, then exactly "N passed, M failed".
// Web-standard APIs only (the e2e and fidelity suites run it everywhere).
//
//   selects(filter, name): the suites' case filter
//   runCases(selected, { log, timeoutMs, run?, after?, judge? })
//     selected: [{ name, skip?, ... }]; run(c) (default c.run()) may return a value;
//     after(c): called after each case, even one that timed out;
//     judge(c, { error, value, ms }) -> { error, line? }: the verdict and its line
//   -> { passed, failed, skipped, results: [{ name, status, ok, error, ms, skipped? }] }

/** Whether a case named `name` is selected by `filter`: none, a substring
 * (case-insensitive), a RegExp or a predicate. */
export function selects(filter, name) {
  if (filter == null || filter === '') return true;
  if (typeof filter === 'function') return filter(name);
  if (filter instanceof RegExp) return filter.test(name);
  return name.toLowerCase().includes(String(filter).toLowerCase());
}

const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' | ');
const show = (v) => { try { return JSON.stringify(v) ?? String(v); } catch { return String(v); } };

async function bounded(fn, ms) {
  let timer;
  try {
    return await Promise.race([
      Promise.resolve().then(fn),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms); }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runCases(selected, { log, timeoutMs, run = (c) => c.run(), after = () => {}, judge = (c, r) => r }) {
  const results = [];
  let passed = 0;
  let failed = 0;
  let skipped = 0;
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
      value = await bounded(() => run(c), timeoutMs);
    } catch (err) {
      error = err instanceof Error ? `${err.name}: ${err.message}` : `thrown: ${show(err)}`;
    } finally {
      after(c);
    }
    const ms = Date.now() - t0;
    const verdict = judge(c, { error, value, ms });
    error = verdict.error;
    if (error) failed += 1; else passed += 1;
    log(verdict.line ?? (error ? `FAIL ${c.name} (${ms} ms) — ${oneLine(error)}` : `ok   ${c.name} (${ms} ms)`));
    results.push({ name: c.name, status: error ? 'failed' : 'passed', ok: !error, error, ms });
  }
  if (skipped) log(`(${skipped} skipped)`);
  log(`${passed} passed, ${failed} failed`);
  return { passed, failed, skipped, results };
}

export { oneLine };
