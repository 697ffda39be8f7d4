// The throttle tier (issue 39 item 4): adaptive throttling shared by a
// fleet, measured beside what a fleet has without it and beside two
// libraries' answers, in three carriers, on one loopback upstream
// this tier serves (tests/fleet/throttle-carriers.mjs starts the rest):
//   node      Node processes on `redisBudget` (a real redis-server)
//   workerd   Worker isolates in workerd on `durableBudget` (the authority
//             in a real Durable Object)
//   chromium  Chromium windows on `tabBudget` (the authority in the leader tab)
//
//   node tests/fleet/throttle.mjs [node] [workerd] [chromium]   (all three by default)
//
// Every variant runs for 46 s as 3 clients each starting one operation
// every 50 ms (60 a second between them), on a path of its own
// (steady.mjs: the same load in every carrier):
//   throttle     saferetry on the carrier's shared budget, throttling on (the default)
//   today        the same with `throttle: false`
//   random       as `throttle`, against an upstream failing 30 % at random
//   cockatiel    (node only) cockatiel's circuit breaker (5 consecutive failures, half-open after 10 s)
//   aws          (node only) a hand-written AWS-SDK-style adaptive limiter (tests/fleet/throttle-client.mjs)
// A Node client is a process per variant; a Worker isolate or a tab is one
// client of each of its carrier's three variants (three policies, on three
// budget names). The upstream answers 200, except from 2 s to 32 s (the
// issue's 30 s outage: 503 to every path but the `random` ones), and the
// `random` paths' 503 to 30 % of requests throughout. Two windows of
// 46 s, the same schedule in each: the Node processes' variants at once
// (as before the other carriers came), then workerd's and Chromium's at
// once. All eleven at once, 660 operations a second, were more than this
// machine's two shared cores start on time (measured: a third of the
// load in the first seconds, operations past their deadline); a shorter
// outage would not be the issue's. The tier takes ~112 s (workerd's
// Wrangler build and Chromium's launch between the windows).
//
// Printed: per carrier and variant, the requests that reached the upstream
// during the outage (and as a share of the carrier's `today`; of which
// first attempts and the retries of those operations), operations past
// their deadline, and how long after the outage traffic was back to ≥ 95 %
// of the offered load (the first 1 s window, sliding by 250 ms, where the
// upstream received ≥ 95 % of the operations started); for `random`, the
// share of operations whose call went out (not throttled); the requests
// reaching the upstream in each second. Asserted per carrier only on
// generous bounds that hold by construction (the figures are printed):
// throttling keeps at least half of `today`'s outage requests away; every
// saferetry operation ends by its deadline (+ 100 ms, + how late the load's
// own timers fired meanwhile: `pastDeadline`); after the outage calls go out
// again and succeed; with 30 % random failures at least 80 % of calls go
// out. When traffic is back to 95 % is printed, not asserted: it is not a
// bound by construction. The rule rejects at most 97 % of the calls, so
// 3 % go out as probes (about 2 a second at this load): the upstream's
// return is seen at once, and each accept then lets ~2 more through a
// window (1.5 s) (measured: 4.0 to 6.25 s over three runs; 3.5 to 12.5 s
// before the cap, when about one probe a second went out and the growth
// could die out; virtual time, tests/fleet_throttle.rs: at most 8 s in
// 100 seeded runs). Then "N passed, M failed". Every process started here
// is killed at the end; every wait is bounded.
import http from 'node:http';
import { runMain } from '../runtimes/procs.mjs';
import { chromiumCarrier, nodeCarrier, workerdCarrier } from './throttle-carriers.mjs';
import { lagDuring } from '../../www/several.js';

const RUN_BUDGET_MS = 170_000; // the whole tier, hard stop for every wait below
const t00 = Date.now();
const deadline = t00 + RUN_BUDGET_MS;
const note = (line) => process.stderr.write(`[throttle ${((Date.now() - t00) / 1000).toFixed(1)} s] ${line}\n`);

const CLIENTS = 3; // per variant
const EVERY_MS = 50;
const TOTAL_MS = 2_000; // each operation's deadline
const OUTAGE = [2_000, 32_000]; // ms after t0
const DURATION_MS = 46_000;
const AFTER_MS = DURATION_MS - OUTAGE[1];
const SAFERETRY = [['throttle', {}], ['today', { throttle: false }], ['random', {}]];
// startMs: from the carrier's `run` to its clients' t0 (a Node process
// loads its modules and connects; a Worker or a tab is sent its spec).
const CARRIERS = {
  node: { label: 'Node processes, redisBudget', make: () => nodeCarrier(), startMs: 8_000, more: [['cockatiel', 'cockatiel'], ['aws', 'aws']] },
  workerd: { label: 'workerd isolates, durableBudget', make: () => workerdCarrier({ k: CLIENTS, upstreamUrl: up.url }), startMs: 3_000 },
  chromium: { label: 'Chromium tabs, tabBudget', make: () => chromiumCarrier({ k: CLIENTS }), startMs: 3_000 },
};
// The two windows, one after the other (above: why not one).
const PHASES = [['node'], ['workerd', 'chromium']];
const asked = process.argv.slice(2);
const carriers = asked.length ? asked : Object.keys(CARRIERS);
const VARIANTS = carriers.flatMap((carrier) => [
  ...SAFERETRY.map(([name, options]) => ({ carrier, name, kind: 'saferetry', options })),
  ...(CARRIERS[carrier]?.more ?? []).map(([name, kind]) => ({ carrier, name, kind })),
]).map((v) => ({ ...v, key: `${v.carrier}-${v.name}` }));
let up; // the upstream, once it listens

let passed = 0;
let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${what}`);
  if (ok) passed += 1;
  else failed += 1;
};

/** The upstream: arrivals per path, in ms after its window's `t0` (set
 * when the load starts). CORS-open: the tabs' pages come from another origin. */
function upstream() {
  const arrivals = Object.fromEntries(VARIANTS.map((v) => [v.key, []]));
  const t0 = {}; // per key: its window's
  const server = http.createServer((req, res) => {
    const key = req.url.split('/')[1];
    const at = Date.now() - (t0[key] ?? Infinity);
    arrivals[key]?.push(at);
    const down = key.endsWith('-random') ? Math.random() < 0.3 : at >= OUTAGE[0] && at < OUTAGE[1];
    res.writeHead(down ? 503 : 200, { 'content-type': 'text/plain', connection: 'keep-alive', 'access-control-allow-origin': '*' });
    res.end(down ? 'down' : 'ok');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, arrivals, t0, url: `http://127.0.0.1:${server.address().port}` })));
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

/** Of `ops`, those that ran over `TOTAL_MS` + 100 ms (`over`), and of
 * those the ones past their deadline (`late`): over it by more than how
 * late the same load's timers fired while it ran (`lagDuring`, the demo's
 * count too). A host too busy to run a timer on time runs the deadline's
 * late too: a fresh-clone run had 1–10 operations a variant 100 ms past
 * it in workerd and Chromium, beside the Rust lane's tiers, in every
 * variant alike (`today`'s too). */
function pastDeadline(ops) {
  const over = ops.filter((o) => o[1] > TOTAL_MS + 100);
  return { over: over.length, late: over.filter((o) => o[1] > TOTAL_MS + 100 + lagDuring(ops, o, EVERY_MS)).length };
}

/** One window of the load: `these` carriers set up, then run at once from
 * one `t0`; their operations go into `results`, each closed at the end.
 * Resolves with the carriers that ran. */
async function loadWindow(these, results) {
  const made = Object.fromEntries(these.map((c) => [c, CARRIERS[c].make()]));
  const ready = [];
  for (const c of these) { // one at a time: Wrangler's build blocks this process
    try {
      note(`${c}: ${await made[c].prepare()}`);
      ready.push(c);
    } catch (e) {
      check(false, `${c}: the carrier is set up (${e.stack ?? e})`);
    }
  }
  const t0 = Date.now() + Math.max(...ready.map((c) => CARRIERS[c].startMs), 0); // every client ready by then
  const jobs = (carrier) => VARIANTS.filter((v) => v.carrier === carrier).flatMap((v) => Array.from({ length: CLIENTS }, (_, client) => ({
    key: v.key, client, spec: {
      kind: v.kind, options: v.options, name: `throttle-tier-${v.key}`, fleetSize: CLIENTS, url: `${up.url}/${v.key}/${client}`,
      t0, durationMs: DURATION_MS, everyMs: EVERY_MS, totalMs: TOTAL_MS,
    },
  })));
  for (const v of VARIANTS) if (ready.includes(v.carrier)) up.t0[v.key] = t0;
  note(`${ready.join(', ')}: the load starts in ${t0 - Date.now()} ms`);
  const ran = [];
  await Promise.all(ready.map(async (c) => {
    try {
      const r = await made[c].run(jobs(c), deadline);
      if (r.note) note(`${c}: ${r.note}`);
      Object.assign(results, r.ops);
      ran.push(c);
    } catch (e) {
      check(false, `${c}: every client ran its load (${e.stack ?? e})`);
    }
  }));
  for (const c of these) await made[c].close();
  return ran;
}

async function main() {
  const unknown = carriers.filter((c) => !CARRIERS[c]);
  if (unknown.length) {
    console.error(`unknown carrier ${unknown.join(', ')} (want ${Object.keys(CARRIERS).join(' | ')})`);
    return 2;
  }
  up = await upstream();
  note(`upstream ${up.url}`);
  const results = {};
  const ready = [];
  for (const phase of PHASES) {
    const these = phase.filter((c) => carriers.includes(c));
    if (these.length) ready.push(...await loadWindow(these, results));
  }
  up.server.close();
  up.server.closeAllConnections?.();
  if (!ready.length) return 1;
  const shown = VARIANTS.filter((v) => ready.includes(v.carrier)); // in the carriers' order

  console.log(`\n${CLIENTS} clients per variant, one operation every ${EVERY_MS} ms each (${(CLIENTS * 1000) / EVERY_MS}/s); upstream down from ${OUTAGE[0] / 1000} s to ${OUTAGE[1] / 1000} s of ${DURATION_MS / 1000} s; deadline ${TOTAL_MS} ms`);
  console.log('| carrier | variant | offered in the outage | reached the upstream in the outage | vs today | of which: first attempts + retries of those operations | past deadline | back to 95 % after the outage | outcomes |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---|');
  const figures = {};
  for (const v of shown) {
    const ops = results[v.key] ?? [];
    const starts = ops.map((o) => o[0]);
    const arrivals = up.arrivals[v.key];
    const outcomes = ops.reduce((m, o) => ({ ...m, [o[2]]: (m[o[2]] ?? 0) + 1 }), {});
    figures[v.key] = {
      offered: count(starts, ...OUTAGE),
      // The operations started in the outage: first attempts sent, retries.
      first: ops.filter((o) => o[0] >= OUTAGE[0] && o[0] < OUTAGE[1] && o[3] > 0).length,
      retries: ops.filter((o) => o[0] >= OUTAGE[0] && o[0] < OUTAGE[1]).reduce((n, o) => n + Math.max(0, o[3] - 1), 0),
      reached: count(arrivals, ...OUTAGE),
      ...pastDeadline(ops),
      lag: Math.max(0, ...ops.map((o) => o[4])),
      back: recovery(arrivals, starts),
      okAfter: ops.filter((o) => o[0] >= OUTAGE[1] && o[2] === 'ok').length,
      outcomes,
      ops: ops.length,
      out: ops.length ? 1 - (outcomes.throttled ?? 0) / ops.length : 0, // calls not throttled
    };
  }
  const today = (v) => figures[`${v.carrier}-today`];
  for (const v of shown) {
    const f = figures[v.key];
    const share = v.name === 'random' ? '' : `${((100 * f.reached) / today(v).reached).toFixed(1)} %`;
    const back = v.name === 'random' ? '' : f.back === null ? `not within ${AFTER_MS / 1000} s` : `${(f.back / 1000).toFixed(2)} s`;
    console.log(`| ${CARRIERS[v.carrier].label} | ${v.name} | ${f.offered} | ${f.reached} | ${share} | ${f.first} + ${f.retries} | ${f.late} (${f.over - f.late} more within the timers' lag, up to ${f.lag} ms) | ${back} | ${JSON.stringify(f.outcomes)} |`);
  }
  console.log('\nrequests reaching the upstream, per second:');
  for (const v of shown) console.log(`${v.key.padEnd(18)} ${Array.from({ length: DURATION_MS / 1000 }, (_, i) => count(up.arrivals[v.key], i * 1000, i * 1000 + 1000)).join(' ')}`);
  console.log('\n30 % of requests fail at random (not an outage):');
  for (const c of carriers.filter((x) => ready.includes(x))) {
    const r = figures[`${c}-random`];
    console.log(`${CARRIERS[c].label}: ${(100 * r.out).toFixed(2)} % of ${r.ops} calls went out, ${r.outcomes.throttled ?? 0} throttled`);
  }
  console.log('');

  for (const c of carriers.filter((x) => ready.includes(x))) {
    const [throttle, off, random] = SAFERETRY.map(([name]) => figures[`${c}-${name}`]);
    const L = CARRIERS[c].label;
    check(throttle.ops > 0 && off.ops > 0 && random.ops > 0, `${L}: the saferetry variants ran their operations`);
    check(throttle.reached <= 0.5 * off.reached, `${L}: throttling keeps at least half of today's outage requests away (${throttle.reached} vs ${off.reached})`);
    check(throttle.late === 0 && off.late === 0 && random.late === 0, `${L}: every saferetry operation ends by its deadline (${throttle.late}, ${off.late}, ${random.late} late)`);
    check(throttle.okAfter > 0, `${L}: after the outage, calls go out again and succeed (${throttle.okAfter} ok; back to 95 % of the offered load ${throttle.back === null ? `not within ${AFTER_MS / 1000} s` : `in ${throttle.back} ms`})`);
    check(random.out >= 0.8, `${L}: with 30 % random failures at least 80 % of calls go out (${(100 * random.out).toFixed(2)} %)`);
    check((throttle.outcomes.throttled ?? 0) > 0, `${L}: the shared budget throttled (reason "throttled")`);
  }
  console.log(`${passed} passed, ${failed} failed (${((Date.now() - t00) / 1000).toFixed(1)} s)`);
  return failed ? 1 : 0;
}

runMain('throttle', main);
