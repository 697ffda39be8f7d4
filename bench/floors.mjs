// The floors (issue 37): the smallest wrappers that keep saferetry's
// guarantees with no retry logic, each one GET, measured beside it by
// bench/profile.mjs (Node), bench/workerd-cpu.mjs (copied beside its
// Worker) and bench/after-fetch.mjs. One definition, so every benchmark
// times the same floor. `transport` is the `fetch` to call (the global
// one by default, looked up at the call).

/** The caller's signal listened to once, a timeout over the whole call,
 * body included, and a Response of its own the caller reads. */
export async function floor(url, signal, transport = fetch) {
  signal?.throwIfAborted();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), 30_000);
  const onAbort = () => controller.abort(signal.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await transport(url, { signal: controller.signal });
    return new Response(await res.arrayBuffer(), res);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** For a streamed answer ("stream"'s guarantees): the same timer and
 * controller up to the headers, the host's own Response handed over, and
 * the caller's signal still aborting its body after that (the listener
 * stays, as `fetch`'s own does, until the signal goes). */
export async function floorStream(url, signal, transport = fetch) {
  signal?.throwIfAborted();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), 30_000);
  signal?.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  try {
    return await transport(url, { signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}
