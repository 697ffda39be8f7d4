// error-shapes.json -> a Markdown table: one row per deterministic-failure
// case, one column per runtime. Run alone, it rewrites error-shapes.md:
//   node tests/fidelity/shapes-table.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Control characters (a NUL in a header-value message) written as \uXXXX.
const visible = (s) => s.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const cell = (s) => {
  if (!s) return '—';
  if (!s.rejects) return `resolves ${s.status} · sent ${s.received}`;
  const ctor = s.constructorIsTypeError ? 'TypeError' : `${s.name} (not TypeError)`;
  const cause = s.causeName ? `; cause ${s.causeName}${s.causeCode ? ` ${s.causeCode}` : ''}: ${s.causeMessage}` : '';
  return visible(`${ctor}${s.code != null ? ` code ${s.code}` : ''}: ${s.message}${cause} · sent ${s.received}`.replace(/\|/g, '\\|').replace(/\n/g, ' '));
};

export function shapesMarkdown(doc) {
  const runtimes = Object.keys(doc.runtimes);
  const byCase = new Map();
  for (const rt of runtimes) {
    for (const s of Array.isArray(doc.runtimes[rt]) ? doc.runtimes[rt] : []) {
      if (!byCase.has(s.case)) byCase.set(s.case, {});
      byCase.get(s.case)[rt] = s;
    }
  }
  const rows = [...byCase].map(([name, per]) => `| ${name} | ${runtimes.map((rt) => cell(per[rt])).join(' | ')} |`);
  return `# What the host's fetch throws for deterministic failures

Measured ${doc.measured} by \`node tests/fidelity/run-all.mjs test-output/project --shapes\`
(the fidelity suite's \`shape: true\` cases, the host's own \`fetch\` alone; data in
\`error-shapes.json\`). A cell: the rejection's constructor (TypeError or not), its
\`code\`, message and cause, then how many requests the server received ("sent").
A missing cell: the case is skipped there (e.g. no \`URL.createObjectURL\`).

| case | ${runtimes.join(' | ')} |
|---|${runtimes.map(() => '---').join('|')}|
${rows.join('\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const json = new URL('./error-shapes.json', import.meta.url);
  writeFileSync(new URL('./error-shapes.md', import.meta.url), shapesMarkdown(JSON.parse(readFileSync(json, 'utf8'))));
}
