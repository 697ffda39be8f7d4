// The floors (issue 37): the smallest wrappers that keep saferetry's
// guarantees with no retry logic, each one GET, measured beside it by
// bench/profile.mjs (Node), bench/workerd-cpu.mjs (copied beside its
// Worker) and bench/after-fetch.mjs. One definition, so every benchmark
// times the same floor. `transport` is the `fetch` to call (the global
// one by default, looked up at the call).
//
// The guarantees issue 37 names for the floor: the caller's signal, a
// timeout over the attempt body included, and the report. The report here
// is the least a caller could be given — the attempt's status and when it
// started and ended, kept with the Response it came with (`reportOf`) —
// where saferetry's says more (the wait, the reason, each attempt's
// stage); it is kept as saferetry keeps its own until read: as data,
// beside the response.

const reports = new WeakMap();

/** The report a floor kept with `response`. */
export const reportOf = (response) => reports.get(response);

const kept = (response, status, start) => {
  reports.set(response, { reason: "succeeded", attempts: [{ status, start, end: Date.now() }] });
  return response;
};

/** The caller's signal listened to once, a timeout over the whole call,
 * body included, a Response of its own the caller reads, and its report. */
export async function floor(url, signal, transport = fetch) {
  signal?.throwIfAborted();
  const start = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), 30_000);
  const onAbort = () => controller.abort(signal.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await transport(url, { signal: controller.signal });
    return kept(new Response(await res.arrayBuffer(), res), res.status, start);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** For a streamed answer ("stream"'s guarantees): the same timer and
 * controller up to the headers, the host's own Response handed over with
 * its report, and the caller's signal still aborting its body after that
 * (the listener stays, as `fetch`'s own does, until the signal goes). */
export async function floorStream(url, signal, transport = fetch) {
  signal?.throwIfAborted();
  const start = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), 30_000);
  signal?.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  try {
    const res = await transport(url, { signal: controller.signal });
    return kept(res, res.status, start);
  } finally {
    clearTimeout(timer);
  }
}
