// The outbox tier's Worker (tests/outbox/workerd.mjs): writes go through
// an `OutboxObject` (saferetry/cloudflare), whose storage keeps what ends
// try-later and whose alarm sends it when due.
//
//   POST /send     { url, key, durable? }   → the object's answer to send()
//   GET  /pending                 → the object's pending()
//   POST /flush                   → the object drains now, as its alarm does
import { OutboxObject } from 'saferetry/cloudflare';

export class Outbox extends OutboxObject {
  policyOptions() {
    return { totalMs: 800 };
  }

  async flush() {
    await this.alarm();
    return true;
  }
}

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const box = env.OUTBOX.get(env.OUTBOX.idFromName('orders'));
    try {
      if (url.pathname === '/send') {
        const { url: target, key, durable } = await request.json();
        return json(await box.send({ url: target, method: 'POST', headers: [['content-type', 'application/json']], body: JSON.stringify({ order: key }), idempotencyKey: key, durable }));
      }
      if (url.pathname === '/pending') return json(await box.pending());
      if (url.pathname === '/flush') return json(await box.flush());
      return json({ error: 'not found' }, 404);
    } catch (error) {
      return json({ error: String(error?.stack ?? error) }, 500);
    }
  },
};
