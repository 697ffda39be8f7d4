// The throttle tier's steady load (tests/fleet/throttle.mjs), one module
// for every carrier's clients: the Node processes (throttle-client.mjs),
// the Worker isolates (worker.mjs, which workerd-fleet.mjs copies into its
// Wrangler build beside it) and the Chromium tabs (throttle-tab.mjs). No
// host imports. Glue only: each library decides.
import { sleep } from './operate.mjs';

/** One operation every `everyMs` from `t0` (epoch ms) for `durationMs`,
 * each started on time whatever the others do. `op()` resolves with
 * `[outcome, requests it sent]`. Resolves, once every operation ended,
 * with `[start ms after t0, duration ms, outcome, requests, ms its start
 * was late]` per operation (the last: how late this host's timers fired
 * then). */
export async function steadyLoad(op, { t0, durationMs, everyMs }) {
  await sleep(Math.max(0, t0 - Date.now()));
  const ops = [];
  const running = [];
  for (let i = 0; ; i++) { // bounded by durationMs
    const at = t0 + i * everyMs;
    if (at >= t0 + durationMs) break;
    await sleep(Math.max(0, at - Date.now()));
    const s = Date.now();
    const done = ([outcome, requests]) => ops.push([s - t0, Date.now() - s, outcome, requests, s - at]);
    running.push(op().then(done, (e) => done([`threw ${e?.message ?? e}`, 0])));
  }
  await Promise.all(running);
  return ops;
}

/** A saferetry operation: `policy.fetch(url, init)`, its body dropped;
 * resolves with `["ok" | a status | the stop reason, attempts sent]`. */
export const policyOp = (policy, reportOf, url, init) => async () => {
  try {
    const res = await policy.fetch(url, init);
    await res.body?.cancel();
    return [res.ok ? 'ok' : String(res.status), reportOf(res).attempts.length];
  } catch (e) {
    if (e?.name !== 'RetryError') throw e;
    return [e.reason, e.report.attempts.length];
  }
};
