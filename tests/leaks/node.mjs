// Node front end of the leak suite; run through `node tests/leaks/run.mjs node`
// (which adds --expose-gc). The fault server runs in a child process so its
// own timers, sockets and per-run counters stay out of this process's timer
// counts and heap figures.
import { installTimerTracker, runLeakSuite, formatResult } from './workload.js';
import { runDropped } from './dropped.js';

// Before the package is imported: the glue calls the global timers.
const tracker = installTimerTracker();

const { spawn } = await import('node:child_process');
const { getEventListeners } = await import('node:events');
const { fileURLToPath } = await import('node:url');

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const WATCHDOG_MS = 420_000; // ~80 s on a quiet machine; a loaded one (three builds beside it) took over 180
// Optional: --ops N (default 10 000) and --warmup N (default 2000), to see
// how a figure scales.
const numArg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Math.max(100, Math.min(100_000, Number(process.argv[i + 1]) || def)) : def;
};
const total = numArg('--ops', 10_000);
const warmup = numArg('--warmup', 2000);
// --dropped-only: just the dropped-response case (README.md here).
const droppedOnly = process.argv.includes('--dropped-only');

if (typeof globalThis.gc !== 'function') {
  console.error('leaks/node: run with --expose-gc (node tests/leaks/run.mjs node does)');
  process.exit(2);
}

const errors = [];
process.on('uncaughtException', (e) => errors.push(`uncaught: ${e?.stack ?? e}`));
process.on('unhandledRejection', (e) => errors.push(`unhandled rejection: ${e?.stack ?? e}`));

/** Starts the fault server (or the doc server) as a child; resolves with its origins. */
function startServerChild(script = '../../www/server/fault-server.mjs', args = ['--port', '0', '--alt-port', '0']) {
  const child = spawn(process.execPath, [here(script), ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let text = '';
    const fail = (why) => { child.kill('SIGKILL'); reject(new Error(`${script}: ${why}`)); };
    const timer = tracker.later(10_000, () => fail('no address within 10 s'));
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${script} exited (${code})`)); });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      text += chunk;
      const url = /(?:fault|doc) server (\S+)/.exec(text)?.[1];
      const altUrl = script.includes('fault') ? /alt origin (\S+)/.exec(text)?.[1] : url;
      if (url && altUrl && (script.includes('fault') || /doc server .+\n/.test(text))) {
        clearTimeout(timer);
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        const urls = /doc server (.+)\n/.exec(text)?.[1].trim().split(' ');
        resolve({ child, url: url.replace(/\/$/, ''), altUrl: altUrl.replace(/\/$/, ''), urls });
      }
    });
  });
}

function stopServerChild(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = tracker.later(5000, () => child.kill('SIGKILL'));
    child.once('exit', () => { clearTimeout(hard); resolve(); });
    child.kill('SIGTERM');
  });
}

function resourceCounts() {
  const counts = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

let server;
let docServer;
let failed = 1;
const watchdog = tracker.later(WATCHDOG_MS, () => {
  console.error(`leaks/node: not done within ${WATCHDOG_MS / 1000} s`);
  server?.child.kill('SIGKILL');
  docServer?.child.kill('SIGKILL');
  process.exit(1);
});
try {
  const t0 = Date.now();
  server = await startServerChild();
  const saferetry = await import('../../js/src/node.js');
  const { initSync } = await import('../../js/src/saferetry.js');
  const { heldCount } = await import('../../js/src/attempts.js');
  const MiB = 1024 * 1024;
  const env = {
    runtime: `node ${process.version}`,
    gc: () => globalThis.gc(),
    meters: [
      // JS objects: operations, closures, promises, reports, Responses.
      { name: 'heapUsed', unit: 'bytes', bound: 2 * MiB, read: () => process.memoryUsage().heapUsed },
      // Off-heap: Buffers/ArrayBuffers (response bodies), wasm memory. The
      // bodies here are ~25 bytes, so a retained op costs little of it (see
      // the calibration line); the bound catches buffers piling up.
      { name: 'external', unit: 'bytes', bound: 64 * 1024, calibrated: false, read: () => process.memoryUsage().external },
    ],
    wasmExports: () => initSync(), // already initialised: returns the exports
    held: heldCount,
    abortListenerCount: (signal) => getEventListeners(signal, 'abort').length,
    errors,
    log: (line) => console.log(`# ${line}`),
  };
  const result = droppedOnly ? { checks: [] }
    : await runLeakSuite({ saferetry, tracker, env, bases: [server.url], total, warmup });
  await stopServerChild(server.child);
  const child = server.child;
  server = undefined;
  await tracker.sleep(50);
  const after = resourceCounts();
  // What is left once the server is gone: the stdio handles, our own
  // watchdog, and nothing of the library's (no sockets, no other timers).
  const sockets = (after.TCPSocketWrap ?? 0) + (after.TCPWrap ?? 0);
  if (!droppedOnly) result.checks.push({ name: 'no sockets left open after closing the server', ok: sockets === 0, detail: JSON.stringify(after) });
  // The dropped-response case, after the main run and its socket check:
  // plain fetch's side of it leaves connections open for good. Its server
  // is a child too, so the client's sockets are all this process has.
  const errorsBefore = errors.length;
  docServer = await startServerChild('./doc-server.mjs', ['--count', '7']);
  const clientSockets = () => {
    const c = resourceCounts();
    return (c.TCPSocketWrap ?? 0) + (c.TCPWrap ?? 0);
  };
  const dropped = await runDropped({ saferetry, bases: docServer.urls, env: {
    gc: () => globalThis.gc(),
    sleep: tracker.sleep,
    memory: () => {
      const m = process.memoryUsage();
      return { heapUsed: m.heapUsed, external: m.external, 'heap+external': m.heapUsed + m.external };
    },
    key: 'heap+external',
    clientSockets,
    log: (line) => console.log(`# ${line}`),
  } });
  await stopServerChild(docServer.child);
  docServer = undefined;
  result.checks.push(...dropped.checks);
  const late = errors.slice(errorsBefore);
  result.checks.push({ name: 'dropped: no uncaught errors or unhandled rejections', ok: late.length === 0, detail: late.slice(0, 3).join(' | ') || undefined });
  const lines = droppedOnly ? [...result.checks.map((c) => `${c.ok ? 'ok' : 'FAILED'} ${c.name}${c.detail ? ` (${c.detail})` : ''}`),
    `${result.checks.filter((c) => c.ok).length} passed, ${result.checks.filter((c) => !c.ok).length} failed`] : formatResult(result);
  lines.splice(lines.length - result.checks.length - 1, 0,
    ...(droppedOnly ? [] : [`process.getActiveResourcesInfo() after closing the server (child ${child.pid} exited ${child.exitCode ?? child.signalCode}): ${JSON.stringify(after)}`]),
    ...dropped.lines,
    `total time ${Date.now() - t0} ms`);
  for (const line of lines) console.log(line);
  failed = result.checks.filter((c) => !c.ok).length;
} catch (e) {
  console.error(`leaks/node: ${e?.stack ?? e}`);
  console.log('0 passed, 1 failed');
} finally {
  await stopServerChild(server?.child);
  await stopServerChild(docServer?.child);
  clearTimeout(watchdog);
}
process.exitCode = failed ? 1 : 0;
