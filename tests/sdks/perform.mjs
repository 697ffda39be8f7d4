// Performing one case with an SDK client, the same in every host (Node's
// case.mjs, the Chromium page and the workerd Worker of hosts.mjs): plain
// ESM without Node-only imports, so it bundles for a browser and a Worker.

export const ABORT_AFTER_MS = 700;

/** The adapter's client for a run, its fetch handed over as given. */
export function clientFor(adapter, fetchFn, origin, kase, runId) {
  const token = `${kase}.${runId}`;
  const { port } = new URL(origin);
  return adapter.client(fetchFn, { base: `${origin}/run/${token}`, origin, port: Number(port), token });
}

/** The error as the caller sees it, with the status and saferetry reason found along its causes. */
export function describe(err) {
  const out = { name: err?.constructor?.name ?? err?.name, message: String(err?.message ?? err).slice(0, 160) };
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth += 1) {
    out.status ??= e.status ?? e.statusCode ?? e.response?.status;
    out.reason ??= e.reason;
  }
  // Some SDKs (supabase storage) keep only the message of the error they caught.
  out.reason ??= /^saferetry: .*\(([a-z-]+)\)$/.exec(out.message)?.[1];
  return out;
}

/**
 * Performs `kase` with `client`, filling `out` (which holds `startedAt`):
 * value (json, 503, 429, redirect; stream: the text, where the adapter
 * returns it), units and firstAt (stream, abort),
 * bytes (big), or error — described, never thrown.
 */
export async function perform(adapter, kase, client, out) {
  const counting = () => {
    out.units = 0;
    return (n) => { out.firstAt ??= Date.now() - out.startedAt; out.units += n; };
  };
  try {
    if (kase === 'json' || kase === '503' || kase === '429') {
      out.value = await adapter.call(client);
    } else if (kase === 'redirect') {
      out.value = await (adapter.redirectedPost ?? adapter.call)(client);
    } else if (kase === 'stream') {
      out.value = await adapter.stream(client, { onUnits: counting() }); // the text, where the adapter returns it (ai)
    } else if (kase === 'abort') {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), ABORT_AFTER_MS);
      await adapter.stream(client, { signal: controller.signal, onUnits: counting() });
    } else if (kase === 'big') {
      out.bytes = 0;
      await adapter.download(client, { onBytes: (n) => { out.bytes += n; } });
    } else {
      throw new Error(`unknown case ${kase}`);
    }
  } catch (err) {
    out.error = describe(err);
  }
  return out;
}
