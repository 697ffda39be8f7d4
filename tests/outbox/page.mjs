// The outbox tests' page: `window.__ob` opens an outbox (IndexedDB, Web
// Locks: the browser's defaults) and sends through it; the events it hears
// are kept in `window.__events` for the runner (tests/outbox/browsers.mjs).
// `open(name, ttl, crash)` with `crash = { at, server }` makes this page's
// drain stop for good at one crash point (tests/outbox/browsers-crash.mjs):
// `before-claim`, `after-claim`, `mid-send` (the server has the re-send),
// `after-send` (its answer read, the entry not deleted); `window.__at`
// then names the point, and the runner closes the page there.
import { RetryPolicy, outbox, indexedDBStore } from 'saferetry';

let box;
window.__events = [];
window.__at = null;
const stop = (point) => {
  window.__at = point;
  return new Promise(() => {});
};

/** The default store, stopping around the claim (a put of an entry sent before). */
function crashing(name, at) {
  const store = indexedDBStore(name);
  return {
    ...store,
    async put(entry) {
      if (entry.sends > 1 && at === 'before-claim') await stop(at);
      await store.put(entry);
      if (entry.sends > 1 && at === 'after-claim') await stop(at);
    },
  };
}

/** The host's fetch, stopping around a re-send (after `armed`). */
let armed = false;
function transport(at, server) {
  return async (input, init) => {
    const answer = fetch(input, init);
    if (!armed) return answer;
    if (at === 'mid-send') {
      const key = new Headers(init?.headers ?? input.headers).get('idempotency-key');
      for (let i = 0; i < 500; i++) {
        if ((await (await fetch(`${server}/__counts`)).json()).requests[key] > 1) await stop(at);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const response = await answer;
    if (at === 'after-send') await stop(at);
    return response;
  };
}

window.__ob = {
  async open(name, ttl, crash) {
    // One attempt, with room for a loaded machine: every request the
    // server counts is one send of the outbox, never a retry inside one
    // (a 503's Retry-After still ends it try-later at once).
    const options = { maxAttempts: 1, totalMs: 30_000, attemptMs: 30_000 };
    if (crash) options.fetch = transport(crash.at, crash.server);
    box = await outbox(new RetryPolicy(options), name, { ...(ttl ? { ttl } : {}), ...(crash ? { store: crashing(name, crash.at) } : {}) });
    for (const type of ['kept', 'not-kept', 'sent', 'expired', 'failed', 'retry', 'error']) {
      box.addEventListener(type, (e) => window.__events.push({ type, key: e.detail.entry?.key ?? null, notKept: e.detail.notKept ?? null, error: String(e.detail.error ?? '') }));
    }
    return true;
  },
  /** Opens the outbox at `at` (epoch ms): tabs told the same time contend at once. */
  async openAt(name, at) {
    setTimeout(() => window.__ob.open(name), Math.max(0, at - Date.now()));
    return true;
  },
  async send(url, key) {
    const r = await box.send(url, { method: 'POST', body: JSON.stringify({ order: key }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key } });
    armed = true;
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
