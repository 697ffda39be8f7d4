// The file store's writes survive a power cut (docs/outbox.md, stores):
// each is written to a temporary file, synced, renamed over the entry's
// name, and the directory synced, before it resolves; a delete syncs the
// directory too. Real processes of Node, Deno and Bun, the store's three
// runtimes (tests/outbox/durable-child.mjs):
//
// - a write killed right after each of its steps, then a fresh process
//   reopening the directory: before the rename it finds the old entry (or
//   none), after it the new one, never a torn or empty one;
// - the order of the steps against what the outbox acknowledges: a write
//   ahead is synced before its request leaves, a kept write before send()
//   answers `kept`, a delete before send() answers.
//
// What this cannot show: a kill -9 keeps the page cache, so every step
// ordering passes the kill cases alike, syncs or not (they check the
// order of the write and the rename against process death). What the
// syncs add, the data and the rename on the disk before the answer, only
// a power cut shows, and none can be made here; the order cases check
// that each sync happens, and where.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, fixture } from './node.mjs';
import { dueWrite } from './crash-points.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(HERE, '../../node_modules/.bin');
// The file store's runtimes, each running the child as it would an app.
const RUNTIMES = {
  Node: [process.execPath],
  Deno: [path.join(BIN, 'deno'), 'run', '-A', '--no-lock'],
  Bun: [path.join(BIN, 'bun')],
};
const STEPS = ['half', 'write', 'fsync', 'rename', 'dir-fsync'];
const SAYS = { half: 'half written', write: 'written', fsync: 'synced', rename: 'renamed', 'dir-fsync': 'its directory synced' };

/** Runs tests/outbox/durable-child.mjs in `runtime`: `{ code, signal, out }`, `out` its last line as JSON. */
function run(runtime, args, timeoutMs = 30_000) {
  return new Promise((resolve) => {
    const [bin, ...flags] = RUNTIMES[runtime];
    const p = spawn(bin, [...flags, path.join(HERE, 'durable-child.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      let last = null;
      try {
        last = JSON.parse(out.trim().split('\n').pop());
      } catch {
        // killed before it printed
      }
      resolve({ code, signal, out: last, err });
    });
  });
}

/** An entry as the child takes it and the store lists it: JSON, its body base64. */
const stored = (entry) => ({ ...entry, body: Buffer.from(entry.body).toString('base64') });
const parses = (text) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
/** The same entry whatever the order of its fields. */
const same = (a, b) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

export function cases(pkg) {
  let server;
  const { tmp, setup, teardown } = fixture(pkg, 'saferetry-durable-', (x) => ({ server } = x));
  const list = Object.keys(RUNTIMES).flatMap((runtime) => [
    [`${runtime}: a file store write killed right after each step (${STEPS.map((s) => SAYS[s]).join(', ')}): a fresh process finds the old entry (or none) before the rename and the new one after it, never a torn or empty one`, async () => {
      const url = `${server.url}/orders`;
      const child = (args) => run(runtime, args);
      // A new entry, and a claim replacing a kept one (its send counted, a later retryAt).
      const runs = STEPS.flatMap((s) => [['new', s], ['replace', s]]);
      const problems = await Promise.all(runs.map(async ([kind, s]) => {
        const dir = path.join(tmp, `${runtime}-${kind}-${s}`);
        mkdirSync(dir, { recursive: true });
        const kept = stored(dueWrite(url, `durable-${runtime}-${kind}-${s}`));
        const before = kind === 'replace' ? kept : null;
        const after = { ...kept, sends: 2, retryAt: Date.now() + 60_000 };
        if (before) {
          const seeded = await child([pkg, dir, 'put', 'none', JSON.stringify(before)]);
          assert(seeded.code === 0, `seeding ${kind}-${s}: ${seeded.code} ${seeded.err}`);
        }
        const killed = await child([pkg, dir, 'put', s, JSON.stringify(after)]);
        if (killed.signal !== 'SIGKILL') return `${kind}, ${s}: the write never got there (it ended ${killed.code}, steps ${JSON.stringify(killed.out?.trace)}) ${killed.err}`;
        // Half written: the torn temporary file is there, for the reader to pass over.
        const torn = readdirSync(dir).filter((n) => n.endsWith('.tmp') && !parses(readFileSync(path.join(dir, n), 'utf8')));
        if (s === 'half' && torn.length !== 1) return `${kind}, ${s}: no torn temporary file was left (${readdirSync(dir)})`;
        const found = await child([pkg, dir, 'list']);
        if (found.code !== 0) return `${kind}, ${s}: a fresh process could not read the store: ${found.err}`;
        const want = STEPS.indexOf(s) < STEPS.indexOf('rename') ? before : after;
        const { entries } = found.out;
        if (want === null ? entries.length !== 0 : entries.length !== 1 || !same(entries[0], want)) {
          return `${kind}, ${s}: found ${JSON.stringify(entries)}, expected ${want === null ? 'none' : `sends ${want.sends}`}`;
        }
        return null;
      }));
      const wrong = problems.filter((p) => p !== null);
      assert(wrong.length === 0, wrong.join('\n     '));
    }],
    [`${runtime}: each write the outbox acknowledges is synced, renamed and its directory synced first: a write ahead before its request leaves, a kept write before send() answers kept, a delete before send() answers`, async () => {
      await server.reset();
      const url = `${server.url}/orders`;
      const child = (args) => run(runtime, args);
      const put = ['write', 'fsync', 'rename', 'dir-fsync'];
      await server.open(Date.now() + 5_000); // 503, Retry-After: 5: kept
      const kept = await child([pkg, path.join(tmp, `${runtime}-order-kept`), 'send', url, `durable-${runtime}-kept`]);
      assert(kept.code === 0 && kept.out.kind === 'try-later' && kept.out.kept === true, `the kept send: ${JSON.stringify(kept.out)} ${kept.err}`);
      const keptWant = [...put, 'fetch', ...put, 'answered'];
      assert(kept.out.trace.join() === keptWant.join(), `kept: steps ${kept.out.trace.join(' ')}, expected ${keptWant.join(' ')}`);
      await server.open(0); // 201: sent, the entry written ahead deleted
      const sent = await child([pkg, path.join(tmp, `${runtime}-order-sent`), 'send', url, `durable-${runtime}-sent`]);
      assert(sent.code === 0 && sent.out.kind === 'succeeded', `the sent send: ${JSON.stringify(sent.out)} ${sent.err}`);
      const sentWant = [...put, 'fetch', 'unlink', 'dir-fsync', 'answered'];
      assert(sent.out.trace.join() === sentWant.join(), `sent: steps ${sent.out.trace.join(' ')}, expected ${sentWant.join(' ')}`);
    }],
  ]);
  return { setup, teardown, list };
}
