// The outbox tests' page: `window.__ob` opens an outbox (IndexedDB, Web
// Locks: the browser's defaults) and sends through it; the events it hears
// are kept in `window.__events` for the runner (tests/outbox/browsers.mjs).
// `open(name, ttl, crash)` with `crash = { at, server, key }` makes the
// drain of outbox `name` stop for good at one crash point
// (tests/outbox/crash-points.mjs, tests/outbox/browsers-crash.mjs): the
// page tells the server it is there, and the runner closes the page. One
// page may hold several outboxes, each stopped at its own point.
import { RetryPolicy, outbox, indexedDBStore } from 'saferetry';
import { atPoint, crashingFetch, crashingPut, dueWrite } from './crash-points.mjs';

let box;
const boxes = new Map();
window.__events = [];
window.__drained = [];
// Every IndexedDB transaction the page opens: its mode, the durability it
// was asked for, and the one the browser reports (the strict-durability
// case of tests/outbox/browsers.mjs).
window.__transactions = [];
const transaction = IDBDatabase.prototype.transaction;
IDBDatabase.prototype.transaction = function (names, mode, options) {
  const t = transaction.call(this, names, mode, options);
  window.__transactions.push({ mode: t.mode, asked: options?.durability ?? null, durability: t.durability ?? null });
  return t;
};

/** The default store of `name`, stopping around the claim. */
function crashing(name, { at, server, key }) {
  const store = indexedDBStore(name);
  return { ...store, put: crashingPut(store.put, at, atPoint(server, key)) };
}

window.__ob = {
  async open(name, ttl, crash) {
    // One attempt, with room for a loaded machine: every request the
    // server counts is one send of the outbox, never a retry inside one
    // (a 503's Retry-After still ends it try-later at once).
    const options = { maxAttempts: 1, totalMs: 30_000, attemptMs: 30_000 };
    if (crash) options.fetch = crashingFetch(crash.at, atPoint(crash.server, crash.key));
    box = await outbox(new RetryPolicy(options), name, { ...(ttl ? { ttl } : {}), ...(crash ? { store: crashing(name, crash) } : {}) });
    boxes.set(name, box);
    for (const type of ['kept', 'not-kept', 'sent', 'expired', 'failed', 'retry', 'error']) {
      box.addEventListener(type, (e) => window.__events.push({ type, name, key: e.detail.entry?.key ?? null, notKept: e.detail.notKept ?? null, error: String(e.detail.error ?? '') }));
    }
    return true;
  },
  /** Opens the outboxes `names` at `at` (epoch ms): tabs told the same time
   * contend at once. Each one's name joins `window.__drained` once its
   * first drain is over (a flush chains after it). */
  async openAt(names, at) {
    setTimeout(() => {
      for (const name of names) {
        window.__ob.open(name).then(() => boxes.get(name).flush()).then(() => window.__drained.push(name), (e) => window.__events.push({ type: 'error', name, error: String(e) }));
      }
    }, Math.max(0, at - Date.now()));
    return true;
  },
  /** Writes a due write of `key` to `url` to the store of `name`, as a kept write. */
  async seed(name, url, key) {
    const store = indexedDBStore(name);
    await store.put(dueWrite(url, key));
    await store.close();
    return true;
  },
  /** The pending entries of outbox `name`, as this page's outbox of that name sees them. */
  async pendingOf(name) {
    return (await boxes.get(name).pending()).length;
  },
  async send(url, key) {
    const r = await box.send(url, { method: 'POST', body: JSON.stringify({ order: key }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key } });
    return { kind: r.kind, reason: r.reason, kept: r.kept, notKept: r.notKept ?? null, retryAt: r.retryAt ?? null };
  },
  /** Sends with `durable` and does not wait (the runner closes the page mid-send); its own
   * 3 s bound, so that the entry written ahead is due 5 s later, not the page policy's 32. */
  sendAhead(url, key, durable) {
    window.__sending = box.send(url, { method: 'POST', body: JSON.stringify({ order: key }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key, totalMs: 3000 }, durable });
    return Promise.resolve(true);
  },
  /** Registers tests/outbox/sw.mjs (saferetry/sw) for this folder; says whether the browser has Background Sync. */
  async registerWorker() {
    const registration = await navigator.serviceWorker.register('/outbox/sw.mjs', { type: 'module', scope: '/outbox/' });
    await navigator.serviceWorker.ready;
    return { active: registration.active !== null, sync: 'sync' in registration };
  },
  async pending() {
    return (await box.pending()).length;
  },
  /** Takes the outbox's Web Lock, as a tab draining it does, and keeps it. */
  async hold(name) {
    await new Promise((granted) => navigator.locks.request(`saferetry-outbox:${name}`, () => {
      granted();
      return new Promise(() => {});
    }));
    return true;
  },
  /** Closes the outbox; resolves with the ms it took, or `null` past `boundMs`. */
  async close(boundMs) {
    const t0 = Date.now();
    const closed = await Promise.race([box.close().then(() => true), new Promise((r) => setTimeout(() => r(false), boundMs))]);
    return closed ? Date.now() - t0 : null;
  },
};
window.__ready = true;
