// One cold start of a Worker built in `dir` (its config.capnp), as
// bench/pageload.mjs and bench/coldstart.mjs time it: ms from spawning
// workerd to its port (over --control-fd) and to its first response, which
// must be the upstream's "ok" (a Worker that fails is not a start).
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
