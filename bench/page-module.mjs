// The page's module (js/src/web.js's, `--features browser`) in Node, as
// the benchmarks that trace or time it load it (bench/page-split.mjs,
// page-calls.mjs, wasm-time.mjs --web): a browser prints no per-call
// figures nor which functions it compiles.
import { readFileSync } from "node:fs";
import { stubFetch } from "./stub.mjs";

/** Makes the global `fetch` a page's for these runs: the module's file by
 * its URL (js/src/compile.js fetches it), and anything else
 * bench/stub.mjs's small JSON 200, marked as the policies' transport. */
export function pageFetch() {
  const wasm = (url) => new Response(readFileSync(url), { headers: { "content-type": "application/wasm" } });
  globalThis.fetch = (url) => (String(url).startsWith("file:") ? Promise.resolve(wasm(new URL(url))) : stubFetch());
  globalThis.fetch[Symbol.for("saferetry.fetch")] = stubFetch;
}

/** A policy of `RetryPolicy` (web.js's) for each of `options`, made with
 * Node's `process.versions.node` hidden, so each applies a browser's
 * rules (src/host/api/exports.rs `detect_runtime`); throws if one does
 * not. */
export function browserPolicies(RetryPolicy, ...options) {
  const node = process.versions.node;
  Object.defineProperty(process.versions, "node", { value: undefined, configurable: true, writable: true });
  try {
    const policies = options.map((o) => new RetryPolicy(o));
    const other = policies.find((p) => p.runtime !== "browser");
    if (other) throw new Error(`the page's policy took ${other.runtime}'s rules`);
    return policies;
  } finally {
    process.versions.node = node;
  }
}
