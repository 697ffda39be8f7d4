// Every options object a caller hands the package, and every key of each
// (docs/options.md and the option tables): values in range are taken; a
// misspelled key, a value of the wrong type and one out of range are each
// refused — a TypeError or RangeError whose message names the option by
// its path (`retryOn.statuses`, `shared.fleetSize`, `retry.idempotencyKey`)
// and, for a range, the range — and the package still works afterwards.
// One case per options object, run by tests/e2e/suite.mjs in every runtime
// for the objects of `saferetry`; `saferetry/redis` and `saferetry/otel`
// where the runner hands them over (Node: run-node.mjs).
//
// A row: [key, values taken, a value of the wrong type, values out of
// range, what the message says it accepts] — `key` is the option's path
// below its object (`retryOn.statuses`); a row may instead be an object
// { key, path, make, good, type, range, accepts }: `path` (below the
// object) is the one the error names when it is not `key`'s (a list's
// item), `make(value)` builds the options (a key a sibling must come with).
import * as assert from './assert.mjs';

const MS = /1\.\.=2147483647 \(milliseconds\)/;
const MS0 = /0\.\.=2147483647 \(milliseconds\)/;
const COUNT = /0\.\.=1000000/;

/** `{ a: { b: value } }` for "a.b". */
function put(key, value) {
  const out = {};
  const keys = key.split('.');
  let at = out;
  for (const k of keys.slice(0, -1)) at = at[k] ??= {};
  at[keys.at(-1)] = value;
  return out;
}

/** Numeric and other keys a policy and a call share. */
const SHARED_KEYS = [
  ['maxAttempts', [1, 3, 100], 'x', [0, 101, 2.5, Number.NaN], /1\.\.=100/],
  ['totalMs', [1, 2147483647], '1', [0, 2147483648], MS],
  ['attemptMs', [1, 2147483647], true, [0, -1], MS],
  ['baseMs', [0, 50], '50', [-1, 2147483648], MS0],
  ['capMs', [0, 200], null, [-1, 0.5], MS0],
  ['throttleBaseMs', [0, 1000], '1000', [2147483648], MS0],
  ['maxBodyBytes', [0, 2 ** 32], '1', [-1, 2 ** 32 + 1], /0\.\.=4294967296 \(bytes\)/],
  ['responseBody', ['auto', 'buffer', 'stream'], 'streamed', [], /"auto", "buffer", "stream"/],
  ['retryOn', [{}], 1, [], /statuses, timeouts, networkErrors/],
  ['retryOn.statuses', [[], [100, 599]], '503', [[99], [600], new Array(1001).fill(503)], /0\.\.=1000 items|100\.\.=599/],
  { key: 'retryOn.statuses', path: 'retryOn.statuses[]', good: [[503]], type: [[true], ['503']], range: [[503.5]], accepts: /100\.\.=599/ },
  ['retryOn.timeouts', [true, false], 1, [], /a boolean/],
  ['retryOn.networkErrors', [true, false], 'no', [], /a boolean/],
  ['retryAfterSpread', [true, false], 0, [], /a boolean/],
  ['random', [() => 0.5], 42, [], /a function/],
  ['onRetry', [() => {}], 'log', [], /a function/],
  ['fetch', [(...args) => fetch(...args)], {}, [], /a function/],
];

const QUOTA_KEYS = ['capacity', 'retryCost', 'timeoutCost', 'successRefund']
  .map((k) => [`quota.${k}`, [0, 1000000], '5', [-1, 1000001, 0.5], COUNT]);

/** The objects of `saferetry` itself: every runtime. */
function coreObjects({ saferetry, url, sent }) {
  const { RetryPolicy, outbox, memoryStore, tabBudget } = saferetry;
  const policy = new RetryPolicy({ maxAttempts: 1, quota: false });
  /** Starts a call and cancels it at once: taken, or thrown at the call. */
  const cancelled = (op) => {
    op.cancel();
    return op.result;
  };
  const exchange = () => ({ unavailable: 'no authority in this test' });
  let box;
  return [
    {
      object: 'new RetryPolicy(options)',
      path: '',
      call: (o) => new RetryPolicy(o).release(),
      misspelled: [{ maxAttemps: 3 }, 'maxAttemps', 'options'],
      keys: [
        ...SHARED_KEYS,
        ['quota', [true, false, {}], 1, [], /a boolean or an object \{ capacity/],
        ...QUOTA_KEYS,
        ['throttle', [true, false, {}], 1, [], /a boolean or an object \{ k, windowMs \}/],
        ['throttle.k', [1, 1.5, 100], '2', [0.5, 100.5, Number.NaN, Infinity], /a number in 1\.\.=100/],
        ['throttle.windowMs', [10, 1500, 600000], '1500', [9, 600001, 1500.5], /10\.\.=600000 \(milliseconds\)/],
        ['concurrency', [1, 10000], '2', [0, 10001], /1\.\.=10000/],
        ['rate', [{ requests: 1 }], 5, [], /requests, perMs, burst/],
        ['rate.requests', [1, 1000000], '1', [0, 1000001], /1\.\.=1000000/],
        { key: 'rate.perMs', make: (v) => ({ rate: { requests: 1, perMs: v } }), good: [1, 60000], type: ['1'], range: [0], accepts: MS },
        { key: 'rate.burst', make: (v) => ({ rate: { requests: 1, burst: v } }), good: [1, 1000000], type: ['1'], range: [0], accepts: /1\.\.=1000000/ },
        ['idempotencyKey', [true, false], 'key-1', [], /a boolean/],
        ['notBefore', [], 1, [], /set per call, not on the policy/],
        ['shared', [{ exchange }], 1, [], /exchange, attach, fleetSize, scope/],
        ['shared.exchange', [], 'grant', [], /a function/],
        { key: 'shared.fleetSize', make: (v) => ({ shared: { exchange, fleetSize: v } }), good: [1, 10000], type: ['4'], range: [0, 10001], accepts: /1\.\.=10000/ },
        { key: 'shared.scope', make: (v) => ({ shared: { exchange, scope: v } }), good: ['fleet'], type: [1], range: [], accepts: /a string/ },
        { key: 'shared.attach', make: (v) => ({ shared: { exchange, attach: v } }), good: [() => {}], type: [1], range: [], accepts: /a function/ },
      ],
      also: [[{ retryOn: { status: [503] } }, 'status', 'retryOn'], [{ rate: { requests: 1, brust: 2 } }, 'brust', 'rate']],
    },
    {
      object: "a call's init.retry",
      path: 'retry',
      call: (retry) => cancelled(policy.run(url(), { retry })),
      misspelled: [{ maxAtempts: 2 }, 'maxAtempts', 'retry'],
      keys: [
        ...SHARED_KEYS,
        ['quota', [false], 1, [], /false \(a call may only opt out/],
        { key: 'quota', good: [], type: [true, { capacity: 1 }], range: [], accepts: /false/ },
        ['throttle', [false], 1, [], /false \(a call may only opt out/],
        { key: 'throttle', good: [], type: [true, { k: 2 }], range: [], accepts: /false/ },
        ['concurrency', [], 1, [], /set on the policy/],
        ['rate', [], { requests: 1 }, [], /set on the policy/],
        ['shared', [], { exchange }, [], /set on the policy/],
        ['idempotencyKey', ['key-1', 'k'.repeat(255), true, false], 1, ['', 'k'.repeat(256), 'ключ-1', 'has space'], /1\.\.=255 visible ASCII/],
        ['notBefore', [0, Date.now() + 60_000, 1.5], '1', [-1, 2 ** 53], /0\.\.=9007199254740991 \(epoch milliseconds\)/],
      ],
    },
    {
      object: 'policy.poll(input, init, spec)',
      path: 'poll',
      call: (spec) => cancelled(policy.poll(url(), { method: 'POST' }, { status: url(), ...spec })),
      misspelled: [{ budgetMS: 10 }, 'budgetMS', 'poll'],
      keys: [
        ['phases', [[{ everyMs: 100 }], [{ everyMs: 1, forMs: 5 }, { everyMs: 2 }]], 'fast', [[], new Array(101).fill({ everyMs: 1 })], /1\.\.=100 items/],
        { key: 'phases', path: 'phases[].everyMs', good: [], type: [[{}], [{ everyMs: '1' }]], range: [[{ everyMs: 0 }]], accepts: MS },
        { key: 'phases', path: 'phases[].forMs', good: [], type: [[{ everyMs: 1, forMs: '5' }]], range: [[{ everyMs: 1, forMs: 0 }]], accepts: MS },
        { key: 'phases', path: 'phases[]', good: [], type: [['x']], range: [], accepts: /everyMs, forMs/ },
        ['budgetMs', [1, 2147483647], '1', [0, 2147483648], MS],
        ['status', [], null, [], /given/],
        ['verdict', [() => 'done', async () => 'pending'], 'done', [], /a function/],
      ],
      also: [[{ phases: [{ everyMs: 1, every: 5 }] }, 'every', 'poll.phases[]']],
    },
    {
      object: 'operation.retryNow(options)',
      path: 'retryNow',
      call: (o) => {
        const op = policy.run(url());
        const again = op.retryNow(o);
        op.cancel();
        return again;
      },
      misspelled: [{ forse: true }, 'forse', 'retryNow'],
      keys: [['force', [true, false], 'yes', [], /a boolean/]],
    },
    {
      object: 'outbox(policy, name, options)',
      path: 'outbox',
      call: async (o) => (await outbox(policy, 'options-table', { store: memoryStore(), ...o })).close(),
      misspelled: [{ tll: 1 }, 'tll', 'outbox'],
      keys: [
        ['store', [memoryStore()], 'memory', [], /list, put, delete/],
        { key: 'store', path: 'store.put', good: [], type: [{ list() {}, delete() {} }], range: [], accepts: /a function/ },
        ['ttl', [1, 2592000000], '1d', [0, 2592000001, 1.5], /1\.\.=2592000000 \(milliseconds\)/],
        ['credentials', [true, false], 1, [], /a boolean/],
        ['durable', ['before-send', 'after-try-later'], 'always', [], /"after-try-later", "before-send"/],
      ],
    },
    {
      object: "an outbox's send(input, init)",
      path: 'send(init)',
      before: async () => {
        box = await outbox(policy, 'options-send', { store: memoryStore() });
      },
      after: () => box.close(),
      call: (init) => box.send(url(), { method: 'PUT', body: 'x', ...init }).then((r) => sent(r)),
      keys: [['durable', ['before-send', 'after-try-later'], 'now', [], /"after-try-later", "before-send"/]],
    },
    {
      object: 'tabBudget(name, options)',
      path: 'tabBudget',
      call: (o) => tabBudget('options-table', o).close(),
      misspelled: [{ heartbeat: 10 }, 'heartbeat', 'tabBudget'],
      keys: [
        ['heartbeatMs', [1, 600000], '1s', [0, 600001, 1.5], /1\.\.=600000 \(milliseconds\)/],
        ['staleMs', [1, 600000], null, [0, 600001], /1\.\.=600000 \(milliseconds\)/],
        ['fleetSize', [1, 10000], '4', [0, 10001], /1\.\.=10000/],
      ],
    },
  ];
}

/** The objects of `saferetry/redis`, `saferetry/otel` and
 * `saferetry/cloudflare` (`durableBudget` over a namespace binding, and an
 * `OutboxObject`'s `send` through its stub), when given. */
function moduleObjects({ saferetry, url, redis, otel, otelApi, cloudflare }) {
  const out = [];
  if (cloudflare) {
    out.push({
      object: 'durableBudget(namespace, name, options)',
      path: 'durableBudget',
      call: (o) => cloudflare.durableBudget(cloudflare.namespace, 'options-table', o),
      misspelled: [{ fleetsize: 4 }, 'fleetsize', 'durableBudget'],
      keys: [['fleetSize', [1, 10000], '4', [0, 10001], /1\.\.=10000/]],
    });
    out.push({
      object: 'OutboxObject.send(request)',
      path: 'OutboxObject.send',
      call: (o) => cloudflare.send({ url: url(), ...o }),
      misspelled: [{ idempotencykey: 'k' }, 'idempotencykey', 'OutboxObject.send'],
      keys: [
        ['url', [url()], 1, [''], /a non-empty string/],
        ['method', ['PUT', 'GET'], 1, [''], /a non-empty string/],
        // Anything `RequestInit` takes: the Request refuses what it refuses.
        { key: 'headers', good: [[['x-test', '1']], { 'x-test': '1' }], type: [], range: [], accepts: /./ },
        { key: 'body', good: ['x', null], type: [], range: [], accepts: /./ },
        ['idempotencyKey', ['key-1', true], 1, ['', 'k'.repeat(256), 'ключ-1'], /1\.\.=255 visible ASCII/],
        ['durable', ['before-send', 'after-try-later'], 'now', [], /"after-try-later", "before-send"/],
      ],
    });
  }
  if (redis) {
    const client = { sendCommand: async () => null };
    out.push({
      object: 'redisBudget(client, name, options)',
      path: 'redisBudget',
      call: (o) => redis.redisBudget(client, 'options-table', o),
      misspelled: [{ fleetsize: 4 }, 'fleetsize', 'redisBudget'],
      keys: [
        ['fleetSize', [1, 10000], '4', [0, 10001], /1\.\.=10000/],
        ['key', ['saferetry:budget:x'], 1, [''], /a non-empty string/],
        ['commandMs', [1, 60000], '250', [0, 60001], /1\.\.=60000 \(milliseconds\)/],
      ],
    });
  }
  if (otel && otelApi) {
    out.push({
      object: 'instrument(policy, options)',
      path: 'instrument',
      call: (o) => otel.instrument(new saferetry.RetryPolicy(), o).disable(),
      misspelled: [{ attemptspans: true }, 'attemptspans', 'instrument'],
      keys: [
        ['tracerProvider', [otelApi.trace], 1, [], /getTracer/],
        { key: 'tracerProvider', path: 'tracerProvider.getTracer', good: [], type: [{}], range: [], accepts: /a function/ },
        ['meterProvider', [otelApi.metrics], 'x', [], /getMeter/],
        ['attemptSpans', [true, false, 'auto'], 'always', [], /a boolean or "auto"/],
        ['name', ['api'], 1, [], /a string/],
      ],
    });
  }
  return out;
}

/** `[key, good, type, range, accepts]` or `{ … }` as one shape. */
function row(r, prefix) {
  const [key, good, type, range, accepts] = Array.isArray(r) ? r : [r.key, r.good, r.type, r.range, r.accepts];
  const make = r.make ?? ((v) => put(key, v));
  const below = r.path ?? key;
  const path = prefix ? `${prefix}.${below}` : below;
  return { key, good, type: Array.isArray(r) ? [type] : type, range, accepts, make, path };
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function outcome(call, options) {
  try {
    await call(options);
    return null;
  } catch (error) {
    return error;
  }
}

/** The table's cases (`{ name, run, skip? }`, tests/e2e/suite.mjs's shape):
 * `modules` may add `redis` (saferetry/redis), `otel` (saferetry/otel) and
 * `otelApi` (@opentelemetry/api), `cloudflare` ({ durableBudget,
 * namespace, send }: tests/outbox/worker.mjs), and `only: "modules"` (not
 * the objects of `saferetry` itself). `url()` answers 200; `works()`
 * checks that the package still works. */
export function optionCases({ saferetry, url, works, modules = {} }) {
  const sent = (r) => assert.ok(['succeeded', 'try-later', 'failed'].includes(r.kind), `the send ended: ${r.kind}`);
  const core = modules.only === 'modules' ? [] : coreObjects({ saferetry, url, sent });
  const objects = [...core, ...moduleObjects({ saferetry, url, ...modules })];
  const cases = objects.map((o) => ({
    name: `${o.object}: every key takes its values in range and refuses a misspelled key, a wrong type and a value out of range with a TypeError or RangeError naming it and what it accepts; the package works afterwards`,
    run: async () => {
      await o.before?.();
      try {
        for (const r of o.keys.map((k) => row(k, o.path))) {
          const named = new RegExp(`\`${escape(r.path)}(\\[\\])?\``);
          for (const v of r.good) {
            const error = await outcome(o.call, r.make(v));
            assert.ok(error === null, `${o.object}: ${r.path} = ${assert.show(v)} is taken, got ${error?.name}: ${error?.message}`);
          }
          for (const [values, Type] of [[r.type, TypeError], [r.range, RangeError]]) {
            for (const v of values) {
              const error = await outcome(o.call, r.make(v));
              const label = `${o.object}: ${r.path} = ${assert.show(v)}`;
              assert.ok(error?.constructor === Type, `${label} is refused with a ${Type.name}, got ${error?.name}: ${error?.message}`);
              assert.match(error.message, named, `${label}: the message names the option`);
              assert.match(error.message, r.accepts, `${label}: the message says what it accepts`);
            }
          }
        }
        for (const [options, key, object] of [o.misspelled, ...(o.also ?? [])].filter(Boolean)) {
          const error = await outcome(o.call, options);
          const label = `${o.object}: ${assert.show(options)}`;
          assert.ok(error?.constructor === TypeError, `${label} is refused with a TypeError, got ${error?.name}: ${error?.message}`);
          assert.match(error.message, new RegExp(`\`${escape(key)}\` is not an option of \`${escape(object)}\``), label);
        }
      } finally {
        await o.after?.();
      }
      await works();
    },
  }));
  if (modules.only !== 'modules') cases.push({
    name: 'Refused options, 1500 rounds of each kind (an unknown key, a wrong type, a value out of range, a nested one, a Proxy whose key listing throws, a throwing getter) on a policy, per call and through an entry without Rust state, never break the module',
    run: async () => {
      const { RetryPolicy, tabBudget } = saferetry;
      const boom = new Error('ownKeys');
      const trap = new Proxy({}, { ownKeys() { throw boom; } });
      const getter = { get maxAttempts() { throw new Error('getter'); } };
      const policy = new RetryPolicy();
      const counts = { unknown: 0, type: 0, range: 0, nested: 0, trap: 0, getter: 0, call: 0, entry: 0 };
      const refused = (key, f, Type) => {
        try {
          f();
        } catch (e) {
          if (e instanceof Type || e === boom) counts[key]++;
        }
      };
      for (let i = 0; i < 1500; i++) {
        refused('unknown', () => new RetryPolicy({ maxAttemps: 1 }), TypeError);
        refused('type', () => new RetryPolicy({ totalMs: '1' }), TypeError);
        refused('range', () => new RetryPolicy({ capMs: -1 }), RangeError);
        refused('nested', () => new RetryPolicy({ shared: { exchange() {}, fleetSize: 0 } }), RangeError);
        refused('trap', () => new RetryPolicy({ retryOn: trap }), Error);
        counts.getter += new RetryPolicy(getter) ? 1 : 0; // a throwing getter reads as absent
        refused('call', () => policy.run(url(), { retry: { idempotencyKey: 'ключ' } }), RangeError);
        refused('entry', () => tabBudget('x', { staleMs: 0 }), RangeError);
      }
      assert.equal(counts, { unknown: 1500, type: 1500, range: 1500, nested: 1500, trap: 1500, getter: 1500, call: 1500, entry: 1500 }, 'each refused as it should be');
      await works();
    },
  });
  const missing = [['redis', 'redisBudget (saferetry/redis)'], ['otel', 'instrument (saferetry/otel and @opentelemetry/api)'],
    ['cloudflare', 'durableBudget and OutboxObject.send (saferetry/cloudflare)']]
    .filter(([k]) => !modules[k] && modules.only !== 'modules')
    .map(([, what]) => ({ name: `${what}: every key takes its values and refuses bad ones by name`, run: () => {}, skip: 'the runner did not hand over that module (Node: redis, otel; the outbox tier\'s workerd: cloudflare)' }));
  return [...cases, ...missing];
}
