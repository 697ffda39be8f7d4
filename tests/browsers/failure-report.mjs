// Shape comparison and Markdown rendering for measure-failures.mjs.

const normErr = (e) => {
  if (!e) return null;
  if (e.primitive) return { primitive: e.primitive, value: e.value };
  // props (fileName/lineNumber/line/column) are recorded but not compared
  return { ctor: e.ctor, name: e.name, message: e.message, code: e.code, own: e.own, cause: e.cause && normErr(e.cause) };
};
const countsWithoutConn = ({ conn, ...rest } = {}) => rest; // conn can include speculative connections

// JSON with sorted keys: drivers return object keys in different orders.
const canon = (v) => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]])) : x));

/** What must stay the same for the classification to stay the same. */
export const shapeKey = (r) => canon({
  phase: r.phase, status: r.status, type: r.type, err: normErr(r.err), isReason: r.isReason, counts: countsWithoutConn(r.counts),
});
/** The error alone, as the page sees it (what a classifier could use). */
const errKey = (r) => canon({ phase: r.phase === 'body' ? 'body' : 'fetch', err: normErr(r.err) });

export const fmtCounts = (c = {}) => {
  const parts = [];
  const order = ['conn', 'req', 'reused', 'opt', 'body', 'killed', 'answered', 'trace'];
  for (const k of Object.keys(c).sort((a, b) => order.indexOf(a) - order.indexOf(b))) {
    const v = c[k];
    if (typeof v === 'number') parts.push(`${k}=${v}`);
    else for (const x of Object.keys(v).sort()) parts.push(`${k}(${x})=${v[x]}`);
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
export const FINDINGS = `## Findings (hand-written; WebKit here is WebKitGTK's MiniBrowser on libsoup 3, not Safari/CFNetwork)

1. **Every network failure is one opaque \`TypeError\` per browser, with no \`code\` and no \`cause\`:**
   Chromium \`"Failed to fetch"\`, Firefox \`"NetworkError when attempting to fetch resource."\` (own props
   \`fileName ""\`, \`lineNumber 0\`, \`columnNumber 1\`), WebKit \`"Load failed"\`. Refused (s1), closed or reset
   before the request was read (s4a/s4b), POST read then dropped (s5a/s5b), 307 to a refused second hop
   (s9a) and a refused automatic resend (s5e) look identical. **Nothing can honestly be classified
   \`not-sent\` in Firefox or WebKit** (nor in Chromium). The one distinct message, Firefox's body-cut
   \`"Content-Length header of network response exceeds response Body."\`, is in the body phase, i.e. delivered anyway.
2. **The rejection of an aborted fetch cannot be trusted to carry the reason:**
   - WebKit: any abort after fetch() started (\`AbortSignal.timeout\`, \`abort()\`, \`abort(reason)\`), in either
     phase, rejects with a fresh \`DOMException AbortError "Fetch is aborted"\` (code 20), \`!== signal.reason\`:
     a timeout shows up as \`AbortError\`, a custom reason is lost. Only an already-aborted signal (s8d)
     rejects with \`signal.reason\`.
   - Firefox: while waiting for headers it rejects with \`signal.reason\` (\`TimeoutError\` 23, a custom
     \`Error\`, even a string); while reading the body it always rejects with a fresh \`AbortError "The operation
     was aborted. "\` (trailing space), \`!== signal.reason\`, also for \`AbortSignal.timeout\` (s6a, s8e, s8f).
   - Chromium passes the reason through in both phases.
   So timeout vs cancelled must come from the library's own signals (\`callerSignal.aborted\`, "our attempt
   timer fired"), never from \`err.name\` or \`err === signal.reason\`.
3. **Keep-alive trap:** Firefox silently resends the POST like Chromium (s5c: server read "second" twice,
   page saw 200). WebKitGTK does not: libsoup never sends a non-idempotent method on a reused connection
   (POST "second" arrived as request #1 on a new connection), and restarts only idempotent methods on a
   reused connection; with GET (s5g) it resends too. In all three, a GET can be sent twice by the browser.
4. **Resend refused (s5e):** in Chromium and Firefox a POST the server had already read fails exactly like
   a refused connection when the browser's own resend is refused.
5. **Redirects:** with \`redirect:'follow'\` a 307 to a refused port fails like s1 after the first hop read the
   POST (all three). \`redirect:'manual'\` resolves with \`type 'opaqueredirect'\`, \`status 0\` in all three.
6. Firefox reconnects by itself when the server closes or resets a connection before reading anything
   (s4a/s4b: up to 11 connections for one fetch, never a request read) — invisible to the page.
7. No preflight was sent for GET or text/plain POST (\`opt\` never counted).

Consequence: in browsers, a network \`TypeError\` is \`maybe-delivered\` (or delivered, in the body phase);
\`not-sent\` is never provable; a POST without an idempotency key is not retried after a network error; and in
Chromium and Firefox even a successful POST may have been sent twice by the browser.`;
