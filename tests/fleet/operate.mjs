// One fleet instance's operations, shared by the Durable Object tier's
// Worker (tests/fleet/worker.mjs, which workerd.mjs copies into its Wrangler
// build beside it) and the Redis tier's instances (redis-instance.mjs):
// `concurrency` loops of `policy.fetch(url)`, bounded by `n` operations,
// `durationMs` and `stop()`, counting statuses, stop reasons and budget
// modes into `out` (`{ ops, reasons, budgets, statuses, other, maxOpMs }`).

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const bump = (o, k) => { o[k] = (o[k] ?? 0) + 1; };

export async function operate(policy, reportOf, out, { url, n, durationMs, concurrency, pauseMs = 0, stop = () => false, start = Date.now() }) {
  const loop = async () => {
    while (out.ops < n && Date.now() - start < durationMs && !stop()) {
      out.ops += 1;
      const s = Date.now();
      let report;
      try {
        const res = await policy.fetch(url);
        await res.body?.cancel();
        bump(out.statuses, res.status);
        report = reportOf(res);
      } catch (e) {
        if (e?.name !== 'RetryError') { out.other.push(String(e?.stack ?? e)); continue; }
        report = e.report;
        bump(out.statuses, e.reason);
        if (e.reason === 'queue-exceeds-budget') await sleep(10); // refused at once: do not spin
      }
      bump(out.reasons, report?.reason);
      bump(out.budgets, report?.budget);
      out.maxOpMs = Math.max(out.maxOpMs, Date.now() - s);
      if (pauseMs) await sleep(pauseMs);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
}
