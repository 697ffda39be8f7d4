// The outbox in Node (docs/outbox.md): real stores, a real server on
// 127.0.0.1, real processes. Each case is a sentence; `cases(pkg)` returns
// them for tests/outbox/run.mjs. Every wait is bounded.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOutboxServer } from './server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function assert(ok, message) {
  if (!ok) throw new Error(message);
}

/** Waits (bounded) until `check()` answers something truthy. */
export async function until(what, ms, check) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

export function child(args, timeoutMs = 25_000) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(HERE, 'node-child.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`child ${args[0]} timed out: ${err}`)); }, timeoutMs);
    p.on('close', (code) => { // 'close': every byte printed has been read
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`child ${args[0]} exited ${code}: ${err}`));
      try { resolve(JSON.parse(out.trim().split('\n').pop())); } catch { reject(new Error(`child ${args[0]} printed ${out} ${err}`)); }
    });
  });
}

/** An outbox in this process whose events are recorded. */
export async function open(m, options, policyOptions = { totalMs: 800 }) {
  const box = await m.outbox(new m.RetryPolicy(policyOptions), 'orders', options);
  const events = [];
  for (const type of ['kept', 'not-kept', 'sent', 'expired', 'failed', 'retry', 'error']) box.addEventListener(type, (e) => events.push({ type, detail: e.detail }));
  return { box, events };
}

/** What each list of Node cases shares: a temporary directory (`tmp`),
 * and at `setup` the package and the counting server, handed to `loaded`. */
export function fixture(pkg, prefix, loaded) {
  const tmp = mkdtempSync(path.join(tmpdir(), prefix));
  let server;
  const setup = async () => {
    const m = await import(pkg);
    server = await startOutboxServer();
    loaded({ m, server });
  };
  const teardown = async () => {
    await server?.close();
    rmSync(tmp, { recursive: true, force: true });
  };
  return { tmp, setup, teardown };
}

export function cases(pkg) {
  let server, m;
  const { tmp, setup, teardown } = fixture(pkg, 'saferetry-outbox-', (x) => ({ m, server } = x));
  const list = [
    ['bad outbox options are a RangeError or TypeError naming the field, and an outbox still opens after them', async () => {
      const policy = new m.RetryPolicy();
      for (const [options, kind, field] of [[{ store: m.memoryStore(), ttl: 0 }, RangeError, 'outbox.ttl'], [{ store: m.memoryStore(), ttl: 'soon' }, TypeError, 'outbox.ttl'], [{ store: m.memoryStore(), credentials: 'yes' }, TypeError, 'outbox.credentials'], [{ store: {} }, TypeError, 'outbox.store']]) {
        const error = await m.outbox(policy, 'orders', options).then(() => null, (e) => e);
        assert(error instanceof kind && error.message.includes(field), `${JSON.stringify(options)} gave ${error}`);
      }
      const box = await m.outbox(policy, 'orders', { store: m.memoryStore() });
      assert((await box.pending()).length === 0, 'a fresh outbox has nothing pending');
      await box.close();
    }],
    ['a keyless POST that may have been delivered is never stored, nor one that surely was not sent', async () => {
      await server.reset();
      const store = m.memoryStore();
      const { box, events } = await open(m, { store });
      const dropped = await box.send(`${server.url}/drop`, { method: 'POST', body: 'pay 10' });
      assert(dropped.reason === 'maybe-delivered' && dropped.kept === false, `dropped: ${dropped.reason} kept ${dropped.kept}`);
      // A port nobody listens on: refused, surely not sent, retried, try-later.
      const closed = await startOutboxServer();
      const refusedUrl = `${closed.url}/orders`;
      await closed.close();
      const refused = await box.send(refusedUrl, { method: 'POST', body: 'pay 10' });
      assert(refused.kind === 'try-later' && refused.kept === false && refused.notKept === 'no-idempotency-key', `refused: ${refused.kind} ${refused.reason} ${refused.notKept}`);
      assert((await store.list()).length === 0, 'nothing in the store');
      const notKept = events.filter((e) => e.type === 'not-kept').map((e) => e.detail.notKept);
      assert(notKept.join() === 'not-try-later,no-idempotency-key', `not-kept events: ${notKept}`);
      await box.flush();
      const c = await server.counts();
      assert(c.total === 1 && c.requests['(none)'] === 1, `the server saw the dropped POST once: ${JSON.stringify(c.requests)}`);
      await box.close();
    }],
    ['the file store survives a process restart, and two processes reopening it send the write once, with the same key, not before its Retry-After', async () => {
      await server.reset();
      const dir = path.join(tmp, 'restart');
      await server.open(Date.now() + 2500);
      const sent = await child(['send', pkg, dir, `${server.url}/orders`, 'order-restart-1']);
      assert(sent.kind === 'try-later' && sent.kept === true, `first process: ${JSON.stringify(sent)}`);
      assert(readdirSync(dir).filter((n) => n.endsWith('.entry.json')).length === 1, 'one entry file after the first process ended');
      const [a, b] = await Promise.all([child(['drain', pkg, dir]), child(['drain', pkg, dir])]);
      const ended = [...a.ended, ...b.ended];
      assert(ended.length === 1 && ended[0].type === 'sent' && ended[0].key === 'order-restart-1', `ended: ${JSON.stringify(ended)}`);
      const c = await server.counts();
      assert(c.requests['order-restart-1'] === 2 && c.accepted['order-restart-1'] === 1, `counts: ${JSON.stringify(c)}`);
      assert(c.times['order-restart-1'][1] >= sent.retryAt, `re-sent at ${c.times['order-restart-1'][1]}, retryAt ${sent.retryAt}`);
      assert(readdirSync(dir).filter((n) => n.endsWith('.entry.json')).length === 0, 'no entry left');
    }],
    ['an entry that expired is never sent, and ends expired', async () => {
      await server.reset();
      const store = m.memoryStore();
      await server.open(Date.now() + 1500); // Retry-After: 2
      const first = await open(m, { store, ttl: 2500 });
      const r = await first.box.send(`${server.url}/orders`, { method: 'PUT', body: 'v=1', retry: { idempotencyKey: 'order-expire-1' } });
      assert(r.kept === true, `kept: ${r.kept} ${r.notKept}`);
      await first.box.close(); // the page closes before the entry is due
      await sleep(2700);
      const second = await open(m, { store, ttl: 2500 });
      await until('the expiry', 5000, () => second.events.some((e) => e.type === 'expired'));
      assert((await store.list()).length === 0, 'the entry is gone');
      const c = await server.counts();
      assert(c.requests['order-expire-1'] === 1, `sent once only, before expiry: ${JSON.stringify(c.requests)}`);
      await second.box.close();
    }],
    ['storage unavailable: the call still answers, and says the write was not kept', async () => {
      await server.reset();
      const file = path.join(tmp, 'not-a-dir');
      writeFileSync(file, 'x');
      await server.open(Date.now() + 1500);
      const { box, events } = await open(m, { store: m.fileStore(path.join(file, 'outbox')) });
      const r = await box.send(`${server.url}/orders`, { method: 'POST', body: 'x', retry: { idempotencyKey: 'order-nostore-1' } });
      assert(r.kind === 'try-later' && r.kept === false && r.notKept === 'storage', `result: ${r.kind} ${r.kept} ${r.notKept}`);
      const e = events.find((x) => x.type === 'not-kept');
      assert(e?.detail.notKept === 'storage' && e.detail.error?.code === 'ENOTDIR', `event: ${JSON.stringify(e?.detail.notKept)} ${e?.detail.error?.code}`);
      await box.close();
    }],
    ['an entry that cannot be read or made ends failed, and the drain still sends the others', async () => {
      await server.reset();
      await server.open(0);
      const store = m.memoryStore();
      const now = Date.now();
      const good = { id: 'order-good-1', method: 'PUT', url: `${server.url}/orders`, headers: [['idempotency-key', 'order-good-1']], body: new TextEncoder().encode('ok'), key: 'order-good-1', retryAt: now - 10, expiresAt: now + 60_000, sends: 1, keptAt: now - 3000 };
      await store.put({ ...good, id: 'corrupt-1', key: 'corrupt-1', retryAt: 'soon' });
      await store.put({ ...good, id: 'unmakeable-1', key: 'unmakeable-1', url: 'http://[::1', retryAt: now - 20 });
      await store.put(good);
      const { box, events } = await open(m, { store });
      await until('the drain', 8000, () => events.some((e) => e.type === 'sent'));
      const ended = events.filter((e) => ['sent', 'failed'].includes(e.type)).map((e) => `${e.type}:${e.detail.entry.key}`).sort();
      assert(ended.join() === 'failed:corrupt-1,failed:unmakeable-1,sent:order-good-1', `ended: ${ended}`);
      assert((await store.list()).length === 0, 'nothing left');
      assert((await server.counts()).accepted['order-good-1'] === 1, 'the good one was accepted once');
      await box.close();
    }],
    ['credentials are written only when the caller opts in, and are then sent again', async () => {
      await server.reset();
      await server.open(Date.now() + 1500);
      const headers = { authorization: 'Bearer secret-token-1' };
      const plain = await open(m, { store: m.memoryStore() });
      const r = await plain.box.send(`${server.url}/orders`, { method: 'PUT', body: 'a', headers });
      assert(r.kept === false && r.notKept === 'credentials', `without opt-in: ${r.kept} ${r.notKept}`);
      await plain.box.close();
      const store = m.memoryStore();
      const opted = await open(m, { store, credentials: true });
      const k = await opted.box.send(`${server.url}/orders`, { method: 'PUT', body: 'a', headers });
      assert(k.kept === true, `with opt-in: ${k.kept} ${k.notKept}`);
      const sent = await until('the re-send', 8000, () => opted.events.find((e) => e.type === 'sent'));
      const echoed = await sent.detail.response.json();
      assert(echoed.auth === 'Bearer secret-token-1', `re-sent with ${echoed.auth}`);
      await opted.box.close();
    }],
  ];
  return { setup, teardown, list };
}
