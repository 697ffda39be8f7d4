// One validation for every way into the outbox (docs/outbox.md): `send()`
// takes what `policy.fetch` takes and refuses what it refuses, with the
// same error; `outbox()` refuses unknown options by name; a body over the
// replay bound answers `body-too-large` whatever its type; an entry's id
// never becomes a path. Each case is a sentence for tests/outbox/run.mjs.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assert, fixture } from './node.mjs';

const MIB8 = 8 * 1024 * 1024;

/** Each body type the README lists, `n` bytes long (the forms: about `n`). */
function bodies(n) {
  const bytes = new Uint8Array(n).fill(97);
  const form = new FormData();
  form.append('a', 'a'.repeat(n));
  return {
    string: 'a'.repeat(n),
    ArrayBuffer: bytes.slice().buffer,
    Uint8Array: bytes.slice(),
    DataView: new DataView(bytes.slice().buffer),
    Blob: new Blob([bytes]),
    URLSearchParams: new URLSearchParams({ a: 'a'.repeat(Math.max(0, n - 2)) }),
    FormData: form,
  };
}

export function cases(pkg) {
  let server, m;
  const { tmp, setup, teardown } = fixture(pkg, 'saferetry-calls-', (x) => ({ m, server } = x));
  const list = [
    ['send() refuses what policy.fetch refuses, with the same error naming the field, and neither sends nor keeps anything', async () => {
      await server.reset();
      const policy = new m.RetryPolicy({ totalMs: 800 });
      const store = m.memoryStore();
      const box = await m.outbox(policy, 'orders', { store });
      const url = `${server.url}/orders`;
      const table = [
        [{ idempotencyKey: 5 }, TypeError, 'retry.idempotencyKey'],
        [{ idempotencyKey: '' }, RangeError, 'retry.idempotencyKey'],
        [{ idempotencyKey: 'two words' }, RangeError, 'retry.idempotencyKey'],
        [{ idempotencyKey: 'x'.repeat(256) }, RangeError, 'retry.idempotencyKey'],
        [{ idempotencyKey: 'ключ-1' }, RangeError, 'retry.idempotencyKey'],
        [{ maxAttempts: 0 }, RangeError, 'retry.maxAttempts'],
        [{ attemptMs: 'soon' }, TypeError, 'retry.attemptMs'],
        [{ maxAtempts: 3 }, TypeError, 'maxAtempts'],
        [{ concurrency: 2 }, TypeError, 'retry.concurrency'],
      ];
      for (const [retry, kind, field] of table) {
        const init = { method: 'POST', body: 'x', retry };
        const viaFetch = await policy.fetch(url, init).then(() => null, (e) => e);
        const viaSend = await box.send(url, init).then(() => null, (e) => e);
        assert(viaFetch instanceof kind && viaFetch.message.includes(`\`${field}\``), `policy.fetch ${JSON.stringify(retry)}: ${viaFetch}`);
        assert(viaSend?.constructor === viaFetch.constructor && viaSend.message === viaFetch.message, `send ${JSON.stringify(retry)}: ${viaSend}, fetch: ${viaFetch}`);
      }
      assert((await server.counts()).total === 0, 'nothing was sent');
      assert((await store.list()).length === 0, 'nothing was kept');
      await box.close();
    }],
    ['outbox() refuses an option it does not know, by name', async () => {
      const policy = new m.RetryPolicy();
      for (const options of [{ store: m.memoryStore(), tll: 5 }, { store: m.memoryStore(), keep: 'yes', ttl: 1000 }]) {
        const error = await m.outbox(policy, 'orders', options).then(() => null, (e) => e);
        const name = Object.keys(options)[1];
        assert(error instanceof TypeError && error.message.includes(`\`${name}\``), `${name}: ${error}`);
      }
    }],
    ['a body over 8 MiB of every type the README lists answers try-later, not kept: body-too-large (a stream: body-not-replayable), and one that fits is kept with its bytes', async () => {
      await server.reset();
      await server.open(Date.now() + 60_000); // Retry-After: 60, beyond the budget: try-later
      const store = m.memoryStore();
      const box = await m.outbox(new m.RetryPolicy({ totalMs: 800 }), 'orders', { store });
      const url = `${server.url}/orders`;
      for (const [type, body] of Object.entries(bodies(MIB8 + 1))) {
        const r = await box.send(url, { method: 'PUT', body, retry: { idempotencyKey: `big-${type}` } });
        assert(r.kind === 'try-later' && r.kept === false && r.notKept === 'body-too-large', `${type}: ${r.kind} ${r.reason} ${r.notKept}`);
      }
      const request = new Request(url, { method: 'PUT', body: 'a'.repeat(MIB8 + 1), headers: { 'idempotency-key': 'big-Request' } });
      const r = await box.send(request);
      assert(r.kept === false && r.notKept === 'body-too-large', `Request: ${r.kind} ${r.reason} ${r.notKept}`);
      const stream = new ReadableStream({ start(c) { c.enqueue(new Uint8Array(3)); c.close(); } });
      const s = await box.send(url, { method: 'PUT', body: stream, duplex: 'half', retry: { idempotencyKey: 'stream' } });
      assert(s.kept === false && s.notKept === 'body-not-replayable', `stream: ${s.kind} ${s.reason} ${s.notKept}`);
      assert((await store.list()).length === 0, 'nothing kept');
      for (const [type, body] of Object.entries(bodies(100))) {
        const k = await box.send(url, { method: 'PUT', body, retry: { idempotencyKey: `small-${type}` } });
        assert(k.kept === true, `${type} of 100 bytes: ${k.kind} ${k.notKept}`);
        const [entry] = (await store.list()).filter((e) => e.id === `small-${type}`);
        const sent = new Request(url, { method: 'PUT', body });
        const type_ = new Headers(entry.headers).get('content-type');
        const text = new TextDecoder().decode(entry.body);
        if (type === 'FormData') assert(type_.startsWith('multipart/form-data; boundary=') && text.includes(type_.split('boundary=')[1]), `FormData kept with its boundary: ${type_}`);
        else assert(text === (await sent.text()) && type_ === sent.headers.get('content-type'), `${type} kept as sent: ${type_} ${text.length}`);
      }
      await box.close();
    }],
    ['an entry id from a caller\'s key never becomes a path: keys with dots and slashes, keys differing in case and a 250-character key are files of their own in the directory', async () => {
      await server.reset();
      await server.open(Date.now() + 60_000);
      const dir = path.join(tmp, 'ids');
      const box = await m.outbox(new m.RetryPolicy({ totalMs: 800 }), 'orders', { store: m.fileStore(dir) });
      const keys = ['..', '../../escape', 'a/b', 'Order-A', 'order-a', '%2e%2e', 'k'.repeat(250)];
      for (const key of keys) {
        const r = await box.send(`${server.url}/orders`, { method: 'PUT', body: key, retry: { idempotencyKey: key } });
        assert(r.kept === true && r.id === key, `${key}: ${r.kept} ${r.notKept} ${r.id}`);
      }
      const files = readdirSync(dir).filter((n) => n.endsWith('.entry.json'));
      assert(files.length === keys.length && files.every((n) => /^[0-9a-f]{64}\.entry\.json$/.test(n)), `files: ${files}`);
      assert(readdirSync(tmp).join() === 'ids', `nothing outside the directory: ${readdirSync(tmp)}`);
      const ids = (await box.pending()).map((e) => e.id).sort();
      assert(ids.join('|') === [...keys].sort().join('|'), `pending: ${ids}`);
      await box.close();
    }],
    ['an entry an earlier version kept under its id as the file name is sent once and then leaves the directory', async () => {
      await server.reset();
      const dir = path.join(tmp, 'older');
      mkdirSync(dir, { recursive: true });
      const policy = new m.RetryPolicy({ totalMs: 800 });
      // Kept by the current version, then renamed as the version before
      // the hashed names kept it: encodeURIComponent(id) + ".entry.json".
      const kept = m.memoryStore();
      await server.open(Date.now() + 60_000);
      const keeper = await m.outbox(policy, 'orders', { store: kept });
      const first = await keeper.send(`${server.url}/orders`, { method: 'PUT', body: 'v1', retry: { idempotencyKey: 'order/7' } });
      assert(first.kept === true, `kept: ${first.kept} ${first.notKept}`);
      await keeper.close();
      const [entry] = await kept.list();
      const body = entry.body === null ? null : Buffer.from(entry.body).toString('base64');
      writeFileSync(path.join(dir, `${encodeURIComponent(entry.id)}.entry.json`), JSON.stringify({ ...entry, body, retryAt: Date.now() }));
      await server.reset();
      const box = await m.outbox(policy, 'orders', { store: m.fileStore(dir) });
      await box.flush();
      await box.flush();
      const counts = await server.counts();
      assert(counts.total === 1, `sent ${counts.total} times`);
      assert(readdirSync(dir).filter((n) => n.endsWith('.entry.json')).length === 0, `left: ${readdirSync(dir)}`);
      await box.close();
    }],
  ];
  return { setup, teardown, list };
}
