// Write-ahead in Node (docs/outbox.md, `durable: "before-send"`): the
// write is in the store, claimed, before its first send; no other drainer
// sends it while it is in flight; it leaves the store when its outcome is
// final; and a process killed mid-send leaves it for the next process,
// which sends it with the same key. The guarantee checked: the write is
// never lost, and the server sees its key at most twice — the send that
// was cut mid-flight and the next drainer's.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, child, fixture, open, until } from './node.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const entries = (dir) => readdirSync(dir).filter((n) => n.endsWith('.entry.json'));

/** Starts a child that sends with `durable`; resolves once the server holds its send, and kills it. */
async function killedMidSend(server, args) {
  const p = spawn(process.execPath, [path.join(HERE, 'node-child.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  p.stderr.on('data', (d) => (err += d));
  const exited = new Promise((resolve) => p.on('exit', (code, signal) => resolve(signal ?? code)));
  const key = args[4];
  try {
    await until(`the child's send of ${key}`, 15_000, async () => (await server.counts()).requests[key] === 1);
  } finally {
    p.kill('SIGKILL');
  }
  const how = await exited;
  assert(how === 'SIGKILL', `the child was killed mid-send (it ended ${how}: ${err})`);
}

export function cases(pkg) {
  let server, m;
  const { tmp, setup, teardown } = fixture(pkg, 'saferetry-ahead-', (x) => ({ m, server } = x));
  // `SAFERETRY_AHEAD_OFF=1` sends these writes without write-ahead: the
  // tests then fail (the write is lost), which is how they were checked.
  const durable = process.env.SAFERETRY_AHEAD_OFF === '1' ? 'after-try-later' : 'before-send';
  const list = [
    ['write-ahead: a process killed mid-send leaves the write in the file store, and the next process sends it, with the same key', async () => {
      await server.reset();
      await server.open(0);
      await server.hold(true);
      const dir = path.join(tmp, 'killed');
      const key = 'ahead-killed-1';
      await killedMidSend(server, ['send-ahead', pkg, dir, `${server.url}/orders`, key, durable]);
      await server.hold(false);
      assert(entries(dir).length === 1, `the entry outlived the process: ${readdirSync(dir)}`);
      const drained = await child(['drain', pkg, dir]);
      assert(drained.ended.length === 1 && drained.ended[0].type === 'sent' && drained.ended[0].key === key, `the next process: ${JSON.stringify(drained)}`);
      const c = await server.counts();
      assert(c.requests[key] === 2 && c.accepted[key] === 1, `the key twice (the cut send, the drainer's), accepted once: ${JSON.stringify(c)}`);
      assert(entries(dir).length === 0, 'no entry left');
    }],
    ['write-ahead: the write is in the store, claimed, while in flight; another drainer leaves it; it leaves the store when sent, and is kept with a later retryAt on try-later', async () => {
      await server.reset();
      await server.open(0);
      const store = m.memoryStore();
      // Room for the policy's own retry (below) on a loaded machine.
      const page = await open(m, { store, durable }, { totalMs: 3000 });
      const other = await open(m, { store }); // another tab or process on the same store
      await server.hold(true);
      const t0 = Date.now();
      const sending = page.box.send(`${server.url}/orders`, { method: 'POST', body: 'pay 10', retry: { idempotencyKey: 'ahead-mem-1' } });
      await until('the send in flight', 10_000, async () => (await server.counts()).requests['ahead-mem-1'] === 1);
      const during = await store.list();
      assert(during.length === 1 && during[0].key === 'ahead-mem-1' && during[0].sends === 1 && during[0].retryAt >= t0 + 3000 + 2000, `in the store while in flight: ${JSON.stringify(during.map(({ body, ...e }) => e))}`);
      await other.box.flush();
      assert((await server.counts()).requests['ahead-mem-1'] === 1, 'the other drainer did not send it while in flight');
      await server.hold(false); // drops the held send: the policy sends it again, and it is answered
      const r = await sending;
      assert(r.kind === 'succeeded' && r.ahead === true && r.kept === false, `answer: ${r.kind} ahead ${r.ahead} kept ${r.kept}`);
      assert((await store.list()).length === 0, 'sent: it left the store');
      await server.open(Date.now() + 4500); // Retry-After: 5, beyond this policy's 3 s
      const later = await page.box.send(`${server.url}/orders`, { method: 'PUT', body: 'v=2' });
      const kept = await store.list();
      assert(later.kind === 'try-later' && later.ahead === true && later.kept === true, `try-later: ${later.kind} ahead ${later.ahead} kept ${later.kept}`);
      assert(kept.length === 1 && kept[0].id === later.id && kept[0].retryAt === later.retryAt && kept[0].sends === 1, `kept with its later retryAt: ${JSON.stringify(kept.map(({ body, ...e }) => e))}`);
      await page.box.close();
      await other.box.close();
    }],
    ['write-ahead: a keyless POST is not written ahead, and a bad durable is a TypeError naming it', async () => {
      await server.reset();
      await server.open(0);
      const store = m.memoryStore();
      const { box } = await open(m, { store, durable });
      await server.hold(true);
      const sending = box.send(`${server.url}/orders`, { method: 'POST', body: 'pay 10' });
      await until('the send in flight', 10_000, async () => (await server.counts()).requests['(none)'] === 1);
      assert((await store.list()).length === 0, 'nothing written ahead');
      await server.hold(false); // dropped: a keyless POST that may have been delivered is not sent again
      const r = await sending;
      assert(r.ahead === false && (await store.list()).length === 0, `answer: ${r.kind} ahead ${r.ahead}`);
      const bad = await box.send(`${server.url}/orders`, { method: 'PUT', body: 'x', durable: 'always' }).then(() => null, (e) => e);
      assert(bad instanceof TypeError && bad.message.includes('durable'), `per send: ${bad}`);
      const badBox = await m.outbox(new m.RetryPolicy(), 'orders', { store, durable: true }).then(() => null, (e) => e);
      assert(badBox instanceof TypeError && badBox.message.includes('outbox.durable'), `per outbox: ${badBox}`);
      await box.close();
    }],
    ['write-ahead: a send whose options are refused (an empty, a 256-character or a non-ASCII key, a bad totalMs, an unknown key) throws the RangeError or TypeError naming the field, and nothing reaches the store or the server', async () => {
      await server.reset();
      await server.open(0);
      const memory = m.memoryStore();
      const writes = [];
      // The store as the outbox sees it, every write and delete recorded.
      const store = {
        ...memory,
        put: (entry) => (writes.push(`put ${entry.key}`), memory.put(entry)),
        delete: (id) => (writes.push(`delete ${id}`), memory.delete(id)),
      };
      const { box } = await open(m, { store, durable });
      const refused = [
        ['an empty key', { idempotencyKey: '' }, RangeError, /`retry\.idempotencyKey`.*1\.\.=255/],
        ['a 256-character key', { idempotencyKey: 'k'.repeat(256) }, RangeError, /`retry\.idempotencyKey`.*1\.\.=255/],
        ['a non-ASCII key', { idempotencyKey: 'ключ-1' }, RangeError, /`retry\.idempotencyKey`.*visible ASCII/],
        ['a totalMs of 0', { idempotencyKey: 'k-1', totalMs: 0 }, RangeError, /`retry\.totalMs`.*1\.\.=2147483647/],
        ['an unknown key', { idempotencyKey: 'k-1', maxAtempts: 2 }, TypeError, /`maxAtempts` is not an option of `retry`/],
      ];
      for (const [label, retry, Type, message] of refused) {
        const error = await box.send(`${server.url}/orders`, { method: 'POST', body: 'pay 10', retry }).then(() => null, (e) => e);
        assert(error instanceof Type && message.test(error.message), `${label}: ${error?.name}: ${error?.message}`);
      }
      assert(writes.length === 0, `nothing was written to the store, not even for a moment: ${writes.join(', ')}`);
      assert(Object.keys((await server.counts()).requests).length === 0, 'nothing was sent');
      // A good key after them: written ahead, sent, deleted.
      const r = await box.send(`${server.url}/orders`, { method: 'POST', body: 'pay 10', retry: { idempotencyKey: 'ahead-good-1' } });
      assert(r.kind === 'succeeded' && r.ahead === true, `a good send afterwards: ${r.kind} ahead ${r.ahead}`);
      assert(writes.length === 2 && writes[0] === 'put ahead-good-1' && writes[1].startsWith('delete '), `its write and delete: ${writes.join(', ')}`);
      await box.close();
    }],
  ];
  return { setup, teardown, list };
}
