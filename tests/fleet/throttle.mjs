// The throttle tier (issue 39 item 4): adaptive throttling shared through
// Redis, measured beside what a fleet has without it and beside two
// libraries' answers, on one loopback upstream this tier serves and a real
// `redis-server` it starts (tests/fleet/redis-server.mjs) and kills.
//
//   node tests/fleet/throttle.mjs
//
// Every variant runs at once, for the same 46 s, as 3 Node processes each
// starting one operation every 50 ms (60 a second between them), on a
// path of its own:
//   throttle     saferetry, `redisBudget`, throttling on (the default)
//   today        saferetry, `redisBudget`, `throttle: false`
//   cockatiel    cockatiel's circuit breaker (5 consecutive failures, half-open after 10 s)
//   aws          a hand-written AWS-SDK-style adaptive limiter (tests/fleet/throttle-client.mjs)
//   random       saferetry as `throttle`, against an upstream failing 30 % at random
// The upstream answers 200, except from 2 s to 32 s (the 30 s outage: 503 to
// every path but `random`'s), and `random`'s 503 to 30 % of requests
// throughout.
//
// Printed: per variant, the requests that reached the upstream during the
// outage (and as a share of `today`'s; of which first attempts and the
// retries of those operations), operations past their deadline,
// and how long after the outage traffic was back to ≥ 95 % of the offered
// load (the first 1 s window, sliding by 250 ms, where the upstream
// received ≥ 95 % of the operations started); for `random`, the share of
// operations whose call went out (not throttled); the requests reaching
// the upstream in each second. Asserted only on
// generous bounds that hold by construction (the figures are printed):
// throttling keeps at least half of `today`'s outage requests away; every
// saferetry operation ends by its deadline; traffic is back within the
// 14 s after the outage; with 30 % random failures at least 80 % of calls
// go out. Then "N passed, M failed". Every process started here is killed
// at the end; every wait is bounded.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { runMain, start, waitExit } from '../runtimes/procs.mjs';
import { freePort, killRedis, startRedis } from './redis-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLIENT = path.join(HERE, 'throttle-client.mjs');
const RUN_BUDGET_MS = 85_000; // the whole tier, hard stop for every wait below
const t00 = Date.now();
const deadline = t00 + RUN_BUDGET_MS;
const note = (line) => process.stderr.write(`[throttle ${((Date.now() - t00) / 1000).toFixed(1)} s] ${line}\n`);

const PROCESSES = 3;
const EVERY_MS = 50;
const TOTAL_MS = 2_000; // each operation's deadline
const OUTAGE = [2_000, 32_000]; // ms after t0
const DURATION_MS = 46_000;
const AFTER_MS = DURATION_MS - OUTAGE[1];
const VARIANTS = [
  { name: 'throttle', kind: 'saferetry', options: {} },
  { name: 'today', kind: 'saferetry', options: { throttle: false } },
  { name: 'cockatiel', kind: 'cockatiel' },
  { name: 'aws', kind: 'aws' },
  { name: 'random', kind: 'saferetry', options: {} },
];

let passed = 0;
let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${what}`);
  if (ok) passed += 1;
  else failed += 1;
};

/** The upstream: arrivals per path, in ms after `t0` (set when the load starts). */
function upstream() {
  const arrivals = Object.fromEntries(VARIANTS.map((v) => [v.name, []]));
  const state = { t0: Infinity };
  const server = http.createServer((req, res) => {
    const at = Date.now() - state.t0;
    const name = req.url.split('/')[1];
    arrivals[name]?.push(at);
    const down = name === 'random' ? Math.random() < 0.3 : at >= OUTAGE[0] && at < OUTAGE[1];
    res.writeHead(down ? 503 : 200, { 'content-type': 'text/plain', connection: 'keep-alive' });
    res.end(down ? 'down' : 'ok');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, arrivals, state, port: server.address().port })));
}

const count = (times, from, to) => times.filter((t) => t >= from && t < to).length;

/** ms after the outage until a 1 s window (sliding by 250 ms) in which the
 * upstream received ≥ 95 % of the operations started: that window's end. */
function recovery(arrivals, starts) {
  for (let from = OUTAGE[1]; from + 1_000 <= DURATION_MS; from += 250) {
    const offered = count(starts, from, from + 1_000);
    if (offered > 0 && count(arrivals, from, from + 1_000) >= 0.95 * offered) return from + 1_000 - OUTAGE[1];
  }
  return null;
}

async function main() {
  const dir = path.join(os.tmpdir(), `saferetry-throttle-${process.pid}`);
  const redisPort = await freePort();
  const redis = await startRedis(dir, redisPort);
  const up = await upstream();
  note(`redis on ${redisPort}, upstream on ${up.port}`);
  const t0 = Date.now() + 8_000; // every process ready by then (checked)
  const procs = [];
  for (const v of VARIANTS) {
    for (let i = 0; i < PROCESSES; i++) {
      const spec = {
        kind: v.kind, options: v.options, name: `throttle-tier-${v.name}`, redisUrl: `redis://127.0.0.1:${redisPort}`,
        url: `http://127.0.0.1:${up.port}/${v.name}/${i}`, t0, durationMs: DURATION_MS, everyMs: EVERY_MS, totalMs: TOTAL_MS,
      };
      procs.push({ v, p: start(`${v.name}-${i}`, process.execPath, [CLIENT, JSON.stringify(spec)], { echo: false }) });
    }
  }
  while (Date.now() < t0 && !procs.every(({ p }) => p.lines.includes('ready'))) await sleep(50); // bounded by t0
  const late = procs.filter(({ p }) => !p.lines.includes('ready'));
  if (late.length) {
    check(false, `every client ready before the load starts (late: ${late.map(({ p }) => `${p.name}: ${p.tail}`).join('; ')})`);
    return 1;
  }
  up.state.t0 = t0;
  note('all ready; load starts');
  const results = {};
  for (const { v, p } of procs) {
    await waitExit(p, deadline);
    const line = p.lines.find((l) => l.startsWith('{'));
    if (!line) {
      check(false, `${p.name} printed its operations (${p.tail})`);
      continue;
    }
    const r = (results[v.name] ??= { ops: [] });
    r.ops.push(...JSON.parse(line).ops);
  }
  up.server.close();
  await killRedis(redis);

  console.log(`\n${PROCESSES} processes per variant, one operation every ${EVERY_MS} ms each (${(PROCESSES * 1000) / EVERY_MS}/s); upstream down from ${OUTAGE[0] / 1000} s to ${OUTAGE[1] / 1000} s of ${DURATION_MS / 1000} s; deadline ${TOTAL_MS} ms`);
  console.log('| variant | offered in the outage | reached the upstream in the outage | vs today | of which: first attempts + retries of those operations | past deadline | back to 95 % after the outage | outcomes |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  const figures = {};
  for (const v of VARIANTS) {
    const ops = results[v.name]?.ops ?? [];
    const starts = ops.map((o) => o[0]);
    const arrivals = up.arrivals[v.name];
    const f = {
      offered: count(starts, ...OUTAGE),
      // The operations started in the outage: first attempts sent, retries.
      first: ops.filter((o) => o[0] >= OUTAGE[0] && o[0] < OUTAGE[1] && o[3] > 0).length,
      retries: ops.filter((o) => o[0] >= OUTAGE[0] && o[0] < OUTAGE[1]).reduce((n, o) => n + Math.max(0, o[3] - 1), 0),
      reached: count(arrivals, ...OUTAGE),
      late: ops.filter((o) => o[1] > TOTAL_MS + 100).length,
      back: recovery(arrivals, starts),
      outcomes: ops.reduce((m, o) => ({ ...m, [o[2]]: (m[o[2]] ?? 0) + 1 }), {}),
      ops: ops.length,
    };
    figures[v.name] = f;
  }
  for (const v of VARIANTS) {
    const f = figures[v.name];
    const share = v.name === 'random' ? '' : `${((100 * f.reached) / figures.today.reached).toFixed(1)} %`;
    const back = v.name === 'random' ? '' : f.back === null ? `not within ${AFTER_MS / 1000} s` : `${(f.back / 1000).toFixed(2)} s`;
    console.log(`| ${v.name} | ${f.offered} | ${f.reached} | ${share} | ${f.first} + ${f.retries} | ${f.late} | ${back} | ${JSON.stringify(f.outcomes)} |`);
  }
  console.log('\nrequests reaching the upstream, per second:');
  for (const v of VARIANTS) console.log(`${v.name.padEnd(9)} ${Array.from({ length: DURATION_MS / 1000 }, (_, i) => count(up.arrivals[v.name], i * 1000, i * 1000 + 1000)).join(' ')}`);
  const random = figures.random;
  const out = 1 - (random.outcomes.throttled ?? 0) / random.ops;
  console.log(`\nrandom (30 % of requests fail, not an outage): ${(100 * out).toFixed(2)} % of ${random.ops} calls went out, ${random.outcomes.throttled ?? 0} throttled\n`);

  const { throttle, today } = figures;
  check(throttle.ops > 0 && today.ops > 0, 'both saferetry variants ran their operations');
  check(throttle.reached <= 0.5 * today.reached, `throttling keeps at least half of today's outage requests away (${throttle.reached} vs ${today.reached})`);
  check(throttle.late === 0 && today.late === 0 && random.late === 0, 'every saferetry operation ends by its deadline');
  check(throttle.back !== null, `traffic is back to 95 % of the offered load within the ${AFTER_MS / 1000} s after the outage (${throttle.back} ms)`);
  check(out >= 0.8, `with 30 % random failures at least 80 % of calls go out (${(100 * out).toFixed(2)} %)`);
  check((throttle.outcomes.throttled ?? 0) > 0, 'the shared budget throttled (reason "throttled")');
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

runMain('throttle', main);
