// The crash-node tier (issue 38, item 8): a process must never die of a
// call. Node 20's V8 (11.3) inlines a call to a wasm export into optimized
// JS; when that export answers a lone JS value (a wasm `externref` result)
// and the optimized code is deoptimized while the call runs (something
// the call did, such as building an object whose field changed type,
// invalidated it), V8 aborts the whole process: `Fatal error … unreachable
// code` in `Deoptimizer::DoComputeBuiltinContinuation`, SIGTRAP (its
// deoptimizer has no case for a reference result there; later V8s, Deno's
// among them, have). Two cases:
//
//   exports  no export of a shipped wasm module (js/package.json `files`)
//            answers a lone reference: each one's result types, read from
//            the module's type, import, function and export sections
//   load     four fresh Node processes (node-redis, ioredis, twice each)
//            share a budget through a real redis-server, each with 8 loops
//            of policy.fetch against the fault server and a metrics reader
//            of policy.stats() (tests/fleet/redis-instance.mjs
//            `readStats`); once all are leased Redis is killed and its
//            port stays closed 15 s (the issue's outage), then it comes
//            back holding a foreign value under the budget's key, which
//            every exchange answers `{ unavailable }` (stats().shared
//            gains its `reason` inside the call that answers the stats):
//            every process exited 0 (no signal), operated, fell back and
//            showed the reason
//
//   node tests/fleet/crash.mjs
//
// Prints PASS/FAIL lines and "N passed, M failed". Every process started
// here is killed at the end; the whole tier is bounded by 60 s.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { freePort } from '../runtimes/port.mjs';
import { runMain, start, startFaultServer, waitExit } from '../runtimes/procs.mjs';
import { killRedis, startRedis } from './redis-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const OUT = path.join(REPO, 'test-output/crash-node');
const INSTANCE = path.join(HERE, 'redis-instance.mjs');
const t0 = Date.now();
const deadline = t0 + 60_000; // the whole tier, hard stop for every wait below
const note = (line) => process.stderr.write(`[crash-node ${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);
const DOWN_MS = 15_000;

let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
}

// ---------------- exports ----------------
/** `{ name, results }` of every function `bytes` (a wasm module) exports; results as value type bytes. */
function exportedResults(bytes) {
  let at = 8; // magic, version
  const u32 = () => {
    let n = 0, shift = 0, b;
    do { b = bytes[at++]; n += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return n;
  };
  const name = () => { const n = u32(); at += n; return bytes.subarray(at - n, at).toString(); };
  const valtype = () => {
    const t = bytes[at++];
    if (t === 0x63 || t === 0x64) u32(); // (ref null? heaptype): a reference too
    return t;
  };
  const vec = (item) => Array.from({ length: u32() }, item);
  const limits = () => { const flags = bytes[at++]; u32(); if (flags & 1) u32(); };
  let types = [];
  const funcs = []; // type index of each function, imports first
  let exports = [];
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = u32();
    const end = at + size;
    if (id === 1) {
      types = vec(() => {
        if (bytes[at++] !== 0x60) throw new Error('a type that is not a plain function type: this reader needs teaching');
        vec(valtype);
        return vec(valtype);
      });
    } else if (id === 2) {
      vec(() => {
        name(); name();
        const kind = bytes[at++];
        if (kind === 0) funcs.push(u32());
        else if (kind === 1) { valtype(); limits(); }
        else if (kind === 2) limits();
        else if (kind === 3) { valtype(); at++; }
        else if (kind === 4) { at++; u32(); }
        else throw new Error(`import kind ${kind}`);
      });
    } else if (id === 3) {
      funcs.push(...vec(u32));
    } else if (id === 7) {
      exports = vec(() => ({ name: name(), kind: bytes[at++], index: u32() }));
    }
    at = end;
  }
  return exports.filter((e) => e.kind === 0).map((e) => ({ name: e.name, results: types[funcs[e.index]] }));
}

// funcref, externref and the typed references.
const REFERENCE = new Set([0x70, 0x6f, 0x63, 0x64]);

function exportsCase() {
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'js/package.json'), 'utf8'));
  const modules = pkg.files.filter((f) => f.endsWith('.wasm'));
  let functions = 0;
  const lone = [];
  for (const file of modules) {
    const found = exportedResults(readFileSync(path.join(REPO, 'js', file)));
    functions += found.length;
    for (const e of found) if (e.results.length === 1 && REFERENCE.has(e.results[0])) lone.push(`${path.basename(file)}: ${e.name}`);
  }
  console.log(`exports: ${functions} functions exported by ${modules.length} modules (${modules.map((m) => path.basename(m)).join(', ')})`);
  check('exports: the shipped modules export functions (the reader found them)', modules.length >= 5 && functions >= 50, `${functions}`);
  check('exports: no export of a shipped wasm module answers a lone JS value (an externref result), which Node 20 cannot deoptimize through',
    lone.length === 0, lone.join(', '));
}

// ---------------- load ----------------
const MEMBERS = ['node-redis', 'ioredis', 'node-redis', 'ioredis'];

async function loadCase(ctx) {
  const name = `crash-${crypto.randomUUID()}`;
  const stopFile = path.join(OUT, `stop-${crypto.randomUUID()}`);
  const spec = {
    redisUrl: ctx.redisUrl, mode: 'shared', name, fleetSize: MEMBERS.length, n: 1e9, durationMs: 45_000, concurrency: 8, stopFile, readStats: true,
    options: { maxAttempts: 2, totalMs: 2_000, attemptMs: 2_000, baseMs: 1, capMs: 4, rate: { requests: 200 } },
  };
  const procs = MEMBERS.map((client, i) => start(`crash-${i}-${client}`, process.execPath,
    [INSTANCE, JSON.stringify({ ...spec, client, url: `${ctx.server.url}/s/seq/${name}-${i}?steps=200` })], { cwd: REPO, echo: false }));
  for (const p of procs) p.exited.then(() => { p.endedAt = Date.now(); });
  // Every instance leased once (bounded), then the outage.
  while (!procs.every((p) => p.lines.includes('leased'))) {
    if (Date.now() > t0 + 20_000 || procs.some((p) => p.child.exitCode !== null || p.child.signalCode !== null)) break;
    await sleep(20);
  }
  const leased = procs.filter((p) => p.lines.includes('leased')).length;
  await sleep(1000);
  await killRedis(ctx.proc);
  note(`Redis killed; its port stays closed ${DOWN_MS / 1000} s`);
  await sleep(DOWN_MS);
  ctx.proc = await startRedis(ctx.dir, ctx.port);
  // Back, holding what is not a budget's state: every exchange answers `{ unavailable }`.
  const admin = await createClient({ url: ctx.redisUrl }).on('error', () => {}).connect();
  await admin.set(`saferetry:budget:${name}`, 'not a budget');
  admin.destroy();
  note('Redis back, holding a foreign value under the budget\'s key');
  await sleep(3000);
  writeFileSync(stopFile, '');
  const ends = await Promise.all(procs.map((p) => waitExit(p, Math.min(deadline, Date.now() + 15_000))));
  const results = procs.map((p) => {
    const last = p.lines.filter((l) => l.startsWith('{')).at(-1);
    return last ? JSON.parse(last) : null;
  });
  for (const [i, p] of procs.entries()) {
    const r = results[i];
    const fatal = /Fatal error[^\n]*\n[^\n]*\n/.exec(p.tail)?.[0].replace(/\s+/g, ' ') ?? '';
    console.log(`  ${p.name}: exit ${ends[i]} at ${((p.endedAt - t0) / 1000).toFixed(1)} s${fatal ? ` (${fatal.trim()})` : ''}; ${r ? `${r.ops} operations, ${r.reads} stats reads, modes ${r.modes.join('>')}, reason ${JSON.stringify(r.stats.shared?.reason)}` : 'no result'}`);
  }
  console.log(`load: ${MEMBERS.length} fresh Node ${process.version} processes, ${leased} leased before the outage; load average ${os.loadavg()[0].toFixed(1)}`);
  check('load: no process died: each of the four exited 0, none by a signal (V8\'s abort is SIGTRAP)', ends.every((e) => e === 0), ends.join(', '));
  check('load: each process operated and read its stats through the outage', results.every((r) => r && r.ops > 0 && r.reads > 0), results.map((r) => r && `${r.ops}/${r.reads}`).join(', '));
  check('load: each one fell back while Redis was away and showed the foreign value\'s reason (what the check is about happened)',
    results.every((r) => r?.modes.includes('fallback') && r.stats.shared?.reason?.includes(name)), results.map((r) => r?.stats.shared?.reason?.slice(0, 40)).join(' | '));
}

// ---------------- main ----------------
runMain('crash-node', async () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  exportsCase();
  const server = await startFaultServer(OUT);
  const dir = path.join(OUT, 'redis');
  const port = await freePort();
  const ctx = { server, dir, port, redisUrl: `redis://127.0.0.1:${port}`, proc: await startRedis(dir, port) };
  try {
    await loadCase(ctx);
  } catch (e) {
    check('load', false, `threw: ${e.stack ?? e}`);
  }
  await killRedis(ctx.proc);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
});
