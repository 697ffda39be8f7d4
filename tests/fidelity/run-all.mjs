// The fidelity tier: tests/runtimes/run.mjs --suite fidelity in all seven
// runtimes, two at a time, against the packed package in <projectDir>.
//
//   node tests/fidelity/run-all.mjs <projectDir> [filter] [--only rt1,rt2] [--shapes | --selfcheck]
//
// Prints each runtime's case lines (after it finished, so they do not
// interleave) and its own "N passed, M failed" line, then one line per
// runtime and the total "N passed, M failed"; exits 1 on any failure.
// --shapes: instead, what the host's fetch throws for each deterministic
// failure, written to tests/fidelity/error-shapes.json and error-shapes.md.
// --selfcheck: the host's fetch on both sides (only deliberate cases may fail).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain, start, waitExit } from '../runtimes/procs.mjs';
import { shapesMarkdown } from './shapes-table.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const RUNTIMES = ['node', 'deno', 'bun', 'workerd', 'chromium', 'firefox', 'webkit'];
const PARALLEL = 2;
const BUDGET_MS = Number(process.env.SAFERETRY_FIDELITY_BUDGET_MS) || 6 * 60_000;
const COUNT = /^(\d+) passed, (\d+) failed$/;

function parseArgs(argv) {
  const o = { only: RUNTIMES, shapes: false, selfcheck: false, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') o.only = argv[++i].split(',');
    else if (argv[i] === '--shapes') o.shapes = true;
    else if (argv[i] === '--selfcheck') o.selfcheck = true;
    else o.rest.push(argv[i]);
  }
  return { ...o, projectDir: o.rest[0], filter: o.rest[1] };
}

// Deno has a caller's origin only when run with --location: a second run
// for the cases that call from one (tests/fidelity/cases-origin.mjs), which
// skip in the first. (The other cases keep Deno without one: with one, its
// fetch sends no Origin on a redirect to another origin where saferetry's
// hops, by the standard, send the caller's — docs/fetch-differences.md
// item 3 — and eleven redirect cases would each need that deliberate.)
const WITH_LOCATION = 'deno --location';
const ORIGIN_CASES = "From a caller's origin";

async function runOne(label, { projectDir, filter, shapes, selfcheck }, deadline) {
  const location = label === WITH_LOCATION;
  const runtime = location ? 'deno' : label;
  const shapeFile = path.join(projectDir, 'fidelity/gen', `shapes-${runtime}.json`);
  const only = location ? filter ?? ORIGIN_CASES : filter;
  const args = [path.join(REPO, 'tests/runtimes/run.mjs'), runtime, projectDir, ...(only ? [only] : []),
    '--suite', 'fidelity', ...(shapes ? ['--shapes', shapeFile] : []), ...(selfcheck ? ['--mode', 'selfcheck'] : []), ...(location ? ['--location'] : [])];
  const env = { SAFERETRY_RUNTIME_BUDGET_MS: String(Math.max(10_000, deadline - Date.now())) };
  const p = start(`fidelity-${runtime}`, process.execPath, args, { cwd: REPO, env, echo: false });
  const code = await waitExit(p, deadline);
  const counts = p.lines.map((l) => COUNT.exec(l)).filter(Boolean).pop();
  const skipped = Number(p.lines.map((l) => /^\((\d+) skipped\)$/.exec(l)?.[1]).filter(Boolean).pop() ?? 0);
  return { runtime: label, code, lines: p.lines, tail: p.tail, shapeFile,
    passed: counts ? +counts[1] : 0, failed: counts ? +counts[2] : 0, skipped, summary: p.lines.findLast((l) => l.startsWith(`${runtime}: `)) };
}

function writeShapes(results) {
  const runtimes = {};
  for (const r of results) {
    try {
      runtimes[r.runtime] = JSON.parse(readFileSync(r.shapeFile, 'utf8')).shapes;
    } catch (e) {
      runtimes[r.runtime] = { error: `no shapes: ${e.message}` };
    }
  }
  const doc = {
    about: 'What the host\'s own fetch does for each deterministic failure, per runtime (tests/fidelity, --shapes). '
      + 'received: requests the server got. Regenerate: node tests/fidelity/run-all.mjs test-output/project --shapes',
    measured: new Date().toISOString().slice(0, 10), node: process.version, runtimes,
  };
  writeFileSync(path.join(HERE, 'error-shapes.json'), `${JSON.stringify(doc, null, 1)}\n`);
  writeFileSync(path.join(HERE, 'error-shapes.md'), shapesMarkdown(doc));
  console.log('wrote tests/fidelity/error-shapes.json and error-shapes.md');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!o.projectDir || o.only.some((r) => !RUNTIMES.includes(r))) {
    console.error(`usage: node tests/fidelity/run-all.mjs <projectDir> [filter] [--only ${RUNTIMES.join(',')}] [--shapes | --selfcheck]`);
    return 2;
  }
  o.projectDir = path.resolve(o.projectDir);
  const deadline = Date.now() + BUDGET_MS;
  // (Not in --shapes: the second run would write Deno's shapes again.)
  const queue = o.only.flatMap((rt) => (rt === 'deno' && !o.shapes ? [rt, WITH_LOCATION] : [rt]));
  const results = [];
  const worker = async () => {
    for (let rt = queue.shift(); rt; rt = queue.shift()) { // bounded: seven runtimes
      const r = await runOne(rt, o, deadline);
      console.log(`==== ${rt}`);
      for (const line of r.lines) if (!line.startsWith('shape ')) console.log(line);
      if (!r.summary) console.log(`${rt}: no summary line (exit ${r.code})\n${r.tail}`);
      results.push(r);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  const order = (r) => RUNTIMES.indexOf(r.runtime === WITH_LOCATION ? 'deno' : r.runtime) + (r.runtime === WITH_LOCATION ? 0.5 : 0);
  results.sort((a, b) => order(a) - order(b));
  if (o.shapes) writeShapes(results);
  console.log('\n==== fidelity');
  for (const r of results) console.log(`${r.runtime.padEnd(15)} ${r.passed} passed, ${r.failed} failed${r.skipped ? ` (${r.skipped} skipped)` : ''}${r.code === 0 ? '' : ' FAILED'}`);
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log(`${passed} passed, ${failed} failed`);
  return results.every((r) => r.code === 0) ? 0 : 1;
}

await runMain('run-all.mjs', main);
