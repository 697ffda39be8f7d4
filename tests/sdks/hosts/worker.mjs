// The workerd Worker of hosts.mjs: `GET /?sdk=…&kase=…&mode=…&origin=…&runId=…`
// runs that case and answers its outcome as JSON.
import { runCase } from './entry.mjs';

export default {
  async fetch(request) {
    try {
      return Response.json(await runCase(Object.fromEntries(new URL(request.url).searchParams)));
    } catch (e) {
      return Response.json({ harnessError: String(e?.stack ?? e) });
    }
  },
};
