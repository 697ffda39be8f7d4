// The outbox tier's Worker (tests/outbox/workerd.mjs): writes go through
// an `OutboxObject` (saferetry/cloudflare), whose storage keeps what ends
// try-later and whose alarm sends it when due. `?name=` picks the object
// (default "orders").
//
//   POST /send     { url, key, durable? }   → the object's answer to send()
//   GET  /pending                 → the object's pending()
//   POST /flush                   → the object drains now, as its alarm does
//   GET  /alarm                   → the object's alarm time (null: none set, or it ran)
//   POST /options  { url }       → the option table (tests/e2e/options.mjs)
//        for durableBudget and OutboxObject.send: [{ name, ok, error }]
//   POST /seed     { url, key, point, server }   (workerd run with CRASH only)
//        → a due write in the object's storage, as a kept write is, and its
//          alarm now; that alarm's drain stops for good at `point`
//          (tests/outbox/crash-points.mjs), tells `server` so and hangs,
//          and the runner kills workerd there. Without CRASH (a restarted
//          workerd) nothing stops anywhere.
import * as saferetry from 'saferetry/cloudflare';
import { OutboxObject, durableStore } from 'saferetry/cloudflare';
import { atPoint, crashingFetch, crashingPut, dueWrite } from './crash-points.mjs';
import { optionCases } from './options.mjs';

/** A property of a native object, its methods bound to it. */
const own = (t, p) => (typeof t[p] === 'function' ? t[p].bind(t) : t[p]);

/** `ctx` whose storage's `put` stops where `crash` (filled in by `seed`) says.
 * After the claim, the stop's message to the server leaves only once the
 * claim is on disk (the object's output gate holds it until then), so
 * workerd is killed with the claim written. */
function crashing(ctx, crash) {
  const put = (k, v) => ctx.storage.put(k, v);
  const stopping = (k, v) => (crash.at ? crashingPut(put, crash.at, atPoint(crash.server, crash.key))(k, v) : put(k, v));
  const storage = new Proxy(ctx.storage, { get: (t, p) => (p === 'put' ? stopping : own(t, p)) });
  return new Proxy(ctx, { get: (t, p) => (p === 'storage' ? storage : own(t, p)) });
}

export class Outbox extends OutboxObject {
  #crash;

  constructor(ctx, env) {
    super(ctx, env);
    this.#crash = env.CRASH ? {} : null;
    // (The base class takes only the real `ctx`: the hooked one is put over it.)
    if (this.#crash) Object.defineProperty(this, 'ctx', { value: crashing(ctx, this.#crash) });
  }

  policyOptions() {
    // Stopped at a point, one attempt with room to wait there: a request
    // the server counts is one send of the drain, never a retry inside one.
    if (this.#crash?.at) return { maxAttempts: 1, totalMs: 30_000, attemptMs: 30_000, fetch: crashingFetch(this.#crash.at, atPoint(this.#crash.server, this.#crash.key)) };
    return { totalMs: 800 };
  }

  async flush() {
    await this.alarm();
    return true;
  }

  async alarmAt() {
    return this.ctx.storage.getAlarm();
  }

  async seed({ url, key, point, server }) {
    if (!this.#crash) throw new Error('seed: workerd runs without CRASH');
    await durableStore(this.ctx.storage).put(dueWrite(url, key));
    Object.assign(this.#crash, { at: point, server, key });
    await this.ctx.storage.setAlarm(Date.now());
    return true;
  }
}

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const box = env.OUTBOX.get(env.OUTBOX.idFromName(url.searchParams.get('name') ?? 'orders'));
    try {
      if (url.pathname === '/send') {
        const { url: target, key, durable } = await request.json();
        return json(await box.send({ url: target, method: 'POST', headers: [['content-type', 'application/json']], body: JSON.stringify({ order: key }), idempotencyKey: key, durable }));
      }
      if (url.pathname === '/pending') return json(await box.pending());
      if (url.pathname === '/flush') return json(await box.flush());
      if (url.pathname === '/alarm') return json(await box.alarmAt());
      if (url.pathname === '/seed') return json(await box.seed(await request.json()));
      if (url.pathname === '/options') {
        const { url: target } = await request.json();
        const cloudflare = { durableBudget: saferetry.durableBudget, namespace: env.OUTBOX, send: (r) => box.send(r) };
        const works = async () => {
          const r = await box.send({ url: target, method: 'PUT', body: 'x' });
          if (r.kind !== 'succeeded') throw new Error(`a send afterwards: ${JSON.stringify(r)}`);
        };
        const results = [];
        for (const c of optionCases({ saferetry, url: () => target, works, modules: { cloudflare, only: 'modules' } })) {
          try {
            await c.run();
            results.push({ name: c.name, ok: true });
          } catch (error) {
            results.push({ name: c.name, ok: false, error: String(error?.message ?? error) });
          }
        }
        return json(results);
      }
      return json({ error: 'not found' }, 404);
    } catch (error) {
      return json({ error: String(error?.stack ?? error) }, 500);
    }
  },
};
