// A suite (e2e or fidelity) in Cloudflare workerd: one case per incoming request.
// run.mjs copies this file next to suite.mjs and declares it, the suite's modules and
// the package's `workerd` entry (under the module name `saferetry`) in a
// generated config. The fault server's URLs arrive as text bindings.
//
//   GET /health            -> "ok"
//   GET /detected          -> { runtime }: whose fetch-error rules the policy applies
//   GET /list              -> [{ index, name, skip, shape }]
//   GET /run?case=<index>[&mode=<suite mode>]
//                          -> { index, name, ok, error, skipped, ms, line }
//                             (index: among the cases the mode selects)
//                             (ok: true/false, null when skipped; line: the suite's own line)
import * as saferetry from 'saferetry';
import { cases, runSuite } from './suite.mjs';

const json = (v, status = 200) => new Response(JSON.stringify(v), { status, headers: { 'content-type': 'application/json' } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const server = { url: env.FAULT_URL, altUrl: env.FAULT_ALT_URL };
    const runtime = 'workerd';
    if (url.pathname === '/health') return new Response('ok');
    if (url.pathname === '/detected') return json({ runtime: new saferetry.RetryPolicy({}).runtime });
    if (url.pathname === '/list') {
      return json(cases({ saferetry, server, runtime }).map((c, index) => ({ index, name: c.name, skip: c.skip ?? null, shape: c.shape ?? false })));
    }
    if (url.pathname === '/run') {
      const index = Number(url.searchParams.get('case'));
      if (!Number.isInteger(index) || index < 0) return json({ error: 'case=<index> required' }, 400);
      const timeoutMs = Number(url.searchParams.get('timeoutMs')) || undefined;
      const lines = [];
      let i = 0; // runSuite tests the filter once per case, in order
      const mode = url.searchParams.get('mode') || undefined;
      const r = await runSuite({ saferetry, server, runtime, timeoutMs, mode, filter: () => i++ === index, log: (l) => lines.push(l) });
      const res = r.results[0];
      if (!res) return json({ error: `no case ${index}` }, 404);
      return json({ index, name: res.name, ok: res.ok, error: res.error, skipped: res.skipped ?? null, ms: res.ms, line: lines[0] });
    }
    return new Response('not found', { status: 404 });
  },
};
