// How each SDK calls the fetch it is given: `this`, the input's type, the init's
// keys, the body's type, signal, duplex, redirect. A recording function that
// calls the real global fetch stands in for the custom fetch (no saferetry).
//
//   node tests/sdks/observe.mjs
import { startFake } from './fake-server.mjs';

const SDKS = ['openai', 'anthropic', 'octokit', 'stripe', 'ky', 'ofetch', 'axios', 'supabase'];
const kind = (v) => (v == null ? String(v) : typeof v === 'object' ? v.constructor?.name ?? 'Object' : typeof v);

const fake = await startFake();
try {
  for (const sdk of SDKS) {
    const adapter = await import(`./adapters/${sdk}.mjs`);
    const seen = [];
    function recording(input, init) {
      const isRequest = input instanceof Request;
      seen.push({
        this: this === undefined ? 'undefined' : this === globalThis ? 'globalThis' : kind(this),
        input: kind(input),
        method: init?.method ?? (isRequest ? input.method : 'GET'),
        init: init ? Object.keys(init).sort().join(',') : '—',
        headers: kind(init?.headers ?? (isRequest ? input.headers : undefined)),
        body: kind(init?.body ?? (isRequest ? input.body : undefined)),
        signal: init?.signal ? 'init' : isRequest && input.signal ? 'Request' : '—',
        duplex: init?.duplex ?? (isRequest ? input.duplex : undefined) ?? '—',
        redirect: init?.redirect ?? '—',
      });
      return fetch(input, init);
    }
    for (const [kase, op] of [['json', adapter.call], ['redirect', adapter.redirectedPost]]) {
      const token = `json.observe-${sdk}-${kase}`;
      const client = adapter.client(recording, { base: `${fake.origin}/run/${token}`, origin: fake.origin, port: fake.port, token });
      await op(client).catch((err) => seen.push({ error: String(err) }));
    }
    const unique = [...new Set(seen.map((s) => JSON.stringify(s)))];
    for (const line of unique) console.log(`${sdk}: ${line}`);
  }
} finally {
  await fake.close();
}
