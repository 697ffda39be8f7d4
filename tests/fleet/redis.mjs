// The fleet-redis tier: one retry budget shared through Redis
// (`saferetry/redis`) by six service processes — four Node (two with
// node-redis, two with ioredis), one Deno (node-redis), one Bun (ioredis) —
// against the fault server, with a real `redis-server` this tier starts
// (Debian's package; scripts/bootstrap.sh installs it) on 127.0.0.1 in a
// directory of its own, and kills. Issue #30.
//
//   node tests/fleet/redis.mjs [filter]
//
// Cases:
//   outage     6 × 150 operations against an always-503 path: retries of the
//              fleet sharing one budget, against six budgets of their own
//   rate       a shared start rate R/s (one Node instance's clock 700 ms
//              ahead): the most starts the server saw in any 1 s window,
//              shared against per-instance; Redis round trips per operation
//   cold       the first second: four fresh Node processes on a fresh budget
//              name at R = 50/s: the first second and the worst 1 s window
//              within 1.1 R as the policies started them, 1.2 R as the
//              server saw them (issue 38: 53–77 before)
//   restart    Redis killed mid-run and started again 0.6 s later, without
//              persistence (every operation ends, every instance leased
//              again, the worst 1 s window from then on within 1.1 R / 1.2 R:
//              168–181 at R = 100 before) and with it (append-only file: the
//              bucket's level is kept)
//   stopped    Redis stopped for 1.5 s, and frozen (SIGSTOP) for 1.5 s, in a
//              run: mode "fallback", every first attempt goes out, no
//              operation hangs, then leased again (rejoin)
//   killed     an instance SIGKILLed while holding a lease: its grant expires
//              (ttl), its share of the rate comes back to the others, and the
//              tokens it held are the only ones lost (it returns nothing)
//   malformed  foreign values under the budget's key: refused by name
//              (stats().shared.reason), fallback, first attempts go out, the
//              key left as it was
// Prints each case's figures and PASS/FAIL lines, then "N passed, M failed".
// Every process started here is killed at the end; every wait is bounded.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { freePort } from '../runtimes/port.mjs';
import { runMain, start, startFaultServer, waitExit } from '../runtimes/procs.mjs';
import { maxInWindow, merge } from './measure.mjs';
import { killRedis, startRedis } from './redis-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const OUT = path.join(REPO, 'test-output/fleet-redis');
const INSTANCE = path.join(HERE, 'redis-instance.mjs');
const RUN_BUDGET_MS = 150_000; // the whole tier, hard stop for every wait below
const t0 = Date.now();
const deadline = t0 + RUN_BUDGET_MS;
const note = (line) => process.stderr.write(`[fleet-redis ${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);
const filter = process.argv[2];

// The six instances: runtime and Redis client.
const FLEET = [
  { runtime: 'node', client: 'node-redis' },
  { runtime: 'node', client: 'ioredis' },
  { runtime: 'node', client: 'node-redis' },
  { runtime: 'node', client: 'ioredis' },
  { runtime: 'deno', client: 'node-redis' },
  { runtime: 'bun', client: 'ioredis' },
];
const K = FLEET.length;
const TTL_MS = 10_000; // AuthorityConfig::default().ttl_ms

// ---------------- instances ----------------
const BIN = { node: process.execPath, deno: path.join(REPO, 'node_modules/.bin/deno'), bun: path.join(REPO, 'node_modules/.bin/bun') };
function startInstance(member, spec, label) {
  const json = JSON.stringify({ ...spec, client: member.client });
  const args = member.runtime === 'deno' ? ['run', '-A', '--node-modules-dir=manual', '--no-lock', INSTANCE, json] : [INSTANCE, json];
  return start(`${label}-${member.runtime}-${member.client}`, BIN[member.runtime], args, { cwd: REPO, echo: false });
}

async function resultOf(p, ms = 60_000) {
  const code = await waitExit(p, Math.min(deadline, Date.now() + ms));
  const last = p.lines.filter((l) => l.startsWith('{')).at(-1);
  if (code !== 0 || !last) throw new Error(`${p.name} exited ${code}:\n${p.lines.slice(-5).join('\n')}\n${p.tail}`);
  const r = JSON.parse(last);
  if (r.other.length) throw new Error(`${p.name} saw non-RetryError failures: ${r.other.slice(0, 3).join('\n')}`);
  return r;
}

const count = async (server, id) => (await fetch(`${server.url}/count/${id}`, { signal: AbortSignal.timeout(10_000) })).json();

/** Runs `spec` in every instance at once (or those of `members`), each against its own fault-server run id. */
async function fleetRun(ctx, spec, label, { members = FLEET, during } = {}) {
  const ids = members.map((m, i) => `${label}-${i}-${crypto.randomUUID()}`);
  const began = Date.now();
  ctx.began = began;
  const procs = members.map((m, i) => startInstance(m, { ...spec, redisUrl: ctx.redisUrl, url: `${ctx.server.url}/s/seq/${ids[i]}?${spec.query}`, skewMs: spec.skew?.[i] ?? 0 }, label));
  if (during) await during(procs);
  const results = await Promise.all(procs.map((p) => resultOf(p)));
  const counts = await Promise.all(ids.map((id) => count(ctx.server, id)));
  return {
    results, counts, wallMs: Date.now() - began,
    ops: results.reduce((s, r) => s + r.ops, 0),
    requests: counts.reduce((s, c) => s + c.requests, 0),
    starts: counts.flatMap((c) => c.starts).sort((a, b) => a - b),
    calls: results.flatMap((r) => r.calls).sort((a, b) => a - b),
  };
}

/** Waits (bounded) until every instance has been leased once. */
async function allLeased(procs, ms = 20_000) {
  const until = Math.min(deadline, Date.now() + ms);
  while (!procs.every((p) => p.lines.includes('leased'))) { // bounded by `until`
    if (Date.now() > until) throw new Error(`not every instance was leased within ${ms} ms: ${procs.map((p) => p.name).filter((_, i) => !procs[i].lines.includes('leased')).join(', ')}`);
    await sleep(20);
  }
}

/** A file whose existence ends the instances' loops (spec.stopFile). */
const stopFile = () => path.join(OUT, `stop-${crypto.randomUUID()}`);

/** Redis's own count of the budget's commands: a read is GET + TIME in one round trip, a write one EVAL. */
async function commandStats(redis) {
  const text = await redis.info('commandstats');
  const calls = (cmd) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(text)?.[1] ?? 0);
  return { reads: calls('time'), writes: calls('eval') };
}

const stateOf = async (redis, name) => {
  const v = await redis.get(`saferetry:budget:${name}`);
  return v === null ? null : JSON.parse(v);
};

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
async function outage(ctx) {
  const spec = { n: 150, concurrency: 5, options: OUTAGE_OPTIONS, query: 'steps=503' };
  const name = `outage-${crypto.randomUUID()}`;
  await ctx.redis.configResetStat();
  const shared = await fleetRun(ctx, { ...spec, mode: 'shared', name }, 'outage-shared');
  const rt = await commandStats(ctx.redis);
  const local = await fleetRun(ctx, { ...spec, mode: 'local' }, 'outage-local');
  const state = await stateOf(ctx.redis, name);
  const bucket = 500 / 5, held = K * 4;
  const sRetries = shared.requests - shared.ops, lRetries = local.requests - local.ops;
  console.log(`outage: ${shared.ops} operations (${K} instances × 150) against 503`);
  console.log(`  one budget in Redis:    ${shared.requests} requests, ${sRetries} retries = ${(sRetries / bucket).toFixed(2)} buckets  (${shared.wallMs} ms; Redis: ${rt.reads} reads + ${rt.writes} writes for ${state?.stats.requests} grants = ${((rt.reads + rt.writes) / shared.ops).toFixed(3)} round trips / operation; level ${state?.level}, ${state?.stats.requests} grants; budget in reports ${JSON.stringify(merge(shared.results, 'budgets'))})`);
  console.log(`  six budgets of their own: ${local.requests} requests, ${lRetries} retries = ${(lRetries / bucket).toFixed(2)} buckets  (${local.wallMs} ms)`);
  for (const [i, r] of shared.results.entries()) console.log(`  ${FLEET[i].runtime}/${FLEET[i].client} shared stats: ${JSON.stringify(r.stats.shared)}`);
  check('outage: every operation ran', shared.ops === K * 150 && local.ops === K * 150, `${shared.ops}, ${local.ops}`);
  check('outage: the fleet sharing one budget retried at most one bucket plus the grants held', sRetries <= bucket + held && sRetries >= 0.8 * bucket, `${sRetries} ≤ ${bucket} + ${held}`);
  check('outage: six budgets of their own retry about six buckets (the control)', lRetries >= 5 * bucket, `${lRetries} ≥ ${5 * bucket}`);
  check('outage: every instance (Node, Deno, Bun; node-redis and ioredis) was leased through Redis',
    shared.results.every((r) => r.stats.shared?.roundTrips >= 1 && r.modes.includes('leased')), shared.results.map((r) => r.stats.shared?.roundTrips).join(', '));
}

const R = 100; // shared starts per second
const RATE_MS = 3000;
const RATE_SPEC = {
  n: 5000, durationMs: RATE_MS, concurrency: 8, query: 'steps=200',
  options: { maxAttempts: 2, totalMs: 2_000, attemptMs: 2_000, baseMs: 1, capMs: 4, rate: { requests: R } },
};
// lease/mod.rs: starts in any 1 s window ≤ R + (B − 1) + K × (slots 32 + borrow 4), B = 1.
const RATE_BOUND = R + K * (32 + 4);
async function rate(ctx) {
  await ctx.redis.configResetStat();
  // Instance 1's clock is 700 ms ahead: its slots are handed to it in its own clock.
  const name = `rate-${crypto.randomUUID()}`;
  const shared = await fleetRun(ctx, { ...RATE_SPEC, mode: 'shared', name, skew: [0, 700] }, 'rate-shared');
  const rt = await commandStats(ctx.redis);
  const grants = (await stateOf(ctx.redis, name))?.stats.requests;
  const local = await fleetRun(ctx, { ...RATE_SPEC, mode: 'local' }, 'rate-local');
  const sMax = maxInWindow(shared.starts), lMax = maxInWindow(local.starts);
  const secs = (r) => (r.starts.length ? (r.starts.at(-1) - r.starts[0]) / 1000 : 0);
  console.log(`rate: R = ${R}/s shared by ${K} instances (one clock 700 ms ahead), ${RATE_MS} ms of load, 8 loops each`);
  console.log(`  shared:       max ${sMax} starts in any 1 s (bound R + K × 36 = ${RATE_BOUND}); ${shared.requests} requests over ${secs(shared).toFixed(2)} s; Redis: ${rt.reads} reads + ${rt.writes} writes for ${grants} grants (${rt.writes - grants} conflicts) = ${((rt.reads + rt.writes) / shared.ops).toFixed(3)} round trips / operation; outcomes ${JSON.stringify(merge(shared.results, 'statuses'))}`);
  console.log(`  per-instance: max ${lMax} starts in any 1 s; ${local.requests} requests over ${secs(local).toFixed(2)} s`);
  check('rate: shared through Redis, every 1 s window within R + documented slack', sMax <= RATE_BOUND && shared.requests > 0, `${sMax} ≤ ${RATE_BOUND}`);
  check('rate: shared, the whole run within R × seconds + slack', shared.requests <= R * (secs(shared) + 1) + K * 36, `${shared.requests} ≤ ${Math.round(R * (secs(shared) + 1) + K * 36)}`);
  // Six budgets of R each could start 6 R a second; a loaded machine drives fewer (measured 203 at a load average of 11).
  check('rate: budgets of their own start well above R, and above the shared fleet (the comparison)', lMax > 1.5 * R && lMax > sMax, `${lMax} > ${1.5 * R}, > ${sMax}`);
}

// The worst second after a start or a Redis restart (issue 38): the
// schedule's R, plus one start per fresh process before its first answer,
// plus the slots a start may run late (20 ms: R / 50). Checked where the
// policies started them (when they called `fetch`) at 1.1 R, and where
// they arrived, at the fault server, at 1.2 R: generous for a loaded
// machine, where the server may take arrivals in a bunch after a stall of
// its own; both short of the 53–77 (R = 50) and 168–181 (R = 100)
// measured before.
const OWN = (r) => Math.floor(1.1 * r);
const WORST = (r) => Math.floor(1.2 * r);

// Issue 38, item 6: the first second of four fresh processes on a fresh
// budget name at R = 50, the issue's setting. Counted where the starts
// arrive, at the fault server; a run that misses the bound is reported and
// run once more (the second decides), as the workerd tier's cold case does.
async function cold(ctx) {
  const r = 50;
  const members = FLEET.slice(0, 4);
  const spec = { ...RATE_SPEC, fleetSize: members.length, options: { ...RATE_SPEC.options, rate: { requests: r } } };
  for (let attempt = 1; attempt <= 2; attempt++) {
    const res = await fleetRun(ctx, { ...spec, mode: 'shared', name: `cold-${crypto.randomUUID()}` }, 'cold', { members });
    const first = res.starts.filter((t) => t < res.starts[0] + 1000).length;
    const most = maxInWindow(res.starts), own = maxInWindow(res.calls);
    const late = res.results.map((x) => `${x.stats.shared?.lateStarts}/${x.stats.shared?.slotsMissed}`);
    console.log(`cold: R = ${r}/s, ${members.length} fresh Node processes, a fresh budget name: first second ${first} starts, any 1 s at most ${most} (checked ≤ ${WORST(r)}; as the policies started them: ${own}, checked ≤ ${OWN(r)}); ${res.requests} requests over ${((res.starts.at(-1) - res.starts[0]) / 1000).toFixed(2)} s; late starts / slots missed per process ${late.join(', ')}; load average ${os.loadavg()[0].toFixed(1)}; outcomes ${JSON.stringify(merge(res.results, 'statuses'))}`);
    if ((first > WORST(r) || most > WORST(r) || own > OWN(r)) && attempt === 1) {
      console.log('  missed the bound: run again');
      continue;
    }
    check(`cold: R = ${r}, the first second within 1.2 R`, first <= WORST(r) && res.requests > 0, `${first} ≤ ${WORST(r)}`);
    check(`cold: R = ${r}, every 1 s window within 1.2 R where the starts arrive, 1.1 R where the policies made them`, most <= WORST(r) && own <= OWN(r), `${most} ≤ ${WORST(r)}, ${own} ≤ ${OWN(r)}`);
    check(`cold: R = ${r}, the rate is used (≥ 0.8 R a second)`, res.requests >= 0.8 * r * (RATE_MS / 1000), `${res.requests} requests`);
    break;
  }
}

async function restart(ctx) {
  // Without persistence: Redis killed 0.5 s into a rate run (once every
  // instance is leased) and started again 0.6 s later.
  const name = `restart-${crypto.randomUUID()}`;
  const stop = stopFile();
  let restartedAt = 0;
  const run = await fleetRun(ctx, { ...RATE_SPEC, durationMs: 20_000, stopFile: stop, mode: 'shared', name }, 'restart', {
    during: async (procs) => {
      await allLeased(procs);
      await sleep(500);
      restartedAt = Date.now();
      await killRedis(ctx.proc);
      // Down for a while, as a service or container restart takes: the
      // exchanges in between fail and the instances fall back.
      await sleep(600);
      ctx.proc = await startRedis(ctx.dir, ctx.port);
      note('restart: Redis killed and started again 0.6 s later (no persistence)');
      await sleep(2000);
      writeFileSync(stop, '');
    },
  });
  const most = maxInWindow(run.starts);
  // Windows from 1 s before the kill on: every window the restart touches.
  const after = maxInWindow(run.starts.filter((t) => t >= restartedAt - 1000));
  const state = await stateOf(ctx.redis, name);
  const ends = run.results.map((r) => r.stats.shared?.mode);
  const calls = maxInWindow(run.calls.filter((t) => t >= restartedAt - 1000));
  console.log(`restart (no persistence): ${run.ops} operations, ${run.requests} requests (outcomes ${JSON.stringify(merge(run.results, 'statuses'))}); max ${most} starts in any 1 s, ${after} from 1 s before the kill on (checked ≤ ${WORST(R)}; as the policies started them: ${calls}, checked ≤ ${OWN(R)}); modes seen ${run.results.map((r) => r.modes.join('>')).join(' | ')}; local starts ${run.results.map((r) => r.stats.shared?.localStarts).join(', ')}, unreachable ${run.results.map((r) => r.stats.shared?.unreachable).join(', ')}; state after: ${state?.stats.requests} grants since the restart; load average ${os.loadavg()[0].toFixed(1)}`);
  check('restart: every operation ended, each instance leased again after Redis came back', run.ops > 0 && ends.every((m) => m === 'leased') && state !== null, ends.join(', '));
  check('restart: the shared rate held through the restart (any 1 s from before the kill on within 1.2 R where the starts arrive, 1.1 R where the policies made them)',
    after <= WORST(R) && calls <= OWN(R) && most <= RATE_BOUND, `${after} ≤ ${WORST(R)}, ${calls} ≤ ${OWN(R)}`);
  // With persistence: the bucket's level outlives a kill.
  const dir = path.join(OUT, 'redis-aof');
  const port = await freePort();
  let proc = await startRedis(dir, port, { persist: true });
  const url = `redis://127.0.0.1:${port}`;
  const client = await createClient({ url }).on('error', () => {}).connect();
  const kept = `kept-${crypto.randomUUID()}`;
  try {
    const one = { ...ctx, redisUrl: url };
    await fleetRun(one, { mode: 'shared', name: kept, n: 30, concurrency: 3, options: OUTAGE_OPTIONS, query: 'steps=503' }, 'aof', { members: [FLEET[1]] });
    const before = (await stateOf(client, kept))?.level;
    await killRedis(proc);
    proc = await startRedis(dir, port, { persist: true });
    const after = (await stateOf(client, kept))?.level;
    // `holdMs`: the instance stays until it holds its grant (bounded), so the
    // grant's write to Redis is done before it exits: a one-operation
    // process otherwise could end (and close its client) with its first
    // exchange still in flight, and the level read below would be the old
    // one (seen once: 315 < 315).
    await fleetRun(one, { mode: 'shared', name: kept, n: 1, holdMs: 2000, options: OUTAGE_OPTIONS, query: 'steps=200' }, 'aof-after', { members: [FLEET[0]] });
    const used = (await stateOf(client, kept))?.level;
    console.log(`restart (append-only file, fsync always): level before a kill ${before}, after ${after}, after a new instance's grant ${used} (capacity 500)`);
    check('restart: with persistence the bucket was drained, and the restarted Redis keeps its level', before < 500 && after === before, `${after} === ${before}`);
    check('restart: with persistence a new instance is granted from the kept bucket, not a full one', used < before, `${used} < ${before}`);
  } finally {
    client.destroy();
    await killRedis(proc);
  }
}

async function stopped(ctx) {
  // Every first attempt must go out to an upstream failing on purpose: without adaptive throttling.
  const options = { maxAttempts: 3, totalMs: 5_000, attemptMs: 2_000, baseMs: 1, capMs: 4, throttle: false };
  const faults = {
    // Stopped: nothing listens for 1.5 s (connections refused), then a fresh Redis.
    stopped: async () => {
      await killRedis(ctx.proc);
      await sleep(1500);
      ctx.proc = await startRedis(ctx.dir, ctx.port);
    },
    // Frozen: connections open, no answer for 1.5 s (slower than commandMs).
    frozen: async () => {
      process.kill(ctx.proc.child.pid, 'SIGSTOP');
      await sleep(1500);
      process.kill(ctx.proc.child.pid, 'SIGCONT');
    },
  };
  for (const [label, fault] of Object.entries(faults)) {
    const stop = stopFile();
    const spec = { mode: 'shared', name: `${label}-${crypto.randomUUID()}`, n: 1000, durationMs: 20_000, stopFile: stop, pauseMs: 50, concurrency: 1, options, query: 'steps=503' };
    const run = await fleetRun(ctx, spec, label, {
      during: async (procs) => {
        await allLeased(procs);
        await sleep(300);
        note(`${label}: fault on at ${Date.now() - ctx.began} ms`);
        await fault();
        note(`${label}: fault off at ${Date.now() - ctx.began} ms`);
        await sleep(2000);
        writeFileSync(stop, '');
      },
    });
    const firsts = run.results.every((r, i) => run.counts[i].requests >= r.ops);
    const slowest = Math.max(...run.results.map((r) => r.maxOpMs));
    console.log(`${label}: ${run.ops} operations, server saw ${run.requests}; slowest operation ${slowest} ms; modes seen ${run.results.map((r) => r.modes.join('>')).join(' | ')}; unreachable ${run.results.map((r) => r.stats.shared?.unreachable).join(', ')}; budget in reports ${JSON.stringify(merge(run.results, 'budgets'))}`);
    for (const [i, r] of run.results.entries()) console.log(`  ${FLEET[i].runtime}/${FLEET[i].client}: ${r.ops} operations, exchanges [start ms, took ms, tokens] ${JSON.stringify(r.exchanges)}`);
    check(`${label}: every instance said mode "fallback" while Redis was away`, run.results.every((r) => r.modes.includes('fallback')), run.results.map((r) => r.modes.join('>')).join(' | '));
    check(`${label}: every first attempt went out`, run.ops > 0 && firsts, run.counts.map((c, i) => `${c.requests} ≥ ${run.results[i].ops}`).join(', '));
    check(`${label}: no operation hangs`, slowest < options.totalMs, `slowest ${slowest} ms`);
    check(`${label}: every instance rejoined (leased again) once Redis answered`, run.results.every((r) => r.modes.includes('fallback') && r.modes.at(-1) === 'leased'), run.results.map((r) => r.modes.join('>')).join(' | '));
  }
}

// Started first, checked last (its grant must expire: a ttl).
async function killedStart(ctx) {
  const name = `killed-${crypto.randomUUID()}`;
  const id = `killed-${crypto.randomUUID()}`;
  // Holds tokens (an outage drew them) and slots of a slow shared rate.
  const options = { ...OUTAGE_OPTIONS, rate: { requests: 5 } };
  const p = startInstance(FLEET[1], { redisUrl: ctx.redisUrl, mode: 'shared', name, n: 4, concurrency: 2, options, holdMs: 60_000, url: `${ctx.server.url}/s/seq/${id}?steps=503` }, 'killed');
  const until = Date.now() + 20_000;
  while (!p.lines.some((l) => l.startsWith('holding '))) { // bounded by `until`
    if (Date.now() > until || !p.child || p.child.exitCode !== null) throw new Error(`the instance to kill never held a lease:\n${p.lines.join('\n')}\n${p.tail}`);
    await sleep(20);
  }
  const held = JSON.parse(p.lines.find((l) => l.startsWith('holding ')).slice(8));
  process.kill(-p.child.pid, 'SIGKILL');
  await Promise.race([p.exited, sleep(3000)]);
  const killedAt = Date.now();
  const state = await stateOf(ctx.redis, name);
  const dead = state.holders[0];
  // Another client, right away: the schedule's horizon (5 + 1 starts) is shared by two clients heard within a ttl.
  const budget = ctx.redisBudget(ctx.redis, name);
  let seq = 0;
  const exchange = (wantTokens, wantSlots) => budget.exchange({ client: 7, seq: ++seq, wantTokens, holdingTokens: 0, returnedTotal: 0, refundedTotal: 0, wantSlots, config: { quota: state.config.quota, rate: state.config.rate } });
  const ask = () => exchange(20, 32);
  await sleep(1200); // past the dead one's reserved slots
  const now = await ask();
  // The authority counts a client's silence only while it hears from
  // someone: client 7 asks for nothing every 2 s until the check, so the
  // dead one's silence counts from its last request.
  const keep = () => exchange(0, 0);
  const keeping = setInterval(() => { keep().catch(() => {}); }, 2000);
  return { name, held, dead, killedAt, now, ask, keep, keeping, level: state.level };
}

async function killedCheck(ctx, k) {
  const left = k.dead.seenMs + TTL_MS + 1200 - Date.now();
  if (left > 0) { note(`killed: waiting ${left} ms for the dead instance's grant to expire`); await sleep(left); }
  const later = await k.ask();
  const state = await stateOf(ctx.redis, k.name);
  const dead = state.holders.find((h) => h.client === k.dead.client);
  // Its tokens: given back once it has been silent two ttls (the keep-alives
  // carry the authority's clock past that), what it held and had not spent.
  const back = k.dead.seenMs + 2 * TTL_MS + 1500 - Date.now();
  if (back > 0) { note(`killed: waiting ${back} ms for the dead instance's tokens to come back`); await sleep(back); }
  clearInterval(k.keeping);
  await k.keep();
  const after = await stateOf(ctx.redis, k.name);
  const deadAfter = after.holders.find((h) => h.client === k.dead.client);
  console.log(`killed: the instance held ${k.held.tokensHeld} tokens and ${k.held.slotsHeld} slots when killed (the authority believed ${k.dead.holding} tokens, ${k.dead.spent} spent in all); another client's share of the 5/s schedule: ${k.now.slots} slots a grant while the dead one counted, ${later.slots} once its grant expired; level ${k.level} at the kill, ${state.level} after the other client's two grants (${k.now.tokens} + ${later.tokens} tokens), ${after.level} once the dead one was silent two ttls (${after.stats.tokensReclaimed} tokens given back)`);
  check('killed: the killed instance held a lease (tokens) when it was killed', k.held.tokensHeld > 0 && k.dead.holding > 0, JSON.stringify(k.held));
  check('killed: its lease expires back — once its ttl passed, another client gets the whole schedule, not a share',
    dead?.lastSeq === k.dead.lastSeq && later.slots > k.now.slots && later.slots >= 5, `${later.slots} > ${k.now.slots}; the dead client still known (the state kept): ${dead !== undefined}`);
  check('killed: the tokens it held and had not spent come back to the bucket, once, two ttls after it was last heard',
    after.level === k.level - k.now.tokens - later.tokens + k.dead.holding && after.stats.tokensReclaimed === k.dead.holding && deadAfter?.holding === 0 && deadAfter?.reclaimed === k.dead.holding,
    `level ${after.level} === ${k.level} at the kill - ${k.now.tokens} - ${later.tokens} granted to another + ${k.dead.holding}; reclaimed ${after.stats.tokensReclaimed}; holder ${JSON.stringify(deadAfter)}`);
}

async function malformed(ctx) {
  const cases = [
    ['a foreign JSON value', JSON.stringify({ config: {}, holders: 3 }), '`state.holders` must be an array'],
    ['text that is not JSON', 'hello', 'not JSON'],
  ];
  for (const [label, value, says] of cases) {
    const name = `malformed-${crypto.randomUUID()}`;
    await ctx.redis.set(`saferetry:budget:${name}`, value);
    // Every first attempt must go out to an upstream failing on purpose: without adaptive throttling.
    const spec = { mode: 'shared', name, n: 30, pauseMs: 20, concurrency: 1, options: { maxAttempts: 3, totalMs: 5_000, baseMs: 1, capMs: 4, throttle: false }, query: 'steps=503' };
    const run = await fleetRun(ctx, spec, 'malformed', { members: [FLEET[0], FLEET[5]] });
    const left = await ctx.redis.get(`saferetry:budget:${name}`);
    const reasons = run.results.map((r) => r.stats.shared?.reason);
    console.log(`malformed (${label}): reasons ${JSON.stringify(reasons)}; modes ${run.results.map((r) => r.modes.join('>')).join(' | ')}; server saw ${run.requests} for ${run.ops} operations`);
    check(`malformed (${label}): refused by name, in stats().shared.reason`, reasons.every((r) => r?.includes(says) && r.includes(name)), JSON.stringify(reasons));
    check(`malformed (${label}): the instances fell back and every first attempt went out`, run.results.every((r) => r.stats.shared?.mode === 'fallback') && run.results.every((r, i) => run.counts[i].requests >= r.ops), run.results.map((r) => r.stats.shared?.mode).join(', '));
    check(`malformed (${label}): the key is left as it was`, left === value, String(left).slice(0, 80));
  }
}

// ---------------- main ----------------
runMain('fleet-redis', async () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const server = await startFaultServer(OUT);
  const dir = path.join(OUT, 'redis');
  const port = await freePort();
  const ctx = { server, dir, port, redisUrl: `redis://127.0.0.1:${port}`, proc: await startRedis(dir, port) };
  ctx.redis = await createClient({ url: ctx.redisUrl, socket: { reconnectStrategy: () => 100 } }).on('error', () => {}).connect();
  ctx.redisBudget = (await import('../../js/src/redis.js')).redisBudget;
  note(`fault server ${server.url}, redis-server ${ctx.redisUrl} (${(await ctx.redis.info('server')).match(/redis_version:(\S+)/)?.[1]})`);
  let killed = null;
  const want = (name) => !filter || name.includes(filter);
  if (want('killed')) {
    try { killed = await killedStart(ctx); } catch (e) { check('killed', false, `threw: ${e.stack ?? e}`); }
  }
  // The killed instance's check comes before the cases that restart Redis
  // without persistence (they would wipe the state it looks at).
  const killedEnd = async () => killed && killedCheck(ctx, killed);
  const cases = { malformed, outage, rate, cold, killedEnd, stopped, restart };
  for (const [name, fn] of Object.entries(cases)) {
    if (!want(name) && name !== 'killedEnd') continue;
    if (Date.now() > deadline) { check(name, false, 'not run: the tier\'s deadline passed'); continue; }
    note(`case ${name}`);
    try {
      await fn(ctx);
    } catch (e) {
      check(name, false, `threw: ${e.stack ?? e}`);
    }
  }
  ctx.redis.destroy();
  await killRedis(ctx.proc);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
});
