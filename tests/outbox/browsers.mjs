// The outbox in Chromium, Firefox and WebKit (docs/outbox.md): the real
// IndexedDB store and Web Locks. A page closed between the try-later and
// the send, reopened: the write is sent once, with the same key; two tabs
// open on one outbox: sent once; IndexedDB refused (an opaque-origin
// frame): the call answers and says the write was not kept. Pages come from a static server here; the
// writes go to the counting server (another 127.0.0.1 origin, CORS).
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../browsers/webdriver.mjs';
import { startOutboxServer } from './server.mjs';
import { assert, until } from './node.mjs';
import { crashCases } from './browsers-crash.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PKG = path.resolve(HERE, '../../js/src');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html; charset=utf-8' };
const PAGE = `<!doctype html><meta charset="utf-8"><title>outbox</title>
<script type="importmap">{ "imports": { "saferetry": "/pkg/web.js" } }</script>
<script type="module" src="/outbox/page.mjs"></script>`;
const AWAY = '<!doctype html><meta charset="utf-8"><title>away</title><p>away</p>';
// saferetry/sw's `syncOutbox` options (the option table's row for it,
// tests/e2e/options.mjs): a page that loads the entry alone (as a service
// worker does) and fires a synthetic Background Sync event per outbox; what
// each event's `waitUntil` promise settled with lands in `window.__sync`.
const SYNC_OPTIONS = `<!doctype html><meta charset="utf-8"><title>sync options</title>
<script type="module">
  import { syncOutbox } from '/pkg/sw.js';
  const table = [
    ['opts-good', { policy: { maxAttempts: 2, retryOn: { statuses: [503] } }, ttl: 1000, credentials: true }],
    ['opts-none', undefined],
    ['opts-ttl', { ttl: 0 }],
    ['opts-ttl-type', { ttl: '1d' }],
    ['opts-credentials', { credentials: 'yes' }],
    ['opts-policy', { policy: { maxAttempts: 0 } }],
    ['opts-policy-key', { policy: { maxAttemps: 2 } }],
    ['opts-unknown', { durable: 'before-send' }],
  ];
  for (const [name, options] of table) syncOutbox(name, options);
  const fire = (name) => new Promise((resolve) => {
    const event = new Event('sync');
    event.tag = 'saferetry-outbox:' + name;
    event.waitUntil = (p) => p.then(() => resolve('ok'), (e) => resolve(e.constructor.name + ': ' + e.message));
    dispatchEvent(event);
  });
  const out = {};
  for (const [name] of table) out[name] = await fire(name);
  window.__sync = out;
</script>`;
// A frame whose origin is opaque (sandboxed without allow-same-origin): the
// browser refuses it IndexedDB, so the outbox's store is unavailable there.
const SANDBOXED = `<!doctype html><meta charset="utf-8"><title>sandboxed</title>
<script>window.__frame = null; addEventListener('message', (e) => { window.__frame = e.data; });</script>
<iframe sandbox="allow-scripts" src="/outbox/frame.html"></iframe>`;
const FRAME = `<!doctype html><meta charset="utf-8"><title>frame</title>
<script type="importmap">{ "imports": { "saferetry": "/pkg/web.js" } }</script>
<script type="module">
  const report = (data) => parent.postMessage(data, '*');
  try {
    const { RetryPolicy, outbox } = await import('saferetry');
    const { server, key } = await new Promise((resolve) => { addEventListener('message', (e) => resolve(e.data), { once: true }); report({ ready: true }); });
    const box = await outbox(new RetryPolicy({ totalMs: 800 }), 'sandboxed');
    const events = [];
    box.addEventListener('not-kept', (e) => events.push({ notKept: e.detail.notKept, error: String(e.detail.error) }));
    const r = await box.send(server + '/orders', { method: 'POST', body: '{}', retry: { idempotencyKey: key } });
    report({ kind: r.kind, kept: r.kept, notKept: r.notKept ?? null, storeError: String(r.storeError), events });
  } catch (error) {
    report({ error: String(error && error.stack || error) });
  }
</script>`;

// `SAFERETRY_AHEAD_OFF=1`: the write-ahead case sends without it, and
// fails (the write is lost): how the case was checked.
const AHEAD = process.env.SAFERETRY_AHEAD_OFF === '1' ? 'after-try-later' : 'before-send';

export function startPages() {
  const server = http.createServer((req, res) => {
    const p = new URL(req.url, 'http://x').pathname;
    // (CORS: the sandboxed frame's module and wasm requests come from an opaque origin.)
    const send = (status, type, body) => { res.writeHead(status, { 'content-type': type, 'access-control-allow-origin': '*' }); res.end(body); };
    if (p === '/outbox/page.html') return send(200, TYPES['.html'], PAGE);
    if (p === '/outbox/away.html') return send(200, TYPES['.html'], AWAY);
    if (p === '/outbox/sandboxed.html') return send(200, TYPES['.html'], SANDBOXED);
    if (p === '/outbox/frame.html') return send(200, TYPES['.html'], FRAME);
    if (p === '/outbox/sync-options.html') return send(200, TYPES['.html'], SYNC_OPTIONS);
    if (p === '/outbox/page.mjs' || p === '/outbox/crash-points.mjs') return send(200, TYPES['.mjs'], readFileSync(path.join(HERE, path.basename(p))));
    if (p === '/outbox/sw.mjs') return send(200, TYPES['.mjs'], readFileSync(path.join(HERE, 'sw.mjs')));
    const m = /^\/pkg\/((?:outbox-stores\/)?[a-z_-]+\.(js|wasm))$/.exec(p);
    if (m && existsSync(path.join(PKG, m[1]))) return send(200, TYPES[path.extname(m[1])], readFileSync(path.join(PKG, m[1])));
    send(404, 'text/plain', 'not found');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

/** The calls a case makes on the current window of `get().h`'s browser,
 * whose pages `get().pages` serves: `load(name, ...open)` loads the test
 * page and opens the outbox there (`window.__ob.open`). */
export function helpers(get) {
  const js = (script, args = []) => get().h.session.executeScript(script, args, 15_000);
  const call = (fn, ...args) => get().h.session.executeAsyncScript(
    `const done = arguments[arguments.length - 1]; window.__ob.${fn}(...Array.from(arguments).slice(0, -1)).then(done, (e) => done({ error: String(e && e.stack || e) }))`, args, 15_000);
  const page = async () => {
    await get().h.session.navigate(`${get().pages.url}/outbox/page.html`, 20_000);
    const ready = await until('the page', 10_000, () => js('return window.__ready === true'));
    assert(ready, 'page ready');
  };
  const load = async (name, ...open) => {
    await page();
    const opened = await call('open', name, ...open);
    assert(opened === true, `outbox opened: ${JSON.stringify(opened)}`);
  };
  const events = () => js('return window.__events');
  return { js, call, page, load, events };
}

export function cases(browser) {
  let h, pages, server;
  const { js, call, load, events } = helpers(() => ({ h, pages }));
  const setup = async () => {
    pages = await startPages();
    server = await startOutboxServer();
    h = await launch(browser);
    await h.session.setTimeouts({ script: 15_000, pageLoad: 20_000 });
  };
  const teardown = async () => {
    await h?.close();
    await server?.close();
    await new Promise((r) => pages?.server.close(r));
  };
  const list = [
    ['a page closed between the try-later and the send, reopened: the write is sent once, with the same key', async () => {
      await server.reset();
      const key = `reopen-${browser}`;
      await load('reopen');
      await server.open(Date.now() + 1500); // Retry-After: 2
      const r = await call('send', `${server.url}/orders`, key);
      assert(r.kind === 'try-later' && r.kept === true, `send: ${JSON.stringify(r)}`);
      await h.session.navigate(`${pages.url}/outbox/away.html`, 20_000); // the page is gone
      await sleep(Math.max(0, r.retryAt - Date.now()) + 200);
      const before = await server.counts();
      assert(before.requests[key] === 1, `nothing was sent while no page was open: ${JSON.stringify(before.requests)}`);
      await load('reopen');
      const sent = await until('the re-send', 10_000, async () => (await events()).find((e) => e.type === 'sent'));
      assert(sent.key === key, `sent ${JSON.stringify(sent)}`);
      const c = await server.counts();
      assert(c.requests[key] === 2 && c.accepted[key] === 1, `counts: ${JSON.stringify(c)}`);
      assert((await call('pending')) === 0, 'nothing pending');
    }],
    ['two tabs open on one outbox: the write is sent once', async () => {
      await server.reset();
      const key = `tabs-${browser}`;
      const first = await h.session.cmd('GET', '/window');
      await load('tabs');
      await server.open(Date.now() + 1500);
      const r = await call('send', `${server.url}/orders`, key);
      assert(r.kept === true, `send: ${JSON.stringify(r)}`);
      const second = (await h.session.cmd('POST', '/window/new', { type: 'window' })).handle;
      await h.session.cmd('POST', '/window', { handle: second });
      await load('tabs');
      await until('the write accepted', 12_000, async () => (await server.counts()).accepted[key] === 1);
      await sleep(1500); // the other tab's timer has fired too by now
      const got = [];
      for (const handle of [first, second]) {
        await h.session.cmd('POST', '/window', { handle });
        got.push(...(await events()).filter((e) => e.type === 'sent'));
        assert((await call('pending')) === 0, 'nothing pending');
      }
      const c = await server.counts();
      assert(c.requests[key] === 2 && c.accepted[key] === 1, `counts: ${JSON.stringify(c)}`);
      assert(got.length === 1 && got[0].key === key, `sent events across tabs: ${JSON.stringify(got)}`);
      await h.session.cmd('POST', '/window', { handle: second });
      await h.session.cmd('DELETE', '/window');
      await h.session.cmd('POST', '/window', { handle: first });
    }],
    ['every write and delete of the IndexedDB store is a transaction of strict durability (kept, claimed, sent and deleted), and the browser reports it so', async () => {
      await server.reset();
      const key = `strict-${browser}`;
      await load('strict');
      await js('window.__transactions = []');
      await server.open(Date.now() + 1500); // Retry-After: 2
      const r = await call('send', `${server.url}/orders`, key);
      assert(r.kind === 'try-later' && r.kept === true, `send: ${JSON.stringify(r)}`);
      await until('the re-send', 10_000, async () => (await events()).find((e) => e.type === 'sent'));
      assert((await call('pending')) === 0, 'nothing pending');
      const writes = (await js('return window.__transactions')).filter((t) => t.mode === 'readwrite');
      // The kept write, its claim, its delete.
      assert(writes.length >= 3 && writes.every((t) => t.asked === 'strict' && t.durability === 'strict'), `readwrite transactions: ${JSON.stringify(writes)}`);
    }],
    ['syncOutbox(name, options) (saferetry/sw): at its sync event, every key takes its values and a misspelled key, a wrong type and a value out of range reject the event with a TypeError or RangeError naming it', async () => {
      await h.session.navigate(`${pages.url}/outbox/sync-options.html`, 20_000);
      const got = await until('the sync events', 15_000, () => js('return window.__sync'));
      const want = {
        'opts-good': /^ok$/,
        'opts-none': /^ok$/,
        'opts-ttl': /^RangeError: saferetry: `syncOutbox\.ttl` must be an integer in 1\.\.=2592000000/,
        'opts-ttl-type': /^TypeError: saferetry: `syncOutbox\.ttl` must be/,
        'opts-credentials': /^TypeError: saferetry: `syncOutbox\.credentials` must be a boolean/,
        'opts-policy': /^RangeError: saferetry: `syncOutbox\.policy\.maxAttempts` must be an integer in 1\.\.=100/,
        'opts-policy-key': /^TypeError: saferetry: `maxAttemps` is not an option of `syncOutbox\.policy`/,
        'opts-unknown': /^TypeError: saferetry: `durable` is not an option of `syncOutbox`/,
      };
      for (const [name, re] of Object.entries(want)) assert(re.test(got[name]), `${name}: ${got[name]}`);
    }],
    ['IndexedDB unavailable (an opaque-origin frame): the call still answers, and says the write was not kept', async () => {
      await server.reset();
      const key = `nostore-${browser}`;
      await h.session.navigate(`${pages.url}/outbox/sandboxed.html`, 20_000);
      const ready = await until('the frame', 10_000, () => js('return window.__frame'));
      assert(ready.ready === true, `frame: ${JSON.stringify(ready)}`);
      await server.open(Date.now() + 1500);
      await js("window.__frame = null; document.querySelector('iframe').contentWindow.postMessage(arguments[0], '*')", [{ server: server.url, key }]);
      const r = await until('the answer', 10_000, () => js('return window.__frame'));
      assert(r.kind === 'try-later' && r.kept === false && r.notKept === 'storage', `answer: ${JSON.stringify(r)}`);
      assert(/^SecurityError/.test(r.storeError), `the browser's own refusal: ${r.storeError}`);
      assert(r.events.length === 1 && r.events[0].notKept === 'storage', `events: ${JSON.stringify(r.events)}`);
      assert((await server.counts()).requests[key] === 1, 'sent once');
    }],
    ['write-ahead: a page closed mid-send leaves the write in IndexedDB; reopened, it arrives (from the reopened page, or from the closing one if it outlived the drop), always with its key, and leaves the store', async () => {
      await server.reset();
      await server.open(0);
      await server.hold(true);
      const key = `ahead-${browser}`;
      await load('ahead');
      await call('sendAhead', `${server.url}/orders`, key, AHEAD);
      await until('the send in flight', 10_000, async () => (await server.counts()).requests[key] === 1);
      assert((await call('pending')) === 1, 'in the store while in flight');
      await h.session.navigate(`${pages.url}/outbox/away.html`, 20_000); // the page is gone mid-send
      await server.hold(false);
      await load('ahead');
      // Usually the reopened page sends it once it is due; a closing page
      // still alive when the server dropped its request (WebKit, once, on a
      // loaded machine) retried it with its key itself and deleted the
      // entry: either way the write arrives, keyed, and leaves the store.
      await until('the write accepted and gone from the store', 12_000, async () => (await server.counts()).accepted[key] >= 1 && (await call('pending')) === 0);
      const sent = (await events()).find((e) => e.type === 'sent');
      assert(sent === undefined || sent.key === key, `sent ${JSON.stringify(sent)}`);
      // The closing page may send it again before it dies (seen in Firefox
      // and Chromium: a second request 0.1-0.5 s after the first, answered):
      // the server then sees the key more than twice, every time with the
      // same key; nothing goes out keyless.
      const c = await server.counts();
      assert(c.requests[key] >= 2 && c.accepted[key] >= 1 && c.total === c.requests[key], `every request with the key, accepted: ${JSON.stringify(c)}`);
      assert((await call('pending')) === 0, 'nothing pending');
    }],
    ...(browser === 'chromium' ? [] : [['without Background Sync, a page with saferetry/sw registered keeps the write, and the page reopened sends it', async () => {
      await server.reset();
      const key = `fallback-${browser}`;
      await load('sync');
      const worker = await call('registerWorker');
      assert(worker.active === true && worker.sync === false, `service worker: ${JSON.stringify(worker)}`);
      await server.open(Date.now() + 1500); // Retry-After: 2
      const r = await call('send', `${server.url}/orders`, key);
      assert(r.kind === 'try-later' && r.kept === true, `send: ${JSON.stringify(r)}`);
      await h.session.navigate(`${pages.url}/outbox/away.html`, 20_000);
      await sleep(Math.max(0, r.retryAt - Date.now()) + 300);
      assert((await server.counts()).requests[key] === 1, 'nothing sent while no page was open');
      await load('sync');
      await until('the re-send', 10_000, async () => (await events()).find((e) => e.type === 'sent'));
      const c = await server.counts();
      assert(c.requests[key] === 2 && c.accepted[key] === 1, `counts: ${JSON.stringify(c)}`);
    }]]),
    // The four crash points, each with two tabs, several rounds; the
    // close() of a tab waiting for the lock.
    ...crashCases(browser, () => ({ h, pages, server })),
  ];
  return { setup, teardown, list };
}
