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
import { clientFor, perform } from './perform.mjs';

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

const client = clientFor(adapter, fetchFn, origin, kase, runId);

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
await perform(adapter, kase, client, out);
sample();
clearInterval(sampler);
out.ms = Date.now() - out.startedAt;
out.peakRssMiB = (peak.rss - baseline.rss) / 2 ** 20;
out.peakArrayBuffersMiB = (peak.arrayBuffers - baseline.arrayBuffers) / 2 ** 20;
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0); // a timer an SDK left behind must not hold the run
