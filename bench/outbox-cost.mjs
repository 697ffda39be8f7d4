// What write-ahead costs per send (docs/outbox.md, BENCHMARKS.md "Outbox
// write-ahead"): one store write of the entry before the first send and
// one delete after its final outcome, measured in each store with a
// typical entry (a 200-byte JSON body, four headers, the schedule). Not a
// test: figures, printed as a Markdown table.
//
//   node bench/outbox-cost.mjs [node] [browsers] [workerd]
//
// Node: memoryStore() and fileStore(dir) (tmpfs or disk: the temp dir's),
// N pairs in 5 rounds, each round a block of sequential awaited calls
// timed as one and divided: the median round, and the slowest; the file
// store also with its syncs skipped (its cost before issue 38: what the
// syncs add per send is the difference).
// Browsers: indexedDBStore(name) in Chromium, Firefox and WebKit, timed the
// same way in the page, with strict durability (as it is) and with the
// browser's default (before issue 38). workerd: durableStore(ctx.storage) in a Durable
// Object on localDisk storage, each write made durable (`storage.sync()`,
// as an output gate makes a send wait for it), timed from outside: (N pairs
// − 0 pairs) / N over one request each, median of 5.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const N = Number(process.env.OUTBOX_COST_N ?? 300);
const parts = process.argv.slice(2);
const want = (p) => parts.length === 0 || parts.includes(p);
const rows = [];

// The measuring loop, as source: it runs in Node and in the pages alike.
const MEASURE = `async (store, n) => {
  const body = new TextEncoder().encode(JSON.stringify({ order: 'x'.repeat(180) }));
  const entry = (id) => ({ id, method: 'POST', url: 'https://api.example/orders', headers: [['content-type', 'application/json'], ['idempotency-key', id], ['accept', '*/*'], ['x-client', 'bench']], body, key: id, keptAt: Date.now(), retryAt: Date.now() + 32000, expiresAt: Date.now() + 86400000, sends: 1 });
  // Browsers coarsen performance.now() (to 0.1-1 ms): each round times a
  // block of sequential, awaited calls, and divides.
  const rounds = 5, each = Math.max(1, Math.floor(n / rounds)), put = [], del = [];
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    for (let i = 0; i < each; i++) await store.put(entry('cost-' + i));
    put.push((performance.now() - t) / each);
    t = performance.now();
    for (let i = 0; i < each; i++) await store.delete('cost-' + i);
    del.push((performance.now() - t) / each);
  }
  const sorted = (xs) => xs.slice().sort((a, b) => a - b);
  return { put: [sorted(put)[2], sorted(put)[4]], del: [sorted(del)[2], sorted(del)[4]] };
}`;
const measure = eval(MEASURE); // eslint-disable-line no-eval
const fmt = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
const row = (store, where, r) => rows.push(`| ${store} | ${where} | ${fmt(r.put[0])} (slowest ${fmt(r.put[1])}) | ${fmt(r.del[0])} (slowest ${fmt(r.del[1])}) | ${fmt(r.put[0] + r.del[0])} |`);

if (want('node')) {
  const { memoryStore, fileStore } = await import('../js/src/node.js');
  row('memoryStore()', `Node ${process.versions.node}`, await measure(memoryStore(), N));
  // The file store as it is (each write and delete synced), and beside it
  // the same store with its syncs made no-ops: the order before issue 38
  // (a temporary file renamed, no sync). Twice each, alternately: the
  // machine's load moves both.
  const probe = await open(fileURLToPath(import.meta.url));
  const handles = Object.getPrototypeOf(probe); // FileHandle.prototype
  await probe.close();
  const { sync, datasync } = handles;
  for (let i = 0; i < 2; i++) {
    for (const synced of [true, false]) {
      if (!synced) handles.sync = handles.datasync = async () => {};
      const dir = mkdtempSync(path.join(tmpdir(), 'saferetry-cost-'));
      row(synced ? 'fileStore(dir)' : 'fileStore(dir), syncs skipped (before)', `Node, ${tmpdir()}`, await measure(fileStore(dir), N));
      rmSync(dir, { recursive: true, force: true });
      Object.assign(handles, { sync, datasync });
    }
  }
}

if (want('browsers')) {
  const { launch } = await import('../tests/browsers/webdriver.mjs');
  const { startPages } = await import('../tests/outbox/browsers.mjs');
  const pages = await startPages();
  try {
    for (const browser of ['chromium', 'firefox', 'webkit']) {
      const h = await launch(browser);
      try {
        await h.session.setTimeouts({ script: 120_000, pageLoad: 20_000 });
        await h.session.navigate(`${pages.url}/outbox/away.html`, 20_000);
        // As it is (strict durability), and with its transactions opened
        // without options: the browser's default, as before issue 38.
        for (const strict of [true, false, true, false]) {
          const r = await h.session.executeAsyncScript(`const done = arguments[arguments.length - 1];
            const strict = arguments[0];
            const transaction = IDBDatabase.prototype.transaction;
            if (!strict) IDBDatabase.prototype.transaction = function (names, mode) { return transaction.call(this, names, mode); };
            import('/pkg/outbox-stores/indexeddb.js').then(async ({ indexedDBStore }) => {
              const store = indexedDBStore('cost');
              await store.list(); // opened before timing
              const r = await (${MEASURE})(store, ${N});
              await store.close();
              IDBDatabase.prototype.transaction = transaction;
              done(r);
            }).catch((e) => done({ error: String(e) }));`, [strict], 120_000);
          if (r.error) throw new Error(`${browser}: ${r.error}`);
          row(strict ? 'indexedDBStore(name)' : 'indexedDBStore(name), default durability (before)', `${browser} ${h.browserVersion}`, r);
        }
      } finally {
        await h.close();
      }
    }
  } finally {
    await new Promise((r) => pages.server.close(r));
  }
}

if (want('workerd')) {
  const { bundleModules, start, stop, workerdPort, wranglerWorker } = await import('../tests/runtimes/procs.mjs');
  const { config, COMPAT_DATE, WRANGLER_JSONC } = await import('../tests/outbox/workerd.mjs');
  const OUT = path.join(REPO, 'test-output/outbox-cost');
  rmSync(OUT, { recursive: true, force: true });
  const storageDir = path.join(OUT, 'do-storage');
  mkdirSync(storageDir, { recursive: true });
  const source = `import { DurableObject } from 'cloudflare:workers';
import { durableStore } from 'saferetry/cloudflare';
export class Outbox extends DurableObject {
  async cost(n) {
    const store = durableStore(this.ctx.storage);
    const body = new TextEncoder().encode(JSON.stringify({ order: 'x'.repeat(180) }));
    for (let i = 0; i < n; i++) {
      const id = 'cost-' + i;
      await store.put({ id, method: 'POST', url: 'https://api.example/orders', headers: [['content-type', 'application/json'], ['idempotency-key', id]], body, key: id, keptAt: Date.now(), retryAt: Date.now() + 32000, expiresAt: Date.now() + 86400000, sends: 1 });
      await this.ctx.storage.sync();
      await store.delete(id);
      await this.ctx.storage.sync();
    }
    return n;
  }
}
export default { async fetch(request, env) {
  const n = Number(new URL(request.url).searchParams.get('n'));
  return new Response(String(await env.OUTBOX.get(env.OUTBOX.idFromName('cost')).cost(n)));
} };`;
  const buildDir = path.join(OUT, 'build');
  wranglerWorker({ dir: buildDir, source, packageDir: path.join(REPO, 'js'), compatibilityDate: COMPAT_DATE, wranglerJsonc: WRANGLER_JSONC });
  const configFile = path.join(OUT, 'cost.capnp');
  writeFileSync(configFile, config({ dir: OUT, modules: bundleModules(path.join(buildDir, 'dist'), 'main.js', { requireWasm: false }), storageDir }));
  const p = start('workerd', path.join(REPO, 'node_modules/.bin/workerd'), ['serve', '--experimental', configFile, '--control-fd=3'], { extraFds: 1, echo: false });
  try {
    const base = `http://127.0.0.1:${await workerdPort(p)}`;
    const timed = async (n) => {
      const t = performance.now();
      const res = await fetch(`${base}/?n=${n}`, { signal: AbortSignal.timeout(120_000) });
      if (Number(await res.text()) !== n) throw new Error(`workerd answered ${res.status}`);
      return performance.now() - t;
    };
    await timed(5); // warm: the object exists, its database is open
    const pairs = [];
    for (let i = 0; i < 5; i++) pairs.push(((await timed(N)) - (await timed(0))) / N);
    pairs.sort((a, b) => a - b);
    rows.push(`| durableStore(storage) | workerd, localDisk, each write synced | — | — | ${fmt(pairs[2])} (of 5: ${pairs.map(fmt).join(', ')}) |`);
  } finally {
    await stop(p);
  }
}

console.log(`N = ${N} pairs per store\n`);
console.log('| store | where | write (median of 5 rounds) | delete | per send (write + delete) |');
console.log('|---|---|---:|---:|---:|');
for (const r of rows) console.log(r);
process.exit(0);
