// One real request through `policy.fetch`, issued right after the package was
// imported: the fault server answers 503 once, then 200. Then one
// submit-then-poll (`policy.poll`), whose loop is a module of its own loaded
// at the first poll: in a page, the wasm files the page fetched (resource
// timing) are counted before the poll and after it, so the runner sees that
// the poll's was not among them until then. The runner checks the answers,
// the reports and the server's own count.
const wasmFetched = () =>
  globalThis.document ? performance.getEntriesByType('resource').filter((e) => /\.wasm([?#]|$)/.test(e.name)).length : undefined;

export async function exercise({ RetryPolicy, reportOf }, base, runId) {
  const policy = new RetryPolicy({ maxAttempts: 3, baseMs: 1, capMs: 5 });
  const res = await policy.fetch(`${base}/s/seq/${runId}?steps=503,200`);
  const result = {
    status: res.status,
    body: await res.text(),
    attempts: reportOf(res).attempts.map((a) => a.status ?? a.error?.code ?? null),
    runtime: policy.runtime,
  };
  const before = wasmFetched();
  const op = policy.poll(`${base}/s/task/${runId}-poll?ms=0`, { method: 'POST', body: 'job' }, {
    status: (submitted) => new URL(submitted.headers.get('location'), base),
    phases: [{ everyMs: 10 }],
  });
  const polled = await op.result;
  result.poll = {
    kind: polled.kind,
    attempts: polled.report.attempts.map((a) => `${a.phase ?? 'submit'} ${a.status}`),
    body: polled.response && (await polled.response.json()).state,
    wasmFetchedByThePoll: before === undefined ? undefined : wasmFetched() - before,
  };
  return result;
}
