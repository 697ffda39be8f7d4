// One (SDK, case, fetch) run in its own process, so peak memory is comparable:
//
//   node --expose-gc case.mjs <sdk> <case> <plain|saferetry> <projectDir> <origin> <runId>
//
// Builds the SDK client with plain `fetch` or with `policy.fetch` handed over
// unbound, performs the case, samples process memory every 5 ms, and prints one
// JSON line: { value?, error?, units?, firstAt?, bytes?, startedAt, ms, peakRssMiB, peakArrayBuffersMiB }.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ABORT_AFTER_MS = 700;

const [sdk, kase, mode, projectDir, origin, runId] = process.argv.slice(2);
const adapter = await import(`./adapters/${sdk}.mjs`);

let fetchFn = globalThis.fetch;
if (mode === 'saferetry') {
  const require = createRequire(path.join(path.resolve(projectDir), 'package.json'));
  const { RetryPolicy } = await import(pathToFileURL(require.resolve('saferetry')).href);
  fetchFn = new RetryPolicy().fetch; // the defaults, handed over unbound as the SDK docs show
} else if (mode !== 'plain') {
  throw new Error(`mode must be plain or saferetry, not ${mode}`);
}

const token = `${kase}.${runId}`;
const { port } = new URL(origin);
const client = adapter.client(fetchFn, { base: `${origin}/run/${token}`, origin, port: Number(port), token });

/** The error as the caller sees it, with the status and saferetry reason found along its causes. */
function describe(err) {
  const out = { name: err?.constructor?.name ?? err?.name, message: String(err?.message ?? err).slice(0, 160) };
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth += 1) {
    out.status ??= e.status ?? e.statusCode ?? e.response?.status;
    out.reason ??= e.reason;
  }
  // Some SDKs (supabase storage) keep only the message of the error they caught.
  out.reason ??= /^saferetry: .*\(([a-z-]+)\)$/.exec(out.message)?.[1];
  return out;
}

// Peaks above the level after a full GC: RSS (everything, allocator high-water
// mark included) and arrayBuffers (the bytes of live ArrayBuffers, where a
// held body shows without the allocator's noise).
globalThis.gc();
const baseline = process.memoryUsage();
const peak = { rss: baseline.rss, arrayBuffers: baseline.arrayBuffers };
const sample = () => {
  const now = process.memoryUsage();
  peak.rss = Math.max(peak.rss, now.rss);
  peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers);
};
const sampler = setInterval(sample, 5);

const out = { startedAt: Date.now() };
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
    await adapter.stream(client, { onUnits: counting() });
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
sample();
clearInterval(sampler);
out.ms = Date.now() - out.startedAt;
out.peakRssMiB = (peak.rss - baseline.rss) / 2 ** 20;
out.peakArrayBuffersMiB = (peak.arrayBuffers - baseline.arrayBuffers) / 2 ** 20;
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0); // a timer an SDK left behind must not hold the run
