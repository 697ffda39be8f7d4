// Shape comparison and Markdown rendering for measure-failures.mjs.

const normErr = (e) => {
  if (!e) return null;
  if (e.primitive) return { primitive: e.primitive, value: e.value };
  // props (fileName/lineNumber/line/column) are recorded but not compared
  return { ctor: e.ctor, name: e.name, message: e.message, code: e.code, own: e.own, cause: e.cause && normErr(e.cause) };
};
const countsWithoutConn = ({ conn, ...rest } = {}) => rest; // conn can include speculative connections

/** What must stay the same for the classification to stay the same. */
export const shapeKey = (r) => JSON.stringify({
  phase: r.phase, status: r.status, type: r.type, err: normErr(r.err), isReason: r.isReason, counts: countsWithoutConn(r.counts),
});
/** The error alone, as the page sees it (what a classifier could use). */
const errKey = (r) => JSON.stringify({ phase: r.phase === 'body' ? 'body' : 'fetch', err: normErr(r.err) });

export const fmtCounts = (c = {}) => {
  const parts = [];
  for (const [k, v] of Object.entries(c)) {
    if (typeof v === 'number') parts.push(`${k}=${v}`);
    else for (const [x, n] of Object.entries(v)) parts.push(`${k}(${x})=${n}`);
  }
  return parts.length ? parts.join(' ') : '0 (nothing reached a server)';
};
const fmtErr = (e) => (!e ? '' : e.primitive ? `(primitive ${e.primitive}) "${e.value}"` : `${e.name}: "${e.message}"`);
const q = (s) => (s === undefined || s === null || s === '' ? '' : `"${String(s).replaceAll('|', '\\|')}"`);
const cell = (s) => String(s ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ');
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const tally = (xs) => { const m = new Map(); for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1); return [...m]; };
const delivered = (r) => (r.counts?.req ?? 0) > 0;

function attempts(data, b, id) { return data.browsers[b].runs.flat().filter((r) => r.id === id); }

function caseRow(data, b, c) {
  const xs = attempts(data, b, c.id);
  if (!xs.length) return null;
  const r = xs[0];
  const e = r.err ?? {};
  const shapes = tally(xs.map(shapeKey));
  const counts = tally(xs.map((x) => fmtCounts(x.counts)));
  const notes = [];
  if (r.status !== undefined) notes.push(`status ${r.status}${r.type ? ` type=${r.type}` : ''}`);
  if (r.first) notes.push(`1st POST/GET: ${r.first.trim()}`);
  if (e.props && Object.keys(e.props).length) notes.push(`own props: ${Object.keys(e.props).join(',')}`);
  notes.push(shapes.length === 1 ? `stable ${xs.length}/${xs.length}` : `VARIES: ${shapes.map(([k, n]) => `${n}× ${k}`).join(' ; ')}`);
  if (counts.length > 1) notes.push(`counts: ${counts.map(([k, n]) => `${n}× ${k}`).join(' ; ')}`);
  const cause = e.cause ? (e.cause.primitive ? e.cause.value : `${e.cause.name}: ${e.cause.message}${e.cause.code !== undefined ? ` [${e.cause.code}]` : ''}`) : '';
  return `| ${c.id} | ${b} | ${r.phase} | ${e.primitive ? `(primitive ${e.primitive})` : e.ctor ?? ''} | ${cell(e.name ?? '')} | ${cell(q(e.message ?? e.value))} | ${e.code ?? ''} | ${cell(cause)} | ${r.isReason ?? ''} | ${cell(fmtCounts(r.counts))} | ${median(xs.map((x) => x.ms))} | ${cell(notes.join('; '))} |`;
}

// For each browser: which network-error shapes appear with 0 requests read
// and never with a request read? Only those could be classified `not-sent`.
function analysis(data, b) {
  const xs = data.browsers[b].runs.flat().filter((r) => r.err && !r.err.primitive && r.err.name !== 'AbortError' && r.err.name !== 'TimeoutError' && r.err.ctor !== 'Error');
  const byShape = new Map();
  for (const r of xs) {
    const k = errKey(r);
    if (!byShape.has(k)) byShape.set(k, { label: `${r.phase === 'body' ? 'body: ' : ''}${fmtErr(r.err)}`, sent: new Set(), notSent: new Set() });
    byShape.get(k)[delivered(r) ? 'sent' : 'notSent'].add(r.id);
  }
  const lines = [];
  for (const s of byShape.values()) {
    const verdict = s.sent.size ? (s.notSent.size ? 'ambiguous → maybe-delivered' : 'request was read → maybe-delivered (or delivered)') : 'only seen with 0 requests read → candidate `not-sent`';
    lines.push(`- ${b}: \`${s.label}\` — 0 requests read in [${[...s.notSent].join(', ')}]; request read in [${[...s.sent].join(', ')}] → ${verdict}`);
  }
  return lines;
}

export function renderMarkdown(data, findings = FINDINGS) {
  const bs = Object.keys(data.browsers);
  const out = [];
  out.push('# fetch failure matrix: browsers (Chromium, Firefox, WebKit)', '');
  out.push(`Generated ${data.generated} by \`node tests/browsers/measure-failures.mjs\` (Node ${data.node}). Versions: ${bs.map((b) => `**${b}** ${data.browsers[b].browserVersion} (${data.browsers[b].ua})`).join('; ')}.`, '');
  out.push('- Driver: W3C WebDriver over HTTP (`tests/browsers/webdriver.mjs`): chromedriver + Debian Chromium (headless), geckodriver + Firefox ESR (`-headless`), WebKitWebDriver + MiniBrowser (WebKitGTK) on an Xvfb display.',
    '- The page is served from `127.0.0.1:<page port>`; every case has its own raw `node:net` fault server on another 127.0.0.1 port (so requests are cross-origin; only simple requests are sent: GET, or POST with a text/plain string body; no preflight was seen: `opt` never counted). Fault servers send `Access-Control-Allow-Origin: *`.',
    '- Server counts are the difference of the server\'s counters before/after each attempt (read by the page from `/__counts` on its own origin): `conn` TCP accepts, `req` request heads parsed, `reused` requests that arrived on a connection that already carried one, `body(x)` bodies read completely, `killed`/`answered`/`trace(x@connN#k)` for the keep-alive server.',
    `- ${data.runs} runs per browser (fresh servers and a fresh page load each run, one browser session); s1, s4a, s4b, s5a, s5b, s6b repeated ${data.repeats}× per run. "stable" = identical error shape and server counts (conn excluded) in every attempt.`,
    '- Columns: `phase` = where it failed (`fetch` = fetch() rejected, `body` = fetch resolved and text() rejected, `ok` = resolved). `=== reason` = rejection `=== signal.reason`. `ms` = median.', '');

  out.push('## Summary', '', `| case | ${bs.join(' | ')} |`, `|---|${bs.map(() => '---').join('|')}|`);
  for (const c of data.cases) {
    const cells = bs.map((b) => {
      const xs = attempts(data, b, c.id);
      if (!xs.length) return '';
      const r = xs[0];
      const what = r.err ? `${r.phase}: ${fmtErr(r.err)}${r.isReason === undefined ? '' : r.isReason ? ' (=== reason)' : ' (**!== reason**)'}` : `ok ${r.status}${r.type ? ` ${r.type}` : ''}`;
      return cell(`${what} — server: ${fmtCounts(countsWithoutConn(r.counts))}${tally(xs.map(shapeKey)).length > 1 ? ' (varies)' : ''}`);
    });
    out.push(`| ${c.id}: ${cell(c.title)} | ${cells.join(' | ')} |`);
  }
  out.push('');

  out.push('## All cases', '', '| case | browser | phase | constructor | .name | .message | .code | .cause | === reason | server count | ms | notes |', '|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const c of data.cases) {
    out.push(`| **${c.id}** | ${cell(c.title)} |  |  |  |  |  |  |  |  |  |  |`);
    for (const b of bs) { const row = caseRow(data, b, c); if (row) out.push(row); }
  }
  out.push('', '## Which network errors could be `not-sent`? (computed from the runs above)', '',
    'Every `TypeError`-like network failure, grouped by what the page can see (phase, constructor, name, message, code, cause). A shape is a `not-sent` candidate only if it never appeared when the server had read a request.', '');
  for (const b of bs) out.push(...analysis(data, b));
  out.push('', findings, '');
  return out.join('\n');
}

// Hand-written reading of the measured data (kept next to the renderer so a
// re-measure keeps it; re-read it when --check fails).
export const FINDINGS = `## Findings

See the report in the lead's notes; this section is filled in below.`;
