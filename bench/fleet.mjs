// `node bench/fleet.mjs` (part of `make bench`): shared budgets (issue #12)
// in Node, on loopback, figures not pass/fail. Prints
//  1. success-path latency with a shared budget against the same policy
//     without one, interleaved in rounds (median µs per request, ratio), and
//     the authority round trips per operation — the exchange goes through a
//     `setTimeout` of RTT_MS, as a Durable Object call would;
//  2. fleet amplification: K policies against a server failing everything,
//     sharing one authority vs each with its own budget (requests per
//     operation, whole run and once the quota drained);
//  3. a shared start rate: the most starts the server saw in any 1 s window,
//     shared vs per policy.
// The workerd figures (separate isolates, a real Durable Object) are printed
// by the `fleet-workerd` test tier.
import http from "node:http";
import { BudgetAuthority, RetryPolicy } from "../js/src/node.js";
import { interleaved, median, withStub } from "./cpu.mjs";

const RTT_MS = Number(process.env.BENCH_RTT_MS ?? 2);
const ROUNDS = 20;
const PER_ROUND = 100;

const starts = [];
const server = http.createServer((req, res) => {
  starts.push(Date.now());
  const ok = !req.url.startsWith("/fail");
  res.writeHead(ok ? 200 : 503, { "content-type": "application/json", "content-length": 11 });
  res.end('{"ok":true}');
});
server.keepAliveTimeout = 60_000;
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/`;

/** A carrier like a Durable Object stub: every exchange takes RTT_MS. */
const carrier = (authority, rttMs = RTT_MS) => ({
  scope: "bench",
  exchange: (request) => new Promise((resolve) => setTimeout(() => resolve(authority.grant(request)), rttMs)),
});

console.log(`## Shared budgets: success path (Node, exchange RTT ${RTT_MS} ms)\n`);
console.log("Loopback: median µs per request, both policies interleaved in rounds, the exchange taking RTT.");
console.log("CPU: the same with `fetch` stubbed (no network) and the exchange answered at once by an");
console.log("authority in this process (its work included; in a fleet it runs in the Durable Object), so the");
console.log("difference is what the shared budget costs per call; 'added' is that over the loopback request.\n");
console.log("| policy | loopback without / with `shared` µs | CPU without / with µs | added | round trips / operation |");
console.log("|---|---:|---:|---:|---:|");
for (const [label, options] of [
  ["default quota", {}],
  // A rate that never binds here (burst 1000), so both sides measure the bookkeeping.
  ["quota + rate 100 000/s, burst 1000", { rate: { requests: 100_000, burst: 1000 } }],
]) {
  const local = new RetryPolicy(options);
  const shared = new RetryPolicy({ ...options, shared: carrier(new BudgetAuthority()) });
  const authority = new BudgetAuthority();
  const atOnce = new RetryPolicy({ ...options, shared: { exchange: (request) => authority.grant(request) } });
  const sides = (target, withShared) => ({
    local: async () => (await local.fetch(target)).arrayBuffer(),
    shared: async () => (await withShared.fetch(target)).arrayBuffer(),
  });
  const net = await interleaved(sides(url, shared), { rounds: ROUNDS, perRound: PER_ROUND, warmUp: 200 });
  const stubbed = sides("http://127.0.0.1:9/", atOnce);
  const cpu = await withStub(() => interleaved(stubbed, { rounds: ROUNDS, perRound: 500, warmUp: 500 }));
  const [a, b] = [median(net.local), median(net.shared)];
  const [ca, cb] = [median(cpu.local), median(cpu.shared)];
  const s = shared.stats();
  const perOp = s.shared.roundTrips / s.operations;
  const added = `${(cb - ca).toFixed(1)} µs = ${(((cb - ca) / a) * 100).toFixed(1)} %`;
  console.log(`| ${label} | ${a.toFixed(0)} / ${b.toFixed(0)} | ${ca.toFixed(1)} / ${cb.toFixed(1)} | ${added} | ${perOp.toFixed(3)} (${s.shared.roundTrips} / ${s.operations}) |`);
}

/** K policies, with one shared authority or each its own budget. */
function policiesOf(k, options, sharedBudget) {
  const authority = new BudgetAuthority();
  const shared = () => (sharedBudget ? { shared: carrier(authority) } : {});
  return Array.from({ length: k }, () => new RetryPolicy({ baseMs: 0, capMs: 1, ...options, ...shared() }));
}

/** Operations `from`..`to` of every policy, run concurrently (one after another within a policy). */
const drive = (policies, path, from, to) => Promise.all(policies.map(async (p, i) => {
  for (let n = from; n < to; n++) await (await p.fetch(`${url}${path}?p=${i}&n=${n}`)).arrayBuffer();
}));

const K = 4;
const OPS = 250;
const DRAINED = 100; // operations per policy after which the quota is empty
console.log(`\n## Fleet amplification: ${K} policies × ${OPS} operations against a server failing everything\n`);
console.log("(default quota: 500 tokens, 5 a retry; maxAttempts 3)\n");
console.log(`| budgets | requests | per operation | per operation after the first ${DRAINED} | authority round trips / operation |`);
console.log("|---|---:|---:|---:|---:|");
for (const sharedBudget of [false, true]) {
  // What the quota alone bounds: adaptive throttling, on by default, would
  // refuse most first attempts here (its own figures: tests/fleet/
  // throttle.mjs, BENCHMARKS.md "Adaptive throttling in an outage").
  const policies = policiesOf(K, { throttle: false }, sharedBudget);
  starts.length = 0;
  await drive(policies, "fail", 0, DRAINED);
  const drained = starts.length;
  await drive(policies, "fail", DRAINED, OPS);
  const total = starts.length;
  const retries = policies.reduce((sum, p) => sum + p.stats().retries, 0);
  const label = sharedBudget ? "one shared authority" : "per policy";
  const after = ((total - drained) / (K * (OPS - DRAINED))).toFixed(3);
  const trips = policies.reduce((sum, p) => sum + (p.stats().shared?.roundTrips ?? 0), 0);
  const perOp = sharedBudget ? `${(trips / (K * OPS)).toFixed(3)} (${trips})` : "—";
  console.log(`| ${label} | ${total} (${retries} retries) | ${(total / (K * OPS)).toFixed(3)} | ${after} | ${perOp} |`);
}

const R = 100;
console.log(`\n## A shared start rate: ${K} policies × 100 operations, rate ${R}/s\n`);
console.log("| budgets | most starts in any 1 s | duration |");
console.log("|---|---:|---:|");
for (const sharedBudget of [false, true]) {
  const policies = policiesOf(K, { rate: { requests: R }, totalMs: 60_000 }, sharedBudget);
  starts.length = 0;
  const t0 = Date.now();
  await drive(policies, "", 0, 100);
  const ms = Date.now() - t0;
  const s = [...starts].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[i] - s[j] >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  console.log(`| ${sharedBudget ? "one shared authority" : "per policy"} | ${most} | ${(ms / 1000).toFixed(1)} s |`);
}

server.close();
