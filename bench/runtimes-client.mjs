// bench/runtimes.mjs's client in Node, Deno and Bun: the sides of a
// successful call (bench/sides.mjs), timed interleaved by windows against
// the parent's loopback server, or with `fetch` stubbed (url "stub":
// bench/stub.mjs); prints `{ times }` as one JSON line.
//
//   <runtime> bench/runtimes-client.mjs <url|stub> <ky URL> <rounds> <perWindow> <warmUp> <entry URL> [<before's entry URL>]
import { measured } from "./sides.mjs";

const [url, kyUrl, rounds, perWindow, warmUp, ...entries] = globalThis.Deno?.args ?? process.argv.slice(2);
const packages = [];
for (const [i, entry] of entries.entries()) packages.push([i ? "before: " : "", (await import(entry)).RetryPolicy]);
const ky = (await import(kyUrl)).default;
const times = await measured(url, { ky, packages, rounds: Number(rounds), perWindow: Number(perWindow), warmUp: Number(warmUp) });
console.log(JSON.stringify({ times }));
