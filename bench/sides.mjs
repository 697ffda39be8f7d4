// The sides of a successful call measured beside plain `fetch` (issue 37):
// raw fetch, the floors (bench/floors.mjs), ky and saferetry's policy.fetch
// in each body mode, each without and with a caller's signal (a fresh
// AbortController().signal per call, as SDKs pass). Portable: no `node:`
// import, so the same sides run in Node (bench/profile.mjs), Deno, Bun and
// the three browsers (bench/runtimes.mjs), each given the package's entry
// for its runtime and ky.
import { floor, floorStream } from "./floors.mjs";

export const MODES = ["auto", "stream", "buffer"];

/** Puts bench/stub.mjs's `fetch` in the global slot (it answers at once
 * with a fresh small JSON Response: what is left of a call is each side's
 * own work around `fetch`) and answers the URL the sides are to ask. */
async function stubbedUrl() {
  globalThis.fetch = (await import("./stub.mjs")).stubFetch;
  return "http://127.0.0.1:9/json";
}

const fresh = () => new AbortController().signal;

/** `{ name: async () => … }`, each one GET of `url` with its body read.
 * `packages`: `[[prefix, RetryPolicy], …]` (prefix "" for the package
 * measured, "before: " for another). */
export function successSides(url, { ky, packages }) {
  const client = ky.create({ retry: 2, timeout: 10_000 });
  const out = {
    "raw fetch": async () => (await fetch(url)).arrayBuffer(),
    "raw fetch + signal": async () => (await fetch(url, { signal: fresh() })).arrayBuffer(),
    floor: async () => (await floor(url)).arrayBuffer(),
    "floor + signal": async () => (await floor(url, fresh())).arrayBuffer(),
    "floor stream": async () => (await floorStream(url)).arrayBuffer(),
    "floor stream + signal": async () => (await floorStream(url, fresh())).arrayBuffer(),
    ky: () => client.get(url).arrayBuffer(),
    "ky + signal": () => client.get(url, { signal: fresh() }).arrayBuffer(),
  };
  for (const [prefix, RetryPolicy] of packages) {
    for (const mode of MODES) {
      const policy = new RetryPolicy(mode === "auto" ? {} : { responseBody: mode });
      out[`${prefix}saferetry "${mode}"`] = async () => (await policy.fetch(url)).arrayBuffer();
      out[`${prefix}saferetry "${mode}" + signal`] = async () => (await policy.fetch(url, { signal: fresh() })).arrayBuffer();
    }
  }
  return out;
}

/** What a client of bench/runtimes.mjs measures (its page in a browser,
 * bench/runtimes-client.mjs elsewhere): `packages`' sides against `url`
 * ("stub": `fetch` stubbed), timed by windows (`windowed`). */
export async function measured(url, { ky, packages, rounds, perWindow, warmUp }) {
  const sides = successSides(url === "stub" ? await stubbedUrl() : url, { ky, packages });
  return windowed(sides, { rounds, perWindow, warmUp });
}

/** Each side's µs per call, timed by windows of `perWindow` sequential
 * calls with `performance.now()` (a browser coarsens it to 0.1–1 ms: a
 * window of calls is long enough for it), the sides interleaved: each
 * round runs every side's window once, each round starting one side
 * later, so each side takes every place in turn. `{ name: [µs per call of
 * each window] }`. */
export async function windowed(sides, { rounds, perWindow, warmUp }) {
  const times = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (const run of Object.values(sides)) for (let i = 0; i < warmUp; i++) await run();
  for (const [name, run] of rotated(sides, rounds)) {
    const t0 = performance.now();
    for (let i = 0; i < perWindow; i++) await run();
    times[name].push(((performance.now() - t0) * 1000) / perWindow);
  }
  return times;
}

/** `sides`' entries, `rounds` times, each round starting one side later
 * than the last, so each side takes every place of a round in turn (with
 * one fixed order, a side always ran after the same one, and two
 * identical packages differed by up to 0.10 × raw fetch in `make bench`'s
 * table). */
export function* rotated(sides, rounds) {
  const order = Object.entries(sides);
  for (let round = 0; round < rounds; round++) {
    const shift = round % order.length;
    yield* [...order.slice(shift), ...order.slice(0, shift)];
  }
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Each side's median window × raw fetch's ("+ signal" sides: × raw
 * fetch's without one, as the Node table reads), and the µs per call. */
export function ratios(times) {
  const us = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, median(xs)]));
  const raw = us["raw fetch"];
  return Object.fromEntries(Object.entries(us).map(([k, v]) => [k, { us: v, ratio: v / raw }]));
}
