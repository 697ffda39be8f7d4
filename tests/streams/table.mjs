// The streams tier's figures as Markdown: the "| fig {json}" tail of every
// case line (tests/streams/suite.mjs), per runtime, a table per gap between
// chunks.
//   figuresTable([{ runtime, lines }], mode) -> Markdown text
import { GAPS } from './shapes.mjs';

const LINE = /^(ok|FAIL) +.*\| fig (\{.*\})$/;
const COLUMNS = [['GET', 'flush'], ['GET', 'first'], ['POST', 'flush'], ['POST', 'first']];
const TITLE = (method, head) => `${method === 'GET' ? 'GET' : 'keyless POST'}, head ${head === 'flush' ? 'flushed' : 'with the first chunk'}`;
const SHAPES = ['text/plain; charset=utf-8', 'text/html; charset=utf-8', 'text/x-component', 'text/vnd.turbo-stream.html', 'none', 'application/x-ndjson'];

function figs(lines) {
  return lines.map((l) => LINE.exec(l)).filter(Boolean).map((m) => ({ ok: m[1] === 'ok', ...JSON.parse(m[2]) }));
}

const req = (n) => `${n ?? '?'} req`;
function cell(f) {
  if (!f) return 'not run';
  const p = f.policy;
  const late = p.firstLateMs != null && f.fetch.firstLateMs != null ? ` (${p.firstLateMs - f.fetch.firstLateMs >= 0 ? '+' : ''}${p.firstLateMs - f.fetch.firstLateMs})` : '';
  const policy = p.error ? `rejects at ${p.errorMs}: ${/\((\S+)\)$/.exec(p.error)?.[1] ?? p.error}` : `${p.firstMs}${late}`;
  return `${f.ok ? '✓' : '✗'} ${f.fetch.firstMs ?? '–'} · ${policy} · ${req(p.requests)}`;
}

export function figuresTable(results, mode) {
  const out = [];
  for (const { every, n, heads } of GAPS) {
    const columns = COLUMNS.filter(([, head]) => heads.includes(head));
    out.push(
      `Time to the first chunk (ms, from the call) with plain \`fetch\` · with \`policy.fetch\`${mode === 'stream' ? ' (`responseBody: "stream"`)' : ' (default options)'} (in brackets: how much later than fetch's the policy's caller read it after the server wrote it), and the requests the server received for the policy's call; ✓ when the case passed. ${n} chunks, one every ${every} ms.`,
      '',
      `| runtime | \`Content-Type\` | ${columns.map(([method, head]) => TITLE(method, head)).join(' | ')} |`,
      `|---|---|${columns.map(() => '---').join('|')}|`,
    );
    for (const r of results) {
      const f = figs(r.lines);
      for (const shape of SHAPES) {
        const row = columns.map(([method, head]) => cell(f.find((x) => x.kind === 'stream' && x.shape === shape && x.method === method && x.head === head && (x.every ?? 500) === every)));
        out.push(`| ${r.runtime} | ${shape === 'none' ? 'none' : `\`${shape}\``} | ${row.join(' | ')} |`);
      }
    }
    out.push('');
  }
  const controls = [
    '| runtime | stalled JSON GET (`attemptMs: 1000`, `maxAttempts: 2`) | abort mid-stream: policy read rejects with · server saw the close · `handedOverMs` |',
    '|---|---|---|',
  ];
  for (const r of results) {
    const f = figs(r.lines);
    const stall = f.find((x) => x.kind === 'stall');
    const abort = f.find((x) => x.kind === 'abort');
    const s = stall?.policy;
    const a = abort?.policy;
    controls.push(`| ${r.runtime} | ${!s ? 'not run' : `${stall.ok ? '✓' : '✗'} ${s.error ? `rejects: ${s.error}` : `200 at ${s.allMs} ms`}, ${req(s.requests)}, ${s.attempts ?? '?'} attempts`} `
      + `| ${!a ? 'not run' : `${abort.ok ? '✓' : '✗'} ${a.error ? `rejects: ${a.error}` : `${a.readError ?? 'no rejection'} · ${a.closeSeen ? 'yes' : 'no'} · ${a.handedOverMs ?? '–'}`}`} |`);
  }
  return [...out, ...controls].join('\n') + '\n';
}
