// `node bench/redis.mjs` (part of `make bench`): what a Redis budget
// (`saferetry/redis`, issue #30) costs, in Node, against a redis-server this
// script starts on 127.0.0.1 (Debian's package) and stops. Figures, not
// pass/fail. Prints
//  1. one exchange (a lease request → its grant): Redis round trips and
//     commands per grant, median and p90 ms, with node-redis and ioredis;
//     beside it, the same grant decided in process by `BudgetAuthority` (the
//     Durable Object's own work, without its RPC);
//  2. the success path: a policy with a Redis `shared` budget against the
//     same policy without one, interleaved in rounds on loopback (median µs
//     per request), and the round trips to Redis per operation;
//  3. contention: K clients (each its own connection) asking at once, 100
//     grants each: conflicts (compare-and-set retries) per grant, round
//     trips per grant and the median exchange time;
//  4. the commands alone, the design's choice: the compare-and-set (read
//     pipelined, then the script) against WATCH/MULTI/EXEC on a dedicated
//     connection, with a state of a real budget's size;
//  5. the first second and a restart (issue 38): four Node processes (two
//     node-redis, two ioredis; tests/fleet/redis-instance.mjs) sharing
//     R = 50 starts a second, started together on a fresh budget name, and
//     Redis killed mid-run and started again 0.6 s later: the worst 1 s
//     window as the server saw the starts, as the policies made them, and
//     of the slots the authority handed out, in the processes' clocks.
//     `node bench/redis.mjs first-second` runs this section alone;
//     BENCH_REDIS_BUSY=n runs it beside n processes that keep a core busy
//     (each stops by itself after 3 minutes): a loaded machine, where
//     event loops stall and timers fire late.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Redis from "ioredis";
import { createClient } from "redis";
import { BudgetAuthority, RetryPolicy } from "../js/src/node.js";
import { redisBudget } from "../js/src/redis.js";
import { maxInWindow } from "../tests/fleet/measure.mjs";
import { freePort } from "../tests/runtimes/port.mjs";
import { interleaved, median } from "./cpu.mjs";

const port = await freePort();
const dir = mkdtempSync(path.join(tmpdir(), "saferetry-redis-bench-"));
const startRedis = () => spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"], { stdio: "ignore" });
let server = startRedis();
const url = `redis://127.0.0.1:${port}`;
const connect = async (kind) => {
  if (kind === "ioredis") {
    const c = new Redis(url).on("error", () => {});
    await c.ping();
    return { client: c, close: () => c.disconnect() };
  }
  const c = createClient({ url }).on("error", () => {});
  await c.connect();
  return { client: c, close: () => c.destroy() };
};
for (let i = 0; i < 100; i++) { // bounded: redis-server up within 5 s
  try { (await connect("node-redis")).close(); break; } catch { await sleep(50); }
}
const admin = (await connect("node-redis")).client;
const finish = () => {
  admin.destroy();
  server.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
};
if (process.argv[2] === "first-second") {
  await firstSecond();
  finish();
  process.exit(0);
}
const commands = async () => {
  const text = await admin.info("commandstats");
  const calls = (cmd) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(text)?.[1] ?? 0);
  return { reads: calls("time"), writes: calls("eval"), all: [...text.matchAll(/calls=(\d+)/g)].reduce((s, m) => s + Number(m[1]), 0) };
};

const CONFIG = { quota: { capacity: 500, retryCost: 5, timeoutCost: 10, successRefund: 1 }, rate: { requests: 100_000, perMs: 1000, burst: 1000 } };
const request = (client, seq) => ({ client, seq, wantTokens: 20, holdingTokens: 0, returnedTotal: 0, refundedTotal: 0, wantSlots: 32, config: CONFIG });
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

console.log("## Redis budgets: one exchange (Node, redis-server on loopback)\n");
console.log("500 sequential exchanges of one client (a lease request → its grant), after 50 to warm up.\n");
console.log("| carrier | Redis round trips / grant | commands / grant (Redis's count) | median ms | p90 ms |");
console.log("|---|---:|---:|---:|---:|");
for (const kind of ["node-redis", "ioredis"]) {
  const { client, close } = await connect(kind);
  const budget = redisBudget(client, `bench-${kind}-${Math.random()}`);
  let seq = 0;
  for (let i = 0; i < 50; i++) await budget.exchange(request(1, ++seq));
  await admin.configResetStat();
  const times = [];
  for (let i = 0; i < 500; i++) {
    const t0 = process.hrtime.bigint();
    await budget.exchange(request(1, ++seq));
    times.push(ms(t0));
  }
  const c = await commands();
  // INFO itself is one command; GET and SET inside the script are counted too.
  console.log(`| redisBudget, ${kind} | ${((c.reads + c.writes) / 500).toFixed(2)} | ${((c.all - 1) / 500).toFixed(2)} | ${median(times).toFixed(3)} | ${pct(times, 0.9).toFixed(3)} |`);
  close();
}
{
  const authority = new BudgetAuthority();
  let seq = 0;
  for (let i = 0; i < 50; i++) authority.grant(request(1, ++seq));
  const times = [];
  for (let i = 0; i < 500; i++) {
    const t0 = process.hrtime.bigint();
    authority.grant(request(1, ++seq));
    times.push(ms(t0));
  }
  console.log(`| BudgetAuthority.grant in process (a Durable Object's work, without its RPC) | — | — | ${median(times).toFixed(3)} | ${pct(times, 0.9).toFixed(3)} |`);
}

// ---- the success path ----
const http200 = http.createServer((req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": 11 });
  res.end('{"ok":true}');
});
http200.keepAliveTimeout = 60_000;
await new Promise((r) => http200.listen(0, "127.0.0.1", r));
const target = `http://127.0.0.1:${http200.address().port}/`;
console.log("\n## Redis budgets: success path (Node, loopback)\n");
console.log("Median µs per request, a policy without and with a Redis `shared` budget, interleaved in 20 rounds of 100;");
console.log("round trips to Redis per operation from Redis's own count (each grant: one read, one write).\n");
console.log("| policy | carrier | without / with `shared` µs | added | grants / operation | Redis round trips / operation |");
console.log("|---|---|---:|---:|---:|---:|");
for (const [label, options] of [
  ["default quota", {}],
  ["quota + rate 100 000/s, burst 1000", { rate: { requests: 100_000, burst: 1000 } }],
]) {
  for (const kind of ["node-redis", "ioredis"]) {
    const { client, close } = await connect(kind);
    const local = new RetryPolicy(options);
    const shared = new RetryPolicy({ ...options, shared: redisBudget(client, `bench-path-${Math.random()}`) });
    const sides = { local: async () => (await local.fetch(target)).arrayBuffer(), shared: async () => (await shared.fetch(target)).arrayBuffer() };
    for (let i = 0; i < 200; i++) await sides.shared(); // warm up, and the first grant
    await admin.configResetStat();
    const before = shared.stats();
    const t = await interleaved(sides, { rounds: 20, perRound: 100, warmUp: 0 });
    const c = await commands();
    const after = shared.stats();
    const ops = after.operations - before.operations;
    const grants = after.shared.roundTrips - before.shared.roundTrips;
    const [a, b] = [median(t.local), median(t.shared)];
    console.log(`| ${label} | ${kind} | ${a.toFixed(0)} / ${b.toFixed(0)} | ${(b - a).toFixed(0)} µs (${(((b - a) / a) * 100).toFixed(1)} %) | ${(grants / ops).toFixed(3)} (${grants} / ${ops}) | ${((c.reads + c.writes) / ops).toFixed(3)} |`);
    close();
  }
}
http200.close();

// ---- contention ----
console.log("\n## Redis budgets: contention (Node, ioredis, one connection per client)\n");
console.log("K clients of one budget ask at once, 100 grants each, each asking again as soon as answered.\n");
console.log("| K | grants | conflicts / grant | Redis round trips / grant | median exchange ms | p90 ms | failed exchanges |");
console.log("|---:|---:|---:|---:|---:|---:|---:|");
for (const k of [1, 6, 16]) {
  const name = `bench-contention-${k}-${Math.random()}`;
  const conns = await Promise.all(Array.from({ length: k }, () => connect("ioredis")));
  await admin.configResetStat();
  const times = [];
  let failed = 0;
  await Promise.all(conns.map(async ({ client }, i) => {
    const budget = redisBudget(client, name);
    for (let seq = 1; seq <= 100; seq++) {
      const t0 = process.hrtime.bigint();
      try { await budget.exchange(request(i + 1, seq)); } catch { failed += 1; }
      times.push(ms(t0));
    }
  }));
  const c = await commands();
  const grants = JSON.parse(await admin.get(`saferetry:budget:${name}`)).stats.requests;
  console.log(`| ${k} | ${grants} | ${((c.writes - grants) / grants).toFixed(2)} | ${((c.reads + c.writes) / grants).toFixed(2)} | ${median(times).toFixed(2)} | ${pct(times, 0.9).toFixed(2)} | ${failed} |`);
  for (const c of conns) c.close();
}

// ---- the commands alone: compare-and-set against WATCH/MULTI ----
console.log("\n## Redis budgets: compare-and-set against WATCH/MULTI (ioredis, the commands alone)\n");
console.log("1000 sequential read–write cycles of one client on a 1.6 KB value (six clients' state), no decision in between.\n");
console.log("| write | round trips / cycle | median ms | p90 ms | connection |");
console.log("|---|---:|---:|---:|---|");
{
  const SWAP = "if (redis.call('GET', KEYS[1]) or '') == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0";
  const { client, close } = await connect("ioredis");
  const value = (i) => JSON.stringify({ i, pad: "x".repeat(1600) });
  const cycle = {
    "compare-and-set (EVAL)": async (key, i) => {
      const [[, old]] = await client.pipeline().get(key).time().exec();
      await client.eval(SWAP, 1, key, old ?? "", value(i));
    },
    "WATCH, GET + TIME, MULTI/SET/EXEC": async (key, i) => {
      await client.pipeline().watch(key).get(key).time().exec();
      await client.multi().set(key, value(i)).exec();
    },
  };
  for (const [label, run] of Object.entries(cycle)) {
    const key = `bench-cycle-${Math.random()}`;
    for (let i = 0; i < 100; i++) await run(key, i);
    const times = [];
    for (let i = 0; i < 1000; i++) {
      const t0 = process.hrtime.bigint();
      await run(key, i);
      times.push(ms(t0));
    }
    const conn = label.startsWith("WATCH") ? "its own: a WATCH is per connection, so every concurrent exchange needs one" : "the caller's, shared";
    console.log(`| ${label} | 2 | ${median(times).toFixed(3)} | ${pct(times, 0.9).toFixed(3)} | ${conn} |`);
  }
  close();
}

await firstSecond();
finish();

// ---- the first second and a restart ----
async function firstSecond() {
  const R = 50, K = 4, RUNS = Number(process.env.BENCH_REDIS_RUNS ?? 3);
  const busy = Array.from({ length: Number(process.env.BENCH_REDIS_BUSY ?? 0) }, () =>
    spawn(process.execPath, ["-e", "const end = Date.now() + 180000; while (Date.now() < end);"], { stdio: "ignore" }));
  const instance = new URL("../tests/fleet/redis-instance.mjs", import.meta.url).pathname;
  let arrivals = [];
  const target = http.createServer((req, res) => {
    arrivals.push(Date.now());
    res.writeHead(200, { "content-length": 2 });
    res.end("ok");
  });
  target.keepAliveTimeout = 60_000;
  await new Promise((r) => target.listen(0, "127.0.0.1", r));
  const run = async (restart) => {
    arrivals = [];
    const name = `bench-first-${Math.random()}`;
    const stopFile = path.join(dir, `stop-${Math.random()}`);
    const spec = (i) => ({
      redisUrl: url, client: i % 2 ? "ioredis" : "node-redis", mode: "shared", name, fleetSize: K,
      url: `http://127.0.0.1:${target.address().port}/`, n: 1e6, durationMs: 20_000, concurrency: 8, stopFile,
      options: { maxAttempts: 2, totalMs: 2_000, attemptMs: 2_000, baseMs: 1, capMs: 4, rate: { requests: R } },
    });
    const procs = Array.from({ length: K }, (_, i) => {
      const child = spawn(process.execPath, [instance, JSON.stringify(spec(i))], { stdio: ["ignore", "pipe", "inherit"] });
      const p = { out: "", child };
      child.stdout.setEncoding("utf8").on("data", (d) => { p.out += d; });
      p.exited = new Promise((r) => child.once("close", r));
      return p;
    });
    let from = 0;
    const until = Date.now() + 20_000;
    while (!procs.every((p) => p.out.includes("leased")) && Date.now() < until) await sleep(20); // bounded
    if (restart) {
      await sleep(1_000);
      from = Date.now() - 1_000; // every window the restart touches
      server.kill("SIGKILL");
      await sleep(600);
      server = startRedis();
      await sleep(3_000);
    } else {
      await sleep(3_000);
    }
    writeFileSync(stopFile, "");
    await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(10_000)]);
    for (const p of procs) p.child.kill("SIGKILL");
    const results = procs.map((p) => JSON.parse(p.out.trim().split("\n").at(-1)));
    const after = (ts) => ts.filter((t) => t >= from).sort((a, b) => a - b);
    const slots = results.flatMap((r) => r.runs.flatMap(([first, last, n]) =>
      Array.from({ length: n }, (_, i) => (n < 2 ? first : first + Math.ceil(((last - first) * i) / (n - 1))))));
    const sum = (key) => results.reduce((s, r) => s + (r.stats.shared?.[key] ?? 0), 0);
    const starts = after(arrivals);
    return {
      first: restart ? "—" : starts.filter((t) => t < starts[0] + 1000).length,
      arrived: maxInWindow(starts), started: maxInWindow(after(results.flatMap((r) => r.calls))),
      slots: maxInWindow(after(slots)),
      late: "lateStarts" in (results[0].stats.shared ?? {}) ? `${sum("lateStarts")} / ${sum("slotsMissed")}` : "—",
      local: sum("localStarts"), unreachable: sum("unreachable"),
      queued: results.reduce((s, r) => s + (r.statuses["queue-exceeds-budget"] ?? 0), 0),
      ops: results.reduce((s, r) => s + r.ops, 0),
    };
  };
  console.log(`\n## Redis budgets: the first second and a restart (${K} Node processes, R = ${R}/s)\n`);
  console.log(`${K} processes (node-redis and ioredis alternately), 8 loops each against a 200 on loopback, one fresh budget name a run.`);
  console.log("Worst 1 s window: of the starts as the server saw them, as the policies made them (when they called fetch),");
  console.log("and of the slots the authority handed out (in the processes' clocks); cold: from the start, restart: from 1 s");
  console.log("before Redis was killed (down 0.6 s, no persistence) on. Late starts / slots missed, local starts (before a first");
  console.log("answer, borrowed, or cut off), exchanges failed, operations that waited past totalMs (queue-exceeds-budget),");
  console.log(`and the machine's load average (1 min) as the run ended${busy.length ? `; ${busy.length} busy processes beside` : ""}.\n`);
  console.log("| run | case | first second | worst 1 s, arrived | as started | slots handed out | late starts / slots missed | local starts | exchanges failed | queue-exceeds-budget / operations | load |");
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (let i = 1; i <= RUNS; i++) {
    for (const restart of [false, true]) {
      const r = await run(restart);
      console.log(`| ${i} | ${restart ? "restart" : "cold"} | ${r.first} | ${r.arrived} | ${r.started} | ${r.slots} | ${r.late} | ${r.local} | ${r.unreachable} | ${r.queued} / ${r.ops} | ${loadavg()[0].toFixed(1)} |`);
    }
  }
  target.close();
  for (const b of busy) b.kill("SIGKILL");
}
