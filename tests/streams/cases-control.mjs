// The two controls: a stalled JSON document is still a failed attempt that a
// retry fixes, and the caller's signal still aborts a handed-over text stream.
import { STALL_JSON, chunk } from './shapes.mjs';
import { figures } from './cases-streams.mjs';
import { describe, newId, readTimed, received, receivedUntil, streamPorts } from './measure.mjs';

const ABORT_AFTER_CHUNKS = 3;
const CLOSE_SEEN_WITHIN_MS = 3000;
const READ_AFTER_ABORT_MS = 2000; // reads after the abort that do not reject stop by then

// How a read aborted by the caller's signal rejected: with the reason itself,
// as the host's own read did, or (WebKit, docs/fetch-differences.md
// item 5) with WebKit's TypeError("AbortError: Fetch is aborted").
function abortProblem(runtime, host, pol) {
  const e = pol.readError;
  if (!e) return `the policy's read did not reject after the abort (${pol.chunksAfterAbort} chunks read after it)`;
  if (e.isReason || e.isReason === host.readError?.isReason) return null;
  if (runtime === 'webkit' && e.name === 'TypeError' && /abort/i.test(e.message)) return null;
  return `the policy's read rejected with ${e.name}: ${e.message}, not the abort reason (the host's: ${host.readError ? `${host.readError.name}, isReason ${host.readError.isReason}` : 'no rejection'})`;
}

export function controlCases(h) {
  h.add({
    name: 'a stalled application/json GET (half sent, then nothing) is retried and the second attempt succeeds',
    kind: 'stall',
    async run({ saferetry, server, slot }) {
      const ports = await streamPorts(server);
      const id = newId('stall');
      const policy = new saferetry.RetryPolicy({ attemptMs: 1000, maxAttempts: 2 });
      const r = await readTimed(policy.fetch, `${ports[(2 * slot) % ports.length]}/stall/${id}`, {});
      r.report = r.res ? saferetry.reportOf(r.res) : undefined;
      r.requests = (await received(server, id)).requests;
      const problems = [];
      if (r.error) problems.push(`policy.fetch rejected after ${r.errorMs} ms: ${r.error.name}: ${r.error.message}`);
      else if (r.text !== STALL_JSON) problems.push(`the document differs: ${JSON.stringify(r.text.slice(0, 80))}`);
      if (r.requests !== 2) problems.push(`the server received ${r.requests} requests, expected 2 (the stalled one, then the retry)`);
      if (r.report && r.report.attempts?.length !== 2) problems.push(`the report has ${r.report.attempts?.length} attempts`);
      return { problems, fig: { policy: figures(r) } };
    },
  });

  h.add({
    name: "the caller's signal aborts a handed-over text/plain stream mid-way",
    kind: 'abort',
    async run({ saferetry, server, slot, options, runtime }) {
      const ports = await streamPorts(server);
      const call = async (side, doFetch) => {
        const id = newId(`abort-${side}`);
        const ac = new AbortController();
        const reason = new Error(`caller stopped reading (${side})`);
        const base = ports[(2 * slot + (side === 'fetch' ? 0 : 1)) % ports.length];
        const r = await readTimed(doFetch, `${base}/s/${id}?shape=text&head=flush`, { signal: ac.signal }, {
          async onChunk(n, reader, out) {
            if (n < ABORT_AFTER_CHUNKS) return 'go';
            const pending = reader.read(); // in flight when the signal aborts
            ac.abort(reason);
            out.readError = null;
            out.chunksAfterAbort = 0;
            const until = Date.now() + READ_AFTER_ABORT_MS;
            try { // bounded: 40 reads, a few seconds of chunks
              for (let i = 0, r = await pending; !r.done && i < 40 && Date.now() < until; i++, r = await reader.read()) out.chunksAfterAbort += 1;
            } catch (err) {
              out.readError = describe(err, reason);
            }
            return 'stop';
          },
        });
        r.report = r.res ? saferetry.reportOf(r.res) : undefined;
        r.rec = await receivedUntil(server, id, (rec) => rec.closedEarly, CLOSE_SEEN_WITHIN_MS);
        r.requests = r.rec.requests;
        return r;
      };
      const policy = new saferetry.RetryPolicy(options);
      const [host, pol] = await Promise.all([call('fetch', (u, i) => fetch(u, i)), call('policy', policy.fetch)]);
      const problems = [];
      if (pol.error) problems.push(`policy.fetch rejected after ${pol.errorMs} ms: ${pol.error.name}: ${pol.error.message}`);
      else {
        if (pol.chunks < ABORT_AFTER_CHUNKS || !pol.text.startsWith(chunk('text', 1))) problems.push(`read ${pol.chunks} chunks before the abort`);
        const why = abortProblem(runtime, host, pol);
        if (why) problems.push(why);
        if (pol.report?.responseBody !== 'stream') problems.push(`reportOf(res).responseBody is ${JSON.stringify(pol.report?.responseBody)}, not "stream"`);
        if (typeof pol.report?.handedOverMs !== 'number') problems.push(`reportOf(res).handedOverMs is ${JSON.stringify(pol.report?.handedOverMs)}, not a number`);
      }
      if (!pol.rec.closedEarly) problems.push(`the server did not see the policy's connection close within ${CLOSE_SEEN_WITHIN_MS} ms of the abort (sent ${pol.rec.sent} chunks, ended ${pol.rec.ended})`);
      if (pol.requests !== 1) problems.push(`the server received ${pol.requests} requests for the policy's call`);
      if (!host.rec.closedEarly || !host.readError) problems.push(`the host's fetch: read rejected ${!!host.readError}, close seen ${host.rec.closedEarly}: the harness is wrong`);
      const fig = (s) => ({ ...figures(s), readError: s.readError ? `${s.readError.name}${s.readError.isReason ? ' (the reason)' : ''}` : null, chunksAfterAbort: s.chunksAfterAbort, closeSeen: s.rec.closedEarly, sent: s.rec.sent });
      return { problems, fig: { fetch: fig(host), policy: fig(pol) } };
    },
  });
}
