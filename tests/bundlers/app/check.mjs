// One real request through `policy.fetch`, issued right after the package was
// imported: the fault server answers 503 once, then 200. The runner checks
// the answer, the report and the server's own count.
export async function exercise({ RetryPolicy, reportOf }, base, runId) {
  const policy = new RetryPolicy({ maxAttempts: 3, baseMs: 1, capMs: 5 });
  const res = await policy.fetch(`${base}/s/seq/${runId}?steps=503,200`);
  return {
    status: res.status,
    body: await res.text(),
    attempts: reportOf(res).attempts.map((a) => a.status ?? a.error?.code ?? null),
    runtime: policy.runtime,
  };
}
