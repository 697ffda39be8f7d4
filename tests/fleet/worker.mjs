// The test Worker of the fleet-workerd tier (tests/fleet/workerd.mjs). The same
// bundle (built by Wrangler from `saferetry/cloudflare`) runs as four Worker
// services, each its own isolate with its own wasm; service w0 owns the
// Durable Object namespaces, the others bind to them.
//
//   POST /run        { mode, name, url, n, durationMs, concurrency, options, warmMs, pauseMs }
//                    runs operations through one fresh policy → counts and stats()
//   GET  /authority?name=   the RetryBudget's stats() (its level included)
//   POST /steady     { name, fleetSize, options, url, t0, durationMs, everyMs, totalMs }
//                    the throttle tier's steady load (steady.mjs) through one
//                    policy on durableBudget(env.BUDGET, name) → { ops }
//
// mode: "local" (no shared budget), "shared" (durableBudget(env.BUDGET, name)),
// "throwing" (a namespace getter that throws), "hanging" (a Durable Object
// whose grant never answers in time). Glue only: the policy decides.
import { DurableObject, env as moduleEnv } from 'cloudflare:workers';
import { RetryBudget, RetryPolicy, durableBudget, reportOf } from 'saferetry/cloudflare';
import { bump, operate, sleep } from './operate.mjs';
import { policyOp, steadyLoad } from './steady.mjs';

export { RetryBudget };

/** An authority that never answers in time: its grant waits 20 s, then throws. */
export class HangingBudget extends DurableObject {
  async grant() {
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    throw new Error('HangingBudget: no answer');
  }
}

/** The real object, 300 ms away (a Durable Object in another location):
 * a request shorter than that ends before its exchange answers. */
export class SlowBudget extends RetryBudget {
  async grant(request) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return super.grant(request);
  }
}

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function sharedFor(mode, name, env) {
  switch (mode) {
    case 'local': return undefined;
    case 'shared': return durableBudget(env.BUDGET, name, { fleetSize: 4 });
    // The binding read when needed, from the module's `env` (as a module-scope policy does).
    case 'shared-fn': return durableBudget(() => moduleEnv.BUDGET, name, { fleetSize: 4 });
    case 'throwing': return durableBudget(() => { throw new Error('no such binding'); }, name, { fleetSize: 4 });
    case 'hanging': return durableBudget(env.HANGING, name, { fleetSize: 4 });
    // Unreachable for the first 1.2 s, then the real object: the policy must come back.
    case 'returning': {
      const back = Date.now() + 1200;
      return durableBudget(() => { if (Date.now() < back) throw new Error('not yet'); return env.BUDGET; }, name, { fleetSize: 4 });
    }
    default: throw new TypeError(`unknown mode ${mode}`);
  }
}

async function run(spec, env) {
  const { mode, name, url, n = 1, durationMs = 60_000, concurrency = 1, options = {}, warmMs = 0, pauseMs = 0 } = spec;
  const shared = sharedFor(mode, name, env);
  const policy = new RetryPolicy(shared ? { ...options, shared } : options);
  const t0 = Date.now();
  // Optionally wait (bounded) for the first grant, as a long-lived isolate has it.
  while (warmMs && Date.now() - t0 < warmMs && policy.stats().shared?.mode !== 'leased') await sleep(10);
  const warmedMs = Date.now() - t0;
  const modeAtStart = policy.stats().shared?.mode ?? null;
  const out = { ops: 0, reasons: {}, budgets: {}, statuses: {}, other: [], maxOpMs: 0, warmedMs, modeAtStart };
  const start = Date.now();
  await operate(policy, reportOf, out, { url, n, durationMs, concurrency, pauseMs, start });
  out.elapsedMs = Date.now() - start;
  out.stats = policy.stats();
  return out;
}

// A policy made at module scope, as a Worker usually makes it: the binding
// is read from the module's `env` when an exchange needs it, and its object
// answers in 300 ms, after a short request has ended. Made in a try so that
// a throw is reported by /module instead of failing the Worker.
let modulePolicy, moduleError;
try {
  modulePolicy = new RetryPolicy({
    maxAttempts: 3, totalMs: 5_000, baseMs: 1, capMs: 4,
    shared: durableBudget(() => moduleEnv.SLOW, 'module-scope', { fleetSize: 4 }),
  });
} catch (e) {
  moduleError = String(e?.stack ?? e);
}

/** n operations through the module-scope policy, in this request. */
async function moduleRun({ url, n }) {
  if (!modulePolicy) return { error: moduleError };
  const out = { ops: 0, reasons: {}, budgets: {}, statuses: {} };
  for (let i = 0; i < n; i++) { // bounded by n
    out.ops += 1;
    try {
      const res = await modulePolicy.fetch(url);
      bump(out.statuses, res.status);
      bump(out.budgets, reportOf(res)?.budget);
    } catch (e) {
      bump(out.statuses, e?.reason ?? String(e));
      bump(out.budgets, e?.report?.budget);
    }
  }
  out.stats = modulePolicy.stats();
  return out;
}

/** The throttle tier's client (tests/fleet/throttle.mjs): one policy, its load. */
async function steady(spec, env) {
  const { name, fleetSize, options, url, totalMs } = spec;
  const policy = new RetryPolicy({ totalMs, ...options, shared: durableBudget(env.BUDGET, name, { fleetSize }) });
  return { ops: await steadyLoad(policyOp(policy, reportOf, url), spec) };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (url.pathname === '/run' && request.method === 'POST') return json(await run(await request.json(), env));
      if (url.pathname === '/module' && request.method === 'POST') return json(await moduleRun(await request.json()));
      if (url.pathname === '/steady' && request.method === 'POST') return json(await steady(await request.json(), env));
      if (url.pathname === '/authority') {
        const name = url.searchParams.get('name');
        return json(await env.BUDGET.get(env.BUDGET.idFromName(name)).stats());
      }
      return json({ error: 'not found' }, 404);
    } catch (e) {
      return json({ error: String(e?.stack ?? e) }, 500);
    }
  },
};
