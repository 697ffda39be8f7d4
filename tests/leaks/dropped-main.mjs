// The dropped-response case (dropped.js) in Deno or Bun, started by
// runtimes.mjs with the doc servers' origins as its argument. The package is
// loaded as those runtimes load it (their export condition: js/src/node.js).
//   deno run --v8-flags=--expose-gc --allow-net=127.0.0.1 --allow-read=<repo> dropped-main.mjs <origins>
//   bun run dropped-main.mjs <origins>
import * as saferetry from '../../js/src/node.js';
import { runDropped } from './dropped.js';

const args = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const bases = (args[0] ?? '').split(',').filter(Boolean);
const count = Math.max(1, Math.min(1000, Number(args[1]) || 100));
const bun = globalThis.Bun;
const deno = globalThis.Deno;
if (!bun && typeof globalThis.gc !== 'function') throw new Error('run Deno with --v8-flags=--expose-gc');
const env = {
  // Bun: a synchronous full collection (JavaScriptCore).
  gc: bun ? () => bun.gc(true) : () => globalThis.gc(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  memory: () => {
    const m = deno ? deno.memoryUsage() : process.memoryUsage();
    return { heapUsed: m.heapUsed, external: m.external, 'heap+external': m.heapUsed + m.external, rss: m.rss };
  },
  // JavaScriptCore counts ArrayBuffer memory in its heap size and Bun
  // reports it in external as well: heapUsed alone for Bun.
  key: bun ? 'heapUsed' : 'heap+external',
  log: (line) => console.log(`# ${line}`),
};
const r = await runDropped({ saferetry, bases, count, env });
for (const line of r.lines) console.log(line);
for (const c of r.checks) console.log(`${c.ok ? 'ok' : 'FAILED'} ${c.name}`);
console.log(`${r.checks.filter((c) => c.ok).length} passed, ${r.checks.filter((c) => !c.ok).length} failed`);
