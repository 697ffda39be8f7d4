// The SDK tier: eight SDKs that take a custom fetch, each against a local fake
// of its API, once on plain `fetch` and once on saferetry's `policy.fetch`.
//
//   node tests/sdks/run.mjs <projectDir> [filter] [--matrix <file.md>]
//
// projectDir holds the packed package (scripts/pack-install.sh). filter keeps
// the (SDK, case) pairs whose "<sdk> <case>" contains it. Prints one line per
// pair — `ok` when saferetry is at least as good as plain, `FAIL` otherwise,
// `n/a` when the SDK cannot do the case — then "N passed, M failed"; exits 1
// on any failure. Each run is its own child process (case.mjs).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFake, BIG_BYTES } from './fake-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SDKS = ['openai', 'anthropic', 'octokit', 'stripe', 'ky', 'ofetch', 'axios', 'supabase'];
const CASES = ['json', '503', '429', 'stream', 'abort', 'big', 'redirect'];
const CHILD_TIMEOUT_MS = 60_000;
/**
 * A fetch that holds a copy of the 40 MiB body peaks far above plain: a fetch
 * that read every body to arrayBuffer() before resolving, in saferetry's slot,
 * peaked at RSS +137…+180 MiB and live ArrayBuffers +120 MiB, against plain's
 * +51…+75 and +26…+36. Plain's own RSS peak varies by ~25 MiB from run to run
 * (allocator high-water mark), so RSS gets a body's worth of slack.
 */
const BIG_RSS_SLACK_MIB = 40;
const BIG_ARRAY_BUFFERS_SLACK_MIB = 20;

const args = process.argv.slice(2);
const matrixAt = args.indexOf('--matrix');
const matrixFile = matrixAt >= 0 ? args.splice(matrixAt, 2)[1] : null;
const [projectDir, filter = ''] = args;
if (!projectDir || !fs.existsSync(path.join(projectDir, 'node_modules/saferetry/package.json'))) {
  console.error('usage: node tests/sdks/run.mjs <projectDir with saferetry installed> [filter] [--matrix file.md]');
  process.exit(2);
}

/** Runs case.mjs in a child; resolves with its JSON line (or a harness error). */
function runChild(sdk, kase, mode, origin, runId) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', path.join(here, 'case.mjs'), sdk, kase, mode, projectDir, origin, runId], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop();
      try {
        resolve(JSON.parse(line));
      } catch {
        const said = (stderr || stdout).split('\n').find((l) => /error/i.test(l)) ?? stderr.trim().slice(-300);
        resolve({ harnessError: `child ${mode} ended ${signal ?? code}: ${said}` });
      }
    });
  });
}

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

/**
 * Each case: figures(o) describes one outcome, short(o) in a few words for the
 * matrix; verdict(plain, sr) → null when saferetry is at least as good, else why not.
 */
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
      return null;
    },
  },
  abort: {
    figures: (o) => `${o.units} units before the abort, server sent ${o.server.chunksSent}${o.server.clientGone ? ' then saw the client go' : ' to the end'} (${o.error ? fmtErr(o.error) : 'no error'})`,
    short: (o) => `${o.units} units`,
    verdict: (p, s) => {
      if (p.units > 0 && s.units === 0) return `the caller had received nothing when it aborted (plain had ${p.units})`;
      if (s.units < p.units - 1) return `the caller had received ${s.units} units, plain ${p.units}`;
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
const judgeOf = { json: judges.call, 503: judges.call, 429: judges.call, stream: judges.stream, abort: judges.abort, big: judges.big, redirect: judges.redirect };
const needs = { json: 'call', 503: 'call', 429: 'call', stream: 'stream', abort: 'stream', big: 'download', redirect: 'call' };

// ---- the run -----------------------------------------------------------------

const fake = await startFake();
const rows = [];
let passed = 0;
let failed = 0;
try {
  for (const sdk of SDKS) {
    const adapter = await import(`./adapters/${sdk}.mjs`);
    for (const kase of CASES) {
      if (!`${sdk} ${kase}`.includes(filter)) continue;
      const na = adapter.notApplicable?.[kase];
      if (na || typeof adapter[needs[kase]] !== 'function') {
        const why = na ?? `the adapter has no ${needs[kase]}()`;
        console.log(`n/a ${sdk} ${kase} — ${why}`);
        rows.push({ sdk, kase, na: why });
        continue;
      }
      const outcomes = {};
      for (const mode of ['plain', 'saferetry']) {
        const runId = `${sdk}-${kase}-${mode}`;
        const o = await runChild(sdk, kase, mode, fake.origin, runId);
        o.server = fake.runs.get(runId) ?? { requests: [], chunksSent: 0, lastChunkAt: null, clientGone: false };
        outcomes[mode] = o;
      }
      const { plain, saferetry } = outcomes;
      const judge = judgeOf[kase];
      const harness = plain.harnessError ?? saferetry.harnessError;
      const why = harness ?? judge.verdict(plain, saferetry);
      const figures = harness ? null : { plain: judge.figures(plain), saferetry: judge.figures(saferetry) };
      const short = harness ? null : `${judge.short(plain)} · ${judge.short(saferetry)}`;
      if (why) {
        failed += 1;
        console.log(`FAIL ${sdk} ${kase} — ${why}${figures ? ` [plain: ${figures.plain}; saferetry: ${figures.saferetry}]` : ''}`);
      } else {
        passed += 1;
        console.log(`ok ${sdk} ${kase} — plain: ${figures.plain}; saferetry: ${figures.saferetry}`);
      }
      rows.push({ sdk, kase, ok: !why, why, figures, short });
    }
  }
} finally {
  await fake.close();
}

if (matrixFile) fs.writeFileSync(matrixFile, matrix(rows));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

/** A markdown table: SDK × case, each cell the verdict then "plain · saferetry"; then every line in full. */
function matrix(list) {
  const cell = (r) => (!r ? '' : r.na ? 'n/a' : `${r.ok ? 'ok' : '**FAIL**'}${r.short ? `: ${r.short}` : ''}`);
  const lines = [`| SDK | ${CASES.join(' | ')} |`, `|---|${CASES.map(() => '---').join('|')}|`];
  for (const sdk of SDKS.filter((name) => list.some((r) => r.sdk === name))) {
    lines.push(`| ${sdk} | ${CASES.map((k) => cell(list.find((r) => r.sdk === sdk && r.kase === k))).join(' | ')} |`);
  }
  const details = list.filter((r) => !r.na).map((r) => `- ${r.ok ? 'ok' : 'FAIL'} ${r.sdk} ${r.kase}: plain ${r.figures?.plain ?? '—'}; saferetry ${r.figures?.saferetry ?? '—'}${r.why ? ` — ${r.why}` : ''}`);
  return `${lines.join('\n')}\n\n${details.join('\n')}\n`;
}
