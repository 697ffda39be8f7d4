// The fleet-workerd tier: one retry budget shared by four Worker isolates
// through a Durable Object (`saferetry/cloudflare`), in workerd, against the
// fault server. Issue #12, item 4 (Cloudflare part).
//
//   node tests/fleet/workerd.mjs [filter]
//
// One Wrangler build of tests/fleet/worker.mjs (importing the package from
// js/, built by scripts/build.sh; workerd-fleet.mjs) runs as four Worker services w0..w3 — four
// isolates, each its own wasm — whose policies share one `RetryBudget`
// object of w0's namespace, kept on a localDisk storage directory. Cases:
//   outage    4 × 250 operations against an always-503 path: the server's
//             count, shared against per-isolate budgets
//   rate      a shared start rate R/s: the most starts the server saw in any
//             1 s window, shared against per-isolate
//   restart   workerd stopped and started again on the same storage: the
//             object's level is the level before
//   fallback  the object unreachable (a namespace that throws, an object
//             that never answers): mode "fallback", first attempts go out,
//             every operation ends in bounded time
//   mixed     one budget name, policies of mixed configurations (the default
//             quota, `quota: false`, a smaller and a larger capacity) against
//             503: the quota policies' retries stay within one bucket
//   cold      fresh isolates (workerd restarted) and a fresh budget name at
//             R = 50 and R = 100: starts in the first second and in any 1 s
// Prints each case's figures and PASS/FAIL lines, then "N passed, M failed".
// Every process started here is killed at the end; every wait is bounded.
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain, startFaultServer, stop } from '../runtimes/procs.mjs';
import { maxInWindow, merge } from './measure.mjs';
import { buildFleet, startFleet } from './workerd-fleet.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(REPO, 'test-output/fleet-workerd');
const K = 4; // Worker services (isolates)
const RUN_BUDGET_MS = 210_000; // the whole tier, hard stop for every wait below
const t0 = Date.now();
const deadline = t0 + RUN_BUDGET_MS;
const note = (line) => process.stderr.write(`[fleet ${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);
const filter = process.argv[2];

const startWorkerd = (configFile) => startFleet(configFile, K);

// ---------------- talking to the workers and the fault server ----------------
async function call(base, pathname, body, ms = 60_000) {
  const left = Math.max(1000, Math.min(ms, deadline - Date.now()));
  const res = await fetch(base + pathname, {
    method: body ? 'POST' : 'GET', body: body && JSON.stringify(body), signal: AbortSignal.timeout(left),
    headers: body ? { 'content-type': 'application/json' } : {},
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${base}${pathname}: ${res.status} ${text.slice(0, 2000)}`);
  return JSON.parse(text);
}

const count = async (server, id) => (await fetch(`${server.url}/count/${id}`, { signal: AbortSignal.timeout(10_000) })).json();

/** Runs `spec` in every worker at once, each against its own fault-server run id. */
async function fleetRun(wd, server, spec, label) {
  const ids = wd.bases.map((_, i) => `${label}-w${i}-${crypto.randomUUID()}`);
  const began = Date.now();
  // Half the isolates pass the binding, half a function returning it.
  const modeOf = (i) => (spec.mode === 'shared' && i % 2 ? 'shared-fn' : spec.mode);
  const results = await Promise.all(wd.bases.map((base, i) => call(base, '/run', { ...spec, mode: modeOf(i), url: `${server.url}/s/seq/${ids[i]}?${spec.query}` })));
  const counts = await Promise.all(ids.map((id) => count(server, id)));
  for (const r of results) if (r.other.length) throw new Error(`a worker saw non-RetryError failures: ${r.other.slice(0, 3).join('\n')}`);
  return {
    results, counts, wallMs: Date.now() - began,
    ops: results.reduce((s, r) => s + r.ops, 0),
    requests: counts.reduce((s, c) => s + c.requests, 0),
    starts: counts.flatMap((c) => c.starts).sort((a, b) => a - b),
  };
}

// ---------------- the cases ----------------
let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
}

// The retry budgets under test, without adaptive throttling (docs/rules.md "The
// rules"): it would stop most first attempts of an always-503 path, and
// these cases count the retries a budget allows.
const OUTAGE_OPTIONS = { maxAttempts: 3, totalMs: 20_000, attemptMs: 5_000, baseMs: 1, capMs: 4, throttle: false }; // default quota: 500 tokens, 5 a retry
async function outage(wd, server) {
  const spec = { n: 250, concurrency: 5, options: OUTAGE_OPTIONS, query: 'steps=503' };
  const name = `outage-${crypto.randomUUID()}`;
  const shared = await fleetRun(wd, server, { ...spec, mode: 'shared', name }, 'outage-shared');
  const local = await fleetRun(wd, server, { ...spec, mode: 'local' }, 'outage-local');
  const authority = await call(wd.bases[0], `/authority?name=${name}`);
  const ratio = (r) => (r.requests / r.ops).toFixed(3);
  console.log(`outage: ${shared.ops} operations (${K} × 250) against 503`);
  console.log(`  shared budget (one RetryBudget): ${shared.requests} requests = ${ratio(shared)} × operations  (${shared.wallMs} ms; budget in reports ${JSON.stringify(merge(shared.results, 'budgets'))}; authority ${JSON.stringify(authority)})`);
  console.log(`  per-isolate budgets:            ${local.requests} requests = ${ratio(local)} × operations  (${local.wallMs} ms)`);
  for (const [i, r] of shared.results.entries()) console.log(`  w${i} shared stats: ${JSON.stringify(r.stats.shared)}`);
  check('outage: every operation ran', shared.ops === K * 250 && local.ops === K * 250, `${shared.ops}, ${local.ops}`);
  check('outage: shared budget, fleet requests ≤ 1.1 × operations', shared.requests <= 1.1 * shared.ops, `${shared.requests} ≤ ${1.1 * shared.ops}`);
  check('outage: per-isolate budgets send far more (≥ 1.3 × operations, ≥ shared + 200)',
    local.requests >= 1.3 * local.ops && local.requests >= shared.requests + 200, `${local.requests} vs ${shared.requests}`);
  const budgets = merge(shared.results, 'budgets');
  check('outage: every isolate reached the object, and ≥ 90 % of reports say "leased"',
    shared.results.every((r) => r.stats.shared?.roundTrips >= 1) && (budgets.leased ?? 0) >= 0.9 * shared.ops, JSON.stringify(budgets));
}

const R = Number(process.env.FLEET_RATE) || 100; // shared starts per second
const RATE_MS = 3000;
async function rate(wd, server) {
  const spec = {
    n: 5000, durationMs: RATE_MS, concurrency: 8, query: 'steps=200',
    options: { maxAttempts: 2, totalMs: 2_000, attemptMs: 2_000, baseMs: 1, capMs: 4, rate: { requests: R } },
  };
  const shared = await fleetRun(wd, server, { ...spec, mode: 'shared', name: `rate-${crypto.randomUUID()}` }, 'rate-shared');
  const local = await fleetRun(wd, server, { ...spec, mode: 'local' }, 'rate-local');
  // lease/mod.rs: starts in any 1 s window ≤ R + (B − 1) + K × (slots 32 + borrow 4), B = 1.
  const bound = R + 0 + K * (32 + 4);
  const sMax = maxInWindow(shared.starts), lMax = maxInWindow(local.starts);
  const secs = (r) => (r.starts.length ? (r.starts.at(-1) - r.starts[0]) / 1000 : 0);
  console.log(`rate: R = ${R}/s shared by ${K} isolates, ${RATE_MS} ms of load, 8 loops each`);
  console.log(`  shared:      max ${sMax} starts in any 1 s (bound R + K × 36 = ${bound}); ${shared.requests} requests over ${secs(shared).toFixed(2)} s; outcomes ${JSON.stringify(merge(shared.results, 'statuses'))}`);
  console.log(`  per-isolate: max ${lMax} starts in any 1 s; ${local.requests} requests over ${secs(local).toFixed(2)} s; outcomes ${JSON.stringify(merge(local.results, 'statuses'))}`);
  for (const [i, r] of shared.results.entries()) console.log(`  w${i} shared stats: ${JSON.stringify(r.stats.shared)}`);
  check('rate: shared, every 1 s window within R + documented slack', sMax <= bound && shared.requests > 0, `${sMax} ≤ ${bound}`);
  check('rate: shared, the whole run within R × seconds + slack', shared.requests <= R * (secs(shared) + 1) + K * 36, `${shared.requests} ≤ ${Math.round(R * (secs(shared) + 1) + K * 36)}`);
  check('rate: per-isolate budgets exceed the shared bound (the comparison)', lMax > bound, `${lMax} > ${bound}`);
}

async function restart(wd, server, configFile) {
  const name = `restart-${crypto.randomUUID()}`;
  const id = `restart-${crypto.randomUUID()}`;
  // Drain part of the bucket from one isolate: 30 operations against 503.
  const r = await call(wd.bases[1], '/run', { mode: 'shared', name, n: 30, concurrency: 3, options: OUTAGE_OPTIONS, url: `${server.url}/s/seq/${id}?steps=503` });
  const before = await call(wd.bases[2], `/authority?name=${name}`);
  note(`restart: stopping workerd (level ${before.quotaLevel})`);
  await stop(wd.proc);
  const again = await startWorkerd(configFile);
  const after = await call(again.bases[3], `/authority?name=${name}`);
  const fresh = await call(again.bases[3], `/authority?name=never-used-${crypto.randomUUID()}`);
  // A client of the restarted object: its grant comes from the kept bucket, not a fresh one.
  await call(again.bases[0], '/run', { mode: 'shared', name, n: 1, options: OUTAGE_OPTIONS, url: `${server.url}/s/seq/${id}?steps=200` });
  const used = await call(again.bases[3], `/authority?name=${name}`);
  console.log(`restart: ${r.ops} operations spent ${r.stats.shared?.tokensSpent} tokens; level before ${before.quotaLevel}, after a workerd restart ${after.quotaLevel} (a fresh object: ${fresh.quotaLevel}), after a new client's grant ${used.quotaLevel} (capacity 500)`);
  check('restart: the bucket was drained below full before the restart', before.quotaLevel !== null && before.quotaLevel < 500, String(before.quotaLevel));
  check('restart: the restarted object keeps its level', after.quotaLevel === before.quotaLevel, `${after.quotaLevel} === ${before.quotaLevel}`);
  check('restart: a new client is granted from the kept bucket, not a full one', used.quotaLevel !== null && used.quotaLevel < before.quotaLevel, `${used.quotaLevel} < ${before.quotaLevel}`);
  return again;
}

async function fallback(wd, server) {
  // Every first attempt must go out to an upstream failing on purpose: without adaptive throttling.
  const options = { maxAttempts: 3, totalMs: 5_000, attemptMs: 2_000, baseMs: 1, capMs: 4, throttle: false };
  for (const mode of ['throwing', 'hanging']) {
    const id = `fallback-${mode}-${crypto.randomUUID()}`;
    const began = Date.now();
    const r = await call(wd.bases[0], '/run', {
      // 2.5 s of operations, one every ~50 ms: past the 1 s answer timeout.
      mode, name: `fallback-${crypto.randomUUID()}`, n: 200, durationMs: 2500, pauseMs: 50, concurrency: 1, options,
      url: `${server.url}/s/seq/${id}?steps=503`,
    }, 20_000);
    const took = Date.now() - began;
    const c = await count(server, id);
    const s = r.stats.shared;
    console.log(`fallback (${mode}): ${r.ops} operations in ${took} ms, server saw ${c.requests}; slowest operation ${r.maxOpMs} ms; mode ${s?.mode}, unreachable ${s?.unreachable}, round trips ${s?.roundTrips}; budget in reports ${JSON.stringify(r.budgets)}`);
    check(`fallback (${mode}): stats().shared.mode is "fallback"`, s?.mode === 'fallback' && s.unreachable >= 1, JSON.stringify(s));
    check(`fallback (${mode}): every first attempt went out`, r.ops > 0 && c.requests >= r.ops, `${c.requests} ≥ ${r.ops}`);
    check(`fallback (${mode}): no operation hangs`, r.maxOpMs < options.totalMs && took < 15_000, `slowest ${r.maxOpMs} ms, run ${took} ms`);
    check(`fallback (${mode}): the later reports say "fallback"`, (r.budgets.fallback ?? 0) > 0, JSON.stringify(r.budgets));
  }
  // Unreachable for 1.2 s, then back: the policy asks again and is leased.
  const id = `fallback-returning-${crypto.randomUUID()}`;
  const r = await call(wd.bases[1], '/run', {
    mode: 'returning', name: `returning-${crypto.randomUUID()}`, n: 200, durationMs: 2500, pauseMs: 50, concurrency: 1, options,
    url: `${server.url}/s/seq/${id}?steps=503`,
  }, 20_000);
  const c = await count(server, id);
  const s = r.stats.shared;
  console.log(`fallback (object back after 1.2 s): ${r.ops} operations, server saw ${c.requests}; mode ${s?.mode}, requests ${s?.requests}, round trips ${s?.roundTrips}, unreachable ${s?.unreachable}, tokens spent ${s?.tokensSpent}; budget in reports ${JSON.stringify(r.budgets)}`);
  check('fallback: an object that comes back is asked again (leased, retries again)',
    s?.mode === 'leased' && (r.budgets.fallback ?? 0) > 0 && (r.budgets.leased ?? 0) > 0 && s.tokensSpent > 0 && c.requests > r.ops, JSON.stringify(s));
}

// A policy made at module scope (a Worker's usual shape) shares the budget
// across requests: its exchanges start inside whichever request needs one,
// and here the object answers in 300 ms, after that request has ended.
async function moduleScope(wd, server) {
  const id = `module-${crypto.randomUUID()}`;
  const url = `${server.url}/s/seq/${id}?steps=200`;
  const pause = () => new Promise((resolve) => setTimeout(resolve, 1500));
  // One operation: the request ends while its exchange is still out.
  const first = await call(wd.bases[2], '/module', { url, n: 1 }, 20_000);
  if (first.error) throw new Error(`the module-scope policy threw: ${first.error}`);
  await pause(); // past the 1 s answer timeout
  const second = await call(wd.bases[2], '/module', { url, n: 10 }, 20_000);
  await pause();
  const third = await call(wd.bases[2], '/module', { url, n: 10 }, 20_000);
  const c = await count(server, id);
  const s = third.stats.shared;
  console.log(`module scope: three requests 1.5 s apart, ${first.ops} + ${second.ops} + ${third.ops} operations, server saw ${c.requests}; mode ${s?.mode}, requests ${s?.requests}, round trips ${s?.roundTrips}; budget in reports ${[first, second, third].map((r) => JSON.stringify(r.budgets)).join(', ')}`);
  check('module scope: a shared policy made at module scope works across requests', c.requests === first.ops + second.ops + third.ops && third.statuses['200'] === third.ops, JSON.stringify(third.statuses));
  check('module scope: an exchange outliving its request still lands (leased)', s?.mode === 'leased' && s.roundTrips >= 1 && (second.budgets.leased ?? 0) === second.ops, JSON.stringify(s));
}

// Issue 20, item 1: one budget name is one budget, whatever each policy
// offers. Three rounds of (150 operations of a default-quota policy, then 40
// of a `quota: false` policy with a rate, so that it asks and offers
// `quota: null`), then all four isolates at once with four different
// quotas. One bucket is 500 tokens = 100 retries at 5 tokens each; each
// isolate may also hold a grant (20 tokens = 4 retries).
async function mixed(wd, server) {
  const name = `mixed-${crypto.randomUUID()}`;
  const run = async (i, options, n, label) => {
    const id = `mixed-${label}-${crypto.randomUUID()}`;
    const r = await call(wd.bases[i], '/run', { mode: 'shared', name, n, concurrency: 5, options: { ...OUTAGE_OPTIONS, ...options }, url: `${server.url}/s/seq/${id}?steps=503` });
    const c = await count(server, id);
    return { ops: r.ops, retries: c.requests - r.ops, stats: r.stats.shared };
  };
  const noQuota = { quota: false, rate: { requests: 1000 } };
  let quotaRetries = 0, freeRetries = 0;
  const rounds = [];
  for (let round = 0; round < 3; round++) {
    const limited = await run(1, {}, 150, `quota-${round}`);
    const free = await run(2, noQuota, 40, `free-${round}`);
    quotaRetries += limited.retries;
    freeRetries += free.retries;
    rounds.push(`${limited.retries} + ${free.retries}`);
  }
  const afterRounds = await call(wd.bases[0], `/authority?name=${name}`);
  const capacities = [{}, { quota: { capacity: 100 } }, noQuota, { quota: { capacity: 5000 } }];
  const together = await Promise.all(capacities.map((o, i) => run(i, o, 100, `together-${i}`)));
  const authority = await call(wd.bases[0], `/authority?name=${name}`);
  const togetherQuota = together.filter((_, i) => i !== 2).reduce((n, r) => n + r.retries, 0);
  quotaRetries += togetherQuota;
  const bucket = 500 / 5, held = K * 4;
  console.log(`mixed: one budget name; rounds of (150 ops, default quota) + (40 ops, quota: false): retries ${rounds.join(', ')}; bucket after the rounds ${afterRounds.quotaLevel}`);
  console.log(`  then 4 isolates × 100 ops at once (default quota, capacity 100, quota: false, capacity 5000): retries ${together.map((r) => r.retries).join(', ')}; authority ${JSON.stringify(authority)}`);
  console.log(`  quota policies' retries in all: ${quotaRetries} (one bucket = ${bucket} retries, + ${held} held); quota: false policies' own: ${freeRetries + together[2].retries}`);
  check('mixed: the quota policies retried within one bucket plus held grants', quotaRetries <= bucket + held, `${quotaRetries} ≤ ${bucket} + ${held}`);
  check('mixed: the bucket was spent, and quota: false neither removed nor refilled it',
    quotaRetries >= 0.9 * bucket && afterRounds.quotaLevel !== null && afterRounds.quotaLevel < 50, `${quotaRetries} retries, level ${afterRounds.quotaLevel}`);
  check('mixed: quota: false policies retry on their own (maxAttempts 3: two retries an operation)', freeRetries === 3 * 40 * 2, String(freeRetries));
  check('mixed: the strictest capacity heard is in force, and the differing offers are counted',
    authority.config?.quota?.capacity === 100 && authority.differingConfigs > 0, JSON.stringify(authority.config));
}

// Issue 20, item 2: the first second after a deploy. workerd restarted (four
// fresh isolates, a fresh object) and a fresh budget name; then the rate
// case's load at once. The bound (lease/mod.rs): R + (burst − 1) + K, one
// start per fresh isolate before its first answer, + 4 for the few ms the
// answers take (slots whose time has come when they arrive start at once)
// and for arrival times read in whole ms.
// Starts are counted where they arrive, at the fault server: a stall of a
// loaded machine (workerd or the server not scheduled for a few hundred ms)
// bunches arrivals whatever the isolates did (a slot is never used before
// its time, but a late timer spends it late, next to the on-time ones), so
// a run that misses the bound is reported and run once more, and the second
// run decides. Without the rule (fresh policies on rate ÷ fleetSize until
// their first grant) every run missed it at R = 50 (59–62) and half of them
// at R = 100 (106–125).
// Returns the running workerd.
async function cold(wd, server, configFile) {
  for (const r of [50, 100]) {
    const bound = r + 0 + K + 4;
    for (let run = 1; run <= 2; run++) {
      await stop(wd.proc);
      wd = await startWorkerd(configFile);
      const spec = {
        n: 5000, durationMs: RATE_MS, concurrency: 8, query: 'steps=200',
        options: { maxAttempts: 2, totalMs: 2_000, attemptMs: 2_000, baseMs: 1, capMs: 4, rate: { requests: r } },
      };
      const res = await fleetRun(wd, server, { ...spec, mode: 'shared', name: `cold-${crypto.randomUUID()}` }, `cold-${r}`);
      const first = res.starts.filter((t) => t < res.starts[0] + 1000).length;
      const most = maxInWindow(res.starts);
      const gap = res.starts.reduce((g, t, i) => (i ? Math.max(g, t - res.starts[i - 1]) : 0), 0);
      const locals = res.results.map((x) => x.stats.shared?.localStarts);
      console.log(`cold: R = ${r}/s, ${K} fresh isolates, fresh budget name: first second ${first} starts, any 1 s at most ${most} (bound R + K + 4 = ${bound}); local starts per isolate ${locals.join(', ')}; ${res.requests} requests over ${((res.starts.at(-1) - res.starts[0]) / 1000).toFixed(2)} s, longest gap ${gap} ms; outcomes ${JSON.stringify(merge(res.results, 'statuses'))}`);
      const within = first <= bound && most <= bound;
      if (!within && run === 1) {
        console.log(`  missed the bound (longest gap between two starts ${gap} ms; load average ${os.loadavg()[0].toFixed(1)}): run again`);
        continue;
      }
      check(`cold: R = ${r}, the first second within R + K + 4`, first <= bound && res.requests > 0, `${first} ≤ ${bound}`);
      check(`cold: R = ${r}, every 1 s window within R + K + 4`, most <= bound, `${most} ≤ ${bound}`);
      check(`cold: R = ${r}, the rate is used (≥ 0.8 R a second)`, res.requests >= 0.8 * r * (RATE_MS / 1000), `${res.requests} requests`);
      check(`cold: R = ${r}, each fresh isolate started at most once before its first answer`, locals.every((n) => n <= 1), locals.join(', '));
      break;
    }
  }
  return wd;
}

// ---------------- main ----------------
runMain('fleet-workerd', async () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const server = await startFaultServer(OUT);
  note(`fault server ${server.url}`);
  const { configFile, modules } = buildFleet({ out: OUT, k: K, faultUrl: server.url });
  note(`Wrangler build: ${modules.map((m) => m.name).join(', ')}`);
  let wd = await startWorkerd(configFile);
  note(`workerd: ${wd.bases.join(' ')}`);
  const cases = { module: moduleScope, outage, rate, restart, fallback, mixed, cold };
  for (const [name, fn] of Object.entries(cases)) {
    if (filter && !name.includes(filter)) continue;
    if (Date.now() > deadline) { check(name, false, 'not run: the tier\'s deadline passed'); continue; }
    note(`case ${name}`);
    try {
      const next = await fn(wd, server, configFile);
      if (next?.proc) wd = next;
    } catch (e) {
      check(name, false, `threw: ${e.stack ?? e}\n${wd.proc.tail}`);
    }
  }
  await stop(wd.proc);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
});
