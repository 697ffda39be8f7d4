// The streams tier: tests/runtimes/run.mjs --suite streams in all seven
// runtimes, one after the other (the figures are timings), against the
// packed package in <projectDir>.
//
//   node tests/streams/run-all.mjs <projectDir> [filter] [--only rt1,rt2] [--mode stream] [--table FILE]
//
// --mode stream (or SAFERETRY_STREAMS_MODE=stream): policy.fetch with
// `responseBody: "stream"` for the stream and abort cases, to check the
// harness on a library that still buffers text (tests/streams/README.md).
// Prints each runtime's case lines, its "N passed, M failed" and summary
// line, then the figures as a Markdown table (also written to --table FILE,
// default test-output/streams-table.md) and the total "N passed, M failed";
// exits 1 on any failure.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain, start, waitExit } from '../runtimes/procs.mjs';
import { figuresTable } from './table.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const RUNTIMES = ['node', 'deno', 'bun', 'workerd', 'chromium', 'firefox', 'webkit'];
const BUDGET_MS = Number(process.env.SAFERETRY_STREAMS_BUDGET_MS) || 5 * 60_000;
const PER_RUNTIME_MS = 100_000; // a runtime's run: ~15 s, ~45 s on a library that buffers text
const COUNT = /^(\d+) passed, (\d+) failed$/;

function parseArgs(argv) {
  const o = { only: RUNTIMES, mode: process.env.SAFERETRY_STREAMS_MODE || 'compare', table: path.join(REPO, 'test-output/streams-table.md'), rest: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') o.only = argv[++i].split(',');
    else if (argv[i] === '--mode') o.mode = argv[++i];
    else if (argv[i] === '--table') o.table = path.resolve(argv[++i]);
    else o.rest.push(argv[i]);
  }
  return { ...o, projectDir: o.rest[0], filter: o.rest[1] };
}

async function runOne(runtime, { projectDir, filter, mode }, deadline) {
  const args = [path.join(REPO, 'tests/runtimes/run.mjs'), runtime, projectDir, ...(filter ? [filter] : []), '--suite', 'streams', '--mode', mode];
  const until = Math.min(deadline, Date.now() + PER_RUNTIME_MS);
  const env = { SAFERETRY_RUNTIME_BUDGET_MS: String(Math.max(10_000, until - Date.now())) };
  const t0 = Date.now();
  const p = start(`streams-${runtime}`, process.execPath, args, { cwd: REPO, env, echo: false });
  const code = await waitExit(p, until + 5000);
  const counts = p.lines.map((l) => COUNT.exec(l)).filter(Boolean).pop();
  return { runtime, code, lines: p.lines, tail: p.tail, seconds: (Date.now() - t0) / 1000,
    passed: counts ? +counts[1] : 0, failed: counts ? +counts[2] : 0, summary: p.lines.findLast((l) => l.startsWith(`${runtime}: `)) };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!o.projectDir || o.only.some((r) => !RUNTIMES.includes(r)) || !['compare', 'stream'].includes(o.mode)) {
    console.error(`usage: node tests/streams/run-all.mjs <projectDir> [filter] [--only ${RUNTIMES.join(',')}] [--mode stream] [--table FILE]`);
    return 2;
  }
  o.projectDir = path.resolve(o.projectDir);
  const deadline = Date.now() + BUDGET_MS;
  const results = [];
  for (const rt of o.only) { // bounded: seven runtimes, each bounded
    const r = await runOne(rt, o, deadline);
    console.log(`==== ${rt} (${r.seconds.toFixed(1)} s)`);
    for (const line of r.lines) console.log(line);
    if (!r.summary) console.log(`${rt}: no summary line (exit ${r.code})\n${r.tail}`);
    results.push(r);
  }
  const table = figuresTable(results, o.mode);
  mkdirSync(path.dirname(o.table), { recursive: true });
  writeFileSync(o.table, table);
  console.log(`\n${table}\n(written to ${path.relative(REPO, o.table)})\n\n==== streams${o.mode === 'stream' ? ' (mode stream: responseBody "stream")' : ''}`);
  for (const r of results) console.log(`${r.runtime.padEnd(9)} ${r.passed} passed, ${r.failed} failed, ${r.seconds.toFixed(1)} s${r.code === 0 ? '' : ' FAILED'}`);
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log(`${passed} passed, ${failed} failed`);
  return results.every((r) => r.code === 0) ? 0 : 1;
}

await runMain('run-all.mjs', main);
