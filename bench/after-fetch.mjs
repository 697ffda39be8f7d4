// How long after the host's `fetch` settles the caller's `await` resumes
// (issue 37: "no extra turns of the event loop between `fetch` settling and
// the caller's await resolving"): saferetry in each body mode beside the
// floor of the same kind (bench/floors.mjs: the streamed one
// hands the host's Response over, the buffering one reads it with
// arrayBuffer() and rebuilds it), each given a transport that notes when
// the host's promise resolved. Also counts the calls in which a
// setImmediate queued at that moment ran before the caller resumed: a
// macrotask hop in the path (0 expected). Loopback server in this process,
// Node; figures, not pass/fail.
//
//   node bench/after-fetch.mjs        (needs `make build`; AFTER_FETCH_CALLS=N, default 3000;
//                                     AFTER_FETCH_STUB=1: a Response made here instead of the
//                                     network's, so undici's own work on a real body, which runs
//                                     in the microtasks between, is left out)
import http from "node:http";
import { RetryPolicy } from "../js/src/node.js";
import { floor, floorStream } from "./floors.mjs";

const CALLS = Number(process.env.AFTER_FETCH_CALLS ?? 3000);
const server = http.createServer((_, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": 11 });
  res.end('{"ok":true}');
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/`;

let settledAt = 0;
let hopped = false;
const stub = () => Promise.resolve(new Response('{"ok":true}', { headers: { "content-type": "application/json", "content-length": "11" } }));
const timed = (input, init) => (process.env.AFTER_FETCH_STUB ? stub() : fetch(input, init)).then((res) => {
  settledAt = performance.now();
  hopped = false;
  setImmediate(() => (hopped = true));
  return res;
});

const sides = { "floor, streamed": () => floorStream(url, undefined, timed), "floor, buffered": () => floor(url, undefined, timed) };
for (const mode of ["stream", "buffer", "auto"]) {
  const policy = new RetryPolicy({ ...(mode === "auto" ? {} : { responseBody: mode }), fetch: timed });
  sides[`saferetry "${mode}"`] = () => policy.fetch(url);
}
console.log(`| side | µs from fetch settling to the caller, median | p90 | calls with a macrotask hop |\n|---|---:|---:|---:|`);
for (const [name, call] of Object.entries(sides)) {
  for (let i = 0; i < 1000; i++) await (await call()).arrayBuffer();
  const gaps = [];
  let hops = 0;
  for (let i = 0; i < CALLS; i++) {
    const res = await call();
    gaps.push((performance.now() - settledAt) * 1000);
    if (hopped) hops++;
    await res.arrayBuffer();
  }
  gaps.sort((a, b) => a - b);
  console.log(`| ${name} | ${gaps[gaps.length >> 1].toFixed(1)} | ${gaps[Math.floor(gaps.length * 0.9)].toFixed(1)} | ${hops} |`);
}
server.close();
