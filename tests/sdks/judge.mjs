// How the SDK tier judges a pair of outcomes (plain fetch, then saferetry) of
// one (SDK, case): shared by run.mjs (Node) and hosts.mjs (Chromium, workerd).
// Each judge: figures(o) describes one outcome, short(o) in a few words for the
// matrix, verdict(plain, saferetry) → null when saferetry is at least as good,
// else why not.
import { BIG_BYTES } from './fake-server.mjs';

export const SDKS = ['openai', 'anthropic', 'octokit', 'stripe', 'ky', 'ofetch', 'axios', 'supabase', 'ai'];
export const CASES = ['json', '503', '429', 'stream', 'abort', 'big', 'redirect'];

/**
 * A fetch that holds a copy of the 40 MiB body peaks far above plain: a fetch
 * that read every body to arrayBuffer() before resolving, in saferetry's slot,
 * peaked at RSS +137…+180 MiB and live ArrayBuffers +120 MiB, against plain's
 * +51…+75 and +26…+36. Plain's own RSS peak varies by ~25 MiB from run to run
 * (allocator high-water mark), so RSS gets a body's worth of slack.
 */
const BIG_RSS_SLACK_MIB = 40;
const BIG_ARRAY_BUFFERS_SLACK_MIB = 20;

// ---- outcomes in words -------------------------------------------------------

const MiB = 2 ** 20;
const fmtErr = (e) => [e.status, e.reason, e.name].filter(Boolean).join(' ') + (e.status || e.reason ? '' : `: ${e.message}`);
/** "2 req", plus whether they carried an Idempotency-Key (the same one on every request, or not). */
function reqs(o) {
  const keys = o.server.requests.map((r) => r.idempotencyKey);
  const keyed = keys.every(Boolean) ? (new Set(keys).size === 1 ? ', one Idempotency-Key' : ', differing Idempotency-Keys') : '';
  return `${keys.length} req${keys.length ? keyed : ''}`;
}
const plainOrError = (o) => (o.error ? `error ${fmtErr(o.error)}` : JSON.stringify(o.value));
const sameSuccess = (p, s) => !p.error && !s.error && p.value === s.value;

function incremental(o) {
  return o.firstAt != null && o.server.lastChunkAt != null && o.startedAt + o.firstAt < o.server.lastChunkAt;
}

const shortErr = (e) => e.reason ?? e.status ?? e.name;

const judges = {
  call: {
    figures: (o) => `${plainOrError(o)} (${reqs(o)}, ${o.ms} ms)`,
    short: (o) => `${o.error ? shortErr(o.error) : o.value} (${o.server.requests.length} req)`,
    verdict: (p, s) => {
      if (s.error && !p.error) return `plain got ${JSON.stringify(p.value)}, saferetry failed: ${fmtErr(s.error)}`;
      if (!s.error && !p.error && !sameSuccess(p, s)) return `values differ: ${JSON.stringify(p.value)} vs ${JSON.stringify(s.value)}`;
      return null;
    },
  },
  stream: {
    figures: (o) => {
      if (o.error && !o.units) return `error ${fmtErr(o.error)} after ${o.ms} ms`;
      const lastSent = o.server.lastChunkAt - o.startedAt;
      return `${o.units} units, first at ${o.firstAt} ms, server's last sent at ${lastSent} ms → ${incremental(o) ? 'incremental' : 'buffered'}${o.error ? `, then error ${fmtErr(o.error)}` : ''}`;
    },
    short: (o) => (o.firstAt == null ? `error ${shortErr(o.error)}` : `first at ${o.firstAt} ms, last sent at ${o.server.lastChunkAt - o.startedAt} ms`),
    verdict: (p, s) => {
      if (s.error && !p.error) return `saferetry failed: ${fmtErr(s.error)}`;
      if (incremental(p) && !incremental(s)) {
        return `nothing reached the caller before the server's last chunk (first at ${s.firstAt ?? '—'} ms, last sent at ${s.server.lastChunkAt - s.startedAt} ms)`;
      }
      if (s.units !== p.units) return `received ${s.units} units, plain ${p.units}`;
      if (!p.error && !s.error && s.value !== p.value) return `the streamed text differs: ${JSON.stringify(s.value)} vs plain ${JSON.stringify(p.value)}`;
      if (s.server.requests.length !== p.server.requests.length) return `the server received ${s.server.requests.length} requests, plain ${p.server.requests.length}`;
      return null;
    },
  },
  abort: {
    figures: (o) => `${o.units} units before the abort, server sent ${o.server.chunksSent}${o.server.clientGone ? ' then saw the client go' : ' to the end'} (${o.error ? fmtErr(o.error) : 'no error'})`,
    short: (o) => `${o.units} units`,
    verdict: (p, s) => {
      // Against what this run's server had sent by the abort (one chunk may
      // be in flight), not only against plain's count: under load the
      // server sends fewer chunks in 700 ms, for either side.
      const expected = Math.min(p.units, s.server.chunksSent) - 1;
      if (p.units > 0 && s.units === 0 && s.server.chunksSent > 1) return `the caller had received nothing when it aborted (plain had ${p.units}, the server had sent ${s.server.chunksSent})`;
      if (s.units < expected) return `the caller had received ${s.units} units, plain ${p.units}, the server had sent ${s.server.chunksSent}`;
      if (p.server.clientGone && !s.server.clientGone) return 'the abort did not close the connection: the server sent to the end';
      return null;
    },
  },
  big: {
    figures: (o) => `${o.error ? `error ${fmtErr(o.error)}` : `${(o.bytes / MiB).toFixed(1)} MiB`}, peak RSS +${o.peakRssMiB.toFixed(1)} MiB, ArrayBuffers +${o.peakArrayBuffersMiB.toFixed(1)} MiB, ${o.ms} ms`,
    short: (o) => `${o.error ? shortErr(o.error) : `${(o.bytes / MiB).toFixed(0)} MiB`}, RSS +${o.peakRssMiB.toFixed(0)} MiB`,
    verdict: (p, s) => {
      if (p.bytes === BIG_BYTES && s.bytes !== BIG_BYTES) return `did not complete: ${s.error ? fmtErr(s.error) : `${s.bytes} bytes`}`;
      if (s.peakRssMiB > p.peakRssMiB + BIG_RSS_SLACK_MIB) {
        return `peak RSS +${s.peakRssMiB.toFixed(1)} MiB vs plain +${p.peakRssMiB.toFixed(1)} MiB (slack ${BIG_RSS_SLACK_MIB} MiB)`;
      }
      if (s.peakArrayBuffersMiB > p.peakArrayBuffersMiB + BIG_ARRAY_BUFFERS_SLACK_MIB) {
        return `live ArrayBuffers peaked at +${s.peakArrayBuffersMiB.toFixed(1)} MiB vs plain +${p.peakArrayBuffersMiB.toFixed(1)} MiB (slack ${BIG_ARRAY_BUFFERS_SLACK_MIB} MiB)`;
      }
      return null;
    },
  },
};
judges.redirect = {
  figures: (o) => `${judges.call.figures(o)}${o.server.requests.some((r) => r.moved) ? ', followed the 308' : ''}`,
  short: judges.call.short,
  verdict: judges.call.verdict,
};
export const judgeOf = { json: judges.call, 503: judges.call, 429: judges.call, stream: judges.stream, abort: judges.abort, big: judges.big, redirect: judges.redirect };
/** Which adapter function a case needs. */
export const needs = { json: 'call', 503: 'call', 429: 'call', stream: 'stream', abort: 'stream', big: 'download', redirect: 'call' };

/** What the fake saw for a run, or an empty record when it saw nothing. */
const serverView = (fake, runId) =>
  fake.runs.get(runId) ?? { requests: [], chunksSent: 0, lastChunkAt: null, clientGone: false };

/** Why the adapter cannot do the case (its own reason, or a missing function), else null. */
export function notApplicable(adapter, kase) {
  const na = adapter.notApplicable?.[kase];
  if (na) return na;
  return typeof adapter[needs[kase]] === 'function' ? null : `the adapter has no ${needs[kase]}()`;
}

/**
 * Judges one pair: { ok, why, figures: { plain, saferetry } | null, short | null }.
 * A harness error on either side (the run never produced an outcome) fails the pair.
 */
export function judgePair(kase, plain, saferetry) {
  const judge = judgeOf[kase];
  const harness = plain.harnessError ?? saferetry.harnessError;
  const why = harness ?? judge.verdict(plain, saferetry);
  const figures = harness ? null : { plain: judge.figures(plain), saferetry: judge.figures(saferetry) };
  const short = harness ? null : `${judge.short(plain)} · ${judge.short(saferetry)}`;
  return { ok: !why, why, figures, short };
}

/**
 * Runs one pair — plain, then saferetry — through `runOne(mode, runId)` (which
 * resolves with an outcome or `{ harnessError }`) and judges it with what the
 * fake saw for each run.
 */
export async function runPair(fake, kase, runIdPrefix, runOne) {
  const outcomes = {};
  for (const mode of ['plain', 'saferetry']) {
    const runId = `${runIdPrefix}-${mode}`;
    const o = await runOne(mode, runId);
    // A slow write still under way has not yet seen whether the client left
    // (its 'close' event may lag under load): wait until it ends or sees it.
    for (let i = 0; i < 150 && fake.runs.get(runId)?.writing && !fake.runs.get(runId)?.clientGone; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    o.server = serverView(fake, runId);
    outcomes[mode] = o;
  }
  return judgePair(kase, outcomes.plain, outcomes.saferetry);
}

/** The line printed for a judged pair. */
export function verdictLine(sdk, kase, j) {
  if (!j.ok) return `FAIL ${sdk} ${kase} — ${j.why}${j.figures ? ` [plain: ${j.figures.plain}; saferetry: ${j.figures.saferetry}]` : ''}`;
  return `ok ${sdk} ${kase} — plain: ${j.figures.plain}; saferetry: ${j.figures.saferetry}`;
}

/** A markdown table: SDK × case, each cell the verdict then "plain · saferetry"; then every line in full. */
export function matrix(list, cases) {
  const cell = (r) => (!r ? '' : r.na ? 'n/a' : `${r.ok ? 'ok' : '**FAIL**'}${r.short ? `: ${r.short}` : ''}`);
  const lines = [`| SDK | ${cases.join(' | ')} |`, `|---|${cases.map(() => '---').join('|')}|`];
  for (const sdk of SDKS.filter((name) => list.some((r) => r.sdk === name))) {
    lines.push(`| ${sdk} | ${cases.map((k) => cell(list.find((r) => r.sdk === sdk && r.kase === k))).join(' | ')} |`);
  }
  const details = list.filter((r) => !r.na).map((r) => `- ${r.ok ? 'ok' : 'FAIL'} ${r.sdk} ${r.kase}: plain ${r.figures?.plain ?? '—'}; saferetry ${r.figures?.saferetry ?? '—'}${r.why ? ` — ${r.why}` : ''}`);
  return `${lines.join('\n')}\n\n${details.join('\n')}\n`;
}
