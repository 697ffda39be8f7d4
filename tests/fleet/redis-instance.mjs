// One instance of the fleet-redis tier (tests/fleet/redis.mjs): a service
// process (run by Node, Deno or Bun) whose policy shares a budget through
// `saferetry/redis`. Takes its spec as JSON in argv[2]:
//   { redisUrl, client: "node-redis" | "ioredis", mode: "shared" | "local",
//     name, url, n, durationMs, concurrency, options, pauseMs, holdMs, skewMs,
//     stopFile, readStats }
// (`stopFile`: the loops also end once that file exists; the tier writes it;
// `readStats`: beside the operations, a metrics reader reads `stats()` 200
// times between turns of the event loop, so that V8 optimizes it: the
// crash tier's load, tests/fleet/crash.mjs)
// runs operations through one policy, samples `stats().shared.mode` every
// 50 ms (printing "leased" the first time it is), and prints one JSON line: counts, the modes seen, stats(),
// when the policy called `fetch` (`calls`) and the slot runs it was granted
// (`runs`: [first, last, count]), in epoch ms of the real clock. With
// `holdMs`, it prints "holding <stats>" once it holds tokens and then waits
// (to be killed). Glue only: the policy decides.
import { existsSync } from 'node:fs';
import { RetryPolicy, reportOf } from '../../js/src/node.js';
import { redisBudget } from '../../js/src/redis.js';
import { operate, sleep } from './operate.mjs';

const spec = JSON.parse(process.argv[2]);
const { mode, name, url, n = 1, durationMs = 60_000, concurrency = 1, options = {}, pauseMs = 0, holdMs = 0, skewMs = 0, stopFile, readStats = false } = spec;
if (skewMs) {
  // A clock skewMs ahead of the others' (and of Redis's).
  const now = Date.now.bind(Date);
  Date.now = () => now() + skewMs;
}

async function connect() {
  if (spec.client === 'ioredis') {
    const { default: Redis } = await import('ioredis');
    // A command waits (queued) while Redis is away; the budget's commandMs bounds it.
    const client = new Redis(spec.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    client.on('error', () => {});
    await client.connect();
    return { client, close: () => client.disconnect() };
  }
  const { createClient } = await import('redis');
  const client = createClient({ url: spec.redisUrl, socket: { reconnectStrategy: () => 100, connectTimeout: 1000 } });
  client.on('error', () => {});
  await client.connect();
  return { client, close: () => client.destroy() };
}

const start = Date.now();
const redis = mode === 'local' ? null : await connect();
const shared = redis && redisBudget(redis.client, name, { fleetSize: spec.fleetSize ?? 6 });
const out = { ops: 0, reasons: {}, budgets: {}, statuses: {}, other: [], maxOpMs: 0, modes: [], exchanges: [], calls: [], runs: [] };
// When the policy started each request, as it did (the server sees them a
// little later, and in a bunch when it stalls itself).
const hostFetch = globalThis.fetch;
globalThis.fetch = (...args) => {
  out.calls.push(Date.now() - skewMs);
  return hostFetch(...args);
};
if (shared) {
  // Each exchange's start (ms into the run), how long it took, and how it ended: for the tier's log.
  const exchange = shared.exchange;
  shared.exchange = (request) => {
    const at = Date.now() - start;
    const answer = exchange(request);
    answer.then((g) => {
      out.exchanges.push([at, Date.now() - start - at, g.unavailable ? 'unavailable' : g.tokens]);
      if (g.slots > 0) out.runs.push([g.firstSlotMs - skewMs, g.lastSlotMs - skewMs, g.slots]);
    }, () => out.exchanges.push([at, Date.now() - start - at, 'failed']));
    return answer;
  };
}
const policy = new RetryPolicy(shared ? { ...options, shared } : options);
const sample = setInterval(() => {
  const m = policy.stats().shared?.mode;
  if (m && out.modes.at(-1) !== m) {
    // The tier waits for every instance's first "leased" before it breaks Redis.
    if (m === 'leased' && !out.modes.includes(m)) console.log('leased');
    out.modes.push(m);
  }
}, 50);
// Bounded by n operations, durationMs and the stop file.
const stop = () => Boolean(stopFile && existsSync(stopFile));
let operating = true;
const read = () => {
  const s = policy.stats();
  return s.operations + s.queued + s.inFlight + (s.quotaLevel ?? 0) + (s.shared?.mode === 'leased' ? 1 : 0) + (s.shared?.tokensHeld ?? 0);
};
const reader = async () => {
  out.reads = 0;
  while (operating) { // ends with the operations
    for (let i = 0; i < 200; i++) out.reads += read() >= 0 ? 1 : 0;
    await new Promise((resolve) => setImmediate(resolve));
  }
};
const reading = readStats && reader();
await operate(policy, reportOf, out, { url, n, durationMs, concurrency, pauseMs, start, stop });
operating = false;
await reading;
out.elapsedMs = Date.now() - start;
if (holdMs) {
  // Wait (bounded) until the policy holds a grant, say so, and stay alive to be killed.
  const until = Date.now() + holdMs;
  while (Date.now() < until && !(policy.stats().shared?.tokensHeld > 0)) await sleep(20);
  console.log(`holding ${JSON.stringify(policy.stats().shared)}`);
  await sleep(Math.max(0, until - Date.now()));
}
clearInterval(sample);
out.stats = policy.stats();
console.log(JSON.stringify(out));
redis?.close();
