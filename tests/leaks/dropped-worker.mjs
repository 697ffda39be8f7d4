// The dropped-response case (dropped.js) in workerd, started by
// runtimes.mjs: GET /run runs it inside one request (its subrequests are the
// worker's outbound fetches) and answers its lines. workerd gives a worker
// no memory figures: the doc server's /open answers the workerd process's
// RSS (runtimes.mjs tells it the pid), and gc() is there when the config
// sets v8Flags = ["--expose-gc"].
import * as saferetry from './src/workerd.js';
import { runDropped } from './dropped.js';

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/health') {
      return new Response(JSON.stringify({ gc: typeof globalThis.gc, finalizationRegistry: typeof FinalizationRegistry }));
    }
    if (url.pathname !== '/run') return new Response('not found', { status: 404 });
    const bases = env.DOCS.split(',');
    const count = Math.max(1, Math.min(1000, Number(url.searchParams.get('count')) || 100));
    const r = await runDropped({ saferetry, bases, count, env: {
      gc: typeof globalThis.gc === 'function' ? () => globalThis.gc() : () => {},
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      memory: async () => ({ rss: (await (await fetch(`${bases[0]}/open`)).json()).rss }),
      key: 'rss',
      warmRounds: true,
      gcEachCall: true, // RSS keeps its high-water mark: keep it where the warm rounds left it
      log: () => {},
    } });
    const lines = [...r.lines, ...r.checks.map((c) => `${c.ok ? 'ok' : 'FAILED'} ${c.name}`),
      `${r.checks.filter((c) => c.ok).length} passed, ${r.checks.filter((c) => !c.ok).length} failed`];
    return new Response(lines.join('\n'));
  },
};
