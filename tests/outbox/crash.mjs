// The file store's exactly-once under crashes (docs/outbox.md, "Exactly
// once"): real Node processes on one directory. Each round, a drainer is
// killed at one crash point with its lock left behind; its heartbeat is
// then made old (the file's mtime set back, as time would), and three
// contenders started at the same instant take the directory over. The
// kept write must then be sent by exactly one of them, with its key, and
// leave the store. Also: a lock naming a live pid (a restarted
// container's PID 1) is taken over once its heartbeat is old, and
// `close()` ends a wait for a lock that is held.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, fixture } from './node.mjs';
import { POINTS, dueWrite } from './crash-points.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(HERE, 'crash-child.mjs');
const ROUNDS = Number(process.env.OUTBOX_CRASH_ROUNDS ?? 5);
const CONTENDERS = 3;
const LONG_AGO = new Date(Date.now() - 3_600_000);

/** A child process; `lines` resolves each line it prints, in order. */
function child(args, timeoutMs = 40_000) {
  const p = spawn(process.execPath, [CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '', err = '';
  const waiting = [];
  p.stdout.on('data', (d) => {
    out += d;
    for (const w of [...waiting]) if (out.split('\n').length > w.n) { waiting.splice(waiting.indexOf(w), 1); w.resolve(); }
  });
  p.stderr.on('data', (d) => (err += d));
  const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
  // 'close', not 'exit': a process may have exited before its last output
  // was read from the pipe (a contender's JSON line went missing so).
  const exit = new Promise((resolve) => p.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, out, err }); }));
  const printed = (n) => new Promise((resolve) => (out.split('\n').length > n ? resolve() : waiting.push({ n, resolve })));
  return { p, exit, printed };
}

/** Sets every lock file's mtime back an hour: the heartbeat of a dead drainer, once old. */
function ageLocks(dir) {
  for (const name of readdirSync(dir)) if (name.startsWith('.lock')) utimesSync(path.join(dir, name), LONG_AGO, LONG_AGO);
}

/** Starts every contender, lets them go at once, and returns the keys each sent. */
async function contenders(pkg, dir) {
  const all = Array.from({ length: CONTENDERS }, () => child([pkg, dir, 'none']));
  await Promise.all(all.map((c) => c.printed(1)));
  for (const c of all) c.p.stdin.write('go\n');
  const ended = await Promise.all(all.map((c) => c.exit));
  return ended.map(({ code, out, err }) => {
    assert(code === 0, `a contender exited ${code}: ${err}`);
    return JSON.parse(out.trim().split('\n').pop());
  });
}

export function cases(pkg) {
  let server, m;
  const { tmp, setup, teardown } = fixture(pkg, 'saferetry-crash-', (x) => ({ m, server } = x));
  /** The rounds at one crash point: what went wrong in each, if anything. */
  const rounds = async (point) => {
    const doubles = [];
    for (let round = 0; round < ROUNDS; round++) {
      const dir = path.join(tmp, `${point}-${round}`);
      const key = `${point}-${round}`;
      await m.fileStore(dir).put(dueWrite(`${server.url}/orders`, key));
      const crashed = await child([pkg, dir, point]).exit;
      assert(crashed.signal === 'SIGKILL', `the drainer died at ${point}: ${crashed.code} ${crashed.signal} ${crashed.err}`);
      const before = (await server.counts()).requests[key] ?? 0;
      assert(before === (point.includes('send') ? 1 : 0), `the dead drainer sent ${before} times`);
      ageLocks(dir);
      const outs = await contenders(pkg, dir);
      const sent = outs.flatMap((o) => o.sent);
      const after = (await server.counts()).requests[key] - before;
      if (after !== 1 || sent.length !== 1) doubles.push(`round ${round}: ${after} sends, sent events ${JSON.stringify(sent)}`);
      assert(outs.every((o) => o.pending === 0), `round ${round}: an entry is left`);
      assert(readdirSync(dir).filter((n) => n.endsWith('.entry.json')).length === 0, `round ${round}: an entry file is left`);
    }
    return doubles;
  };
  // The four crash points run side by side (each in directories of its
  // own, keys of its own): the first case waits for all of them.
  let all;
  const results = () => (all ??= (async () => {
    await server.reset();
    await server.open(0);
    return Object.fromEntries(await Promise.all(Object.keys(POINTS).map(async (p) => [p, await rounds(p).catch((error) => [String(error?.message ?? error)])])));
  })());
  const crashCase = (point) => [`a drainer killed ${POINTS[point]}: of ${CONTENDERS} processes that then start at once, exactly one sends the write, with its key (${ROUNDS} rounds)`, async () => {
    const doubles = (await results())[point];
    assert(doubles.length === 0, `not exactly one send in ${doubles.length} of ${ROUNDS} rounds: ${doubles.join('; ')}`);
  }];
  const list = [
    ...Object.keys(POINTS).map(crashCase),
    ['a lock whose owner\'s pid is alive again (a restarted container) is taken over once its heartbeat is old', async () => {
      await server.reset();
      await server.open(0);
      const dir = path.join(tmp, 'live-pid');
      const key = 'live-pid-1';
      await m.fileStore(dir).put(dueWrite(`${server.url}/orders`, key));
      // The crashed owner's lock, naming a live pid (this process's), in both forms the store has had.
      writeFileSync(path.join(dir, '.lock'), String(process.pid));
      writeFileSync(path.join(dir, '.lock.1'), JSON.stringify({ owner: 'crashed', pid: process.pid, released: false }));
      ageLocks(dir);
      const outs = await contenders(pkg, dir);
      const sent = outs.flatMap((o) => o.sent);
      assert(sent.length === 1 && sent[0] === key, `sent events: ${JSON.stringify(sent)} pending ${outs.map((o) => o.pending)}`);
      assert((await server.counts()).accepted[key] === 1, 'accepted once');
    }],
    ['a drainer whose lock was taken over while it stalled writes nothing more to the store', async () => {
      const dir = path.join(tmp, 'overtaken');
      const store = m.fileStore(dir);
      const error = await store.lock('orders', async () => {
        const [held] = readdirSync(dir).filter((n) => n.startsWith('.lock.'));
        // Another process took the lock over (as it would once this one's heartbeat was 10 s old).
        writeFileSync(path.join(dir, `.lock.${Number(held.slice(6)) + 1}`), JSON.stringify({ owner: 'other', pid: 1, released: false }));
        await new Promise((r) => setTimeout(r, 1500)); // a heartbeat finds it
        return store.put(dueWrite(`${server.url}/orders`, 'overtaken-1')).then(() => null, (e) => e);
      });
      assert(/taken over/.test(error?.message), `put after the takeover: ${error}`);
      assert(readdirSync(dir).filter((n) => n.endsWith('.entry.json')).length === 0, 'nothing written');
    }],
    ['close() ends a wait for a lock another process holds, at once', async () => {
      const dir = path.join(tmp, 'held');
      mkdirSync(dir, { recursive: true });
      // Held by a live drainer: a fresh heartbeat, in both forms the store has had.
      writeFileSync(path.join(dir, '.lock'), String(process.pid));
      writeFileSync(path.join(dir, '.lock.1'), JSON.stringify({ owner: 'other', pid: process.pid, released: false }));
      const box = await m.outbox(new m.RetryPolicy(), 'orders', { store: m.fileStore(dir) });
      await new Promise((r) => setTimeout(r, 300)); // the first drain waits for the lock
      const t0 = Date.now();
      const closed = await Promise.race([box.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('still waiting'), 5_000))]);
      assert(closed === 'closed', `close() after 5 s: ${closed}`);
      assert(readdirSync(dir).filter((n) => n.startsWith('.lock')).length === 2, 'the other\'s lock is left alone');
      console.log(`     close() returned in ${Date.now() - t0} ms`);
    }],
  ];
  return { setup, teardown, list };
}
