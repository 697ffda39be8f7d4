// The outbox tests' page: `window.__ob` opens an outbox (IndexedDB, Web
// Locks: the browser's defaults) and sends through it; the events it hears
// are kept in `window.__events` for the runner (tests/outbox/browsers.mjs).
import { RetryPolicy, outbox } from 'saferetry';

let box;
window.__events = [];
window.__ob = {
  async open(name, ttl) {
    box = await outbox(new RetryPolicy({ totalMs: 800 }), name, ttl ? { ttl } : {});
    for (const type of ['kept', 'not-kept', 'sent', 'expired', 'failed', 'retry', 'error']) {
      box.addEventListener(type, (e) => window.__events.push({ type, key: e.detail.entry?.key ?? null, notKept: e.detail.notKept ?? null, error: String(e.detail.error ?? '') }));
    }
    return true;
  },
  async send(url, key) {
    const r = await box.send(url, { method: 'POST', body: JSON.stringify({ order: key }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key } });
    return { kind: r.kind, reason: r.reason, kept: r.kept, notKept: r.notKept ?? null, retryAt: r.retryAt ?? null };
  },
  /** Sends with `durable` and does not wait (the runner closes the page mid-send). */
  sendAhead(url, key, durable) {
    window.__sending = box.send(url, { method: 'POST', body: JSON.stringify({ order: key }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key }, durable });
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
};
window.__ready = true;
