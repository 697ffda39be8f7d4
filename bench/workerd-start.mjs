// One cold start of a Worker built in `dir` (its config.capnp), as
// bench/pageload.mjs, bench/coldstart.mjs and bench/coldstart-pair.mjs time
// it: ms from spawning workerd to its port (over --control-fd) and to its
// first response, which must be the upstream's "ok" (a Worker that fails is
// not a start). And the sources of the Workers the last two start.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { start, stop, workerdPort } from "../tests/runtimes/procs.mjs";

const WORKERD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../node_modules/.bin/workerd");

/** `[ms to the port, ms to the first response]`. */
export async function coldStart(dir) {
  const t0 = performance.now();
  const p = start("workerd", WORKERD, ["serve", "config.capnp", "--control-fd=3"], { cwd: dir, extraFds: 1, echo: false });
  try {
    const port = await workerdPort(p);
    const t1 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    if (text !== "ok") throw new Error(`${dir}: ${res.status} ${text.slice(0, 200)}`);
    return [t1 - t0, performance.now() - t0];
  } finally {
    await stop(p, 0);
  }
}

/** A Worker's source that answers each request with the text of `call`'s
 * response (`call`: an expression; the upstream is `env.UPSTREAM`). */
export const answer = (call) => `export default { async fetch(req, env) { const r = await ${call}; return new Response(await r.text()); } };`;

const SRC = "./node_modules/saferetry/src";
/** The default module's file, and its glue, imported by a Worker. */
export const WASM = `import wasm from "${SRC}/saferetry_bg.wasm";`;
export const GLUE = `import * as glue from "${SRC}/saferetry.js";`;
/** A Worker's first lines that instantiate the default module by its glue. */
export const INSTANTIATED = `${WASM} ${GLUE} glue.initSync({ module: wasm });`;

/** Workers both benchmarks start: ky's client, the package's entry
 * imported (answering with the host's `fetch`), and saferetry's (a policy
 * made at the top level and its `policy.fetch`). */
export const KY_WORKER = `import ky from "ky"; const client = ky.create({ retry: 2 });\n${answer("client.get(env.UPSTREAM)")}`;
export const PACKAGE_WORKER = `import { RetryPolicy } from "saferetry"; globalThis.keep = RetryPolicy;\n${answer("fetch(env.UPSTREAM)")}`;
export const SAFERETRY_WORKER = `import { RetryPolicy } from "saferetry"; const policy = new RetryPolicy();\n${answer("policy.fetch(env.UPSTREAM)")}`;
