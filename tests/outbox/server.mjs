// The outbox tests' server on 127.0.0.1: one write endpoint that is closed
// (503 with a Retry-After) until a time the test sets, then accepts; it
// counts every request by its Idempotency-Key, and the accepted ones apart,
// so a test can say "sent once, with the same key". CORS open (the pages
// are served from another origin).
//
//   POST|PUT /orders      503 + Retry-After until `openAt`, then 201
//   POST /drop            reads the request, then destroys the socket (maybe-delivered)
//   POST /__open?at=ms    sets `openAt` (epoch ms)
//   POST /__hold?on=1|0   while on, /orders requests are counted and left unanswered; off drops them
//   POST /__at?key=k&point=p   a drainer stopped at a crash point says so (tests/outbox/page.mjs, worker.mjs)
//   GET  /__counts        { requests: { key: n }, accepted: { key: n }, times: { key: [ms] }, at: { key: point }, total }
//   POST /__reset
import http from 'node:http';

export async function startOutboxServer() {
  let openAt = 0;
  let requests = {}, accepted = {}, times = {}, at = {}, total = 0, hold = false, held = [];
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': '*',
    'access-control-allow-methods': '*',
    'access-control-expose-headers': '*',
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const json = (status, body, headers = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...cors, ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'OPTIONS') return json(204, {});
      if (url.pathname === '/__open') { openAt = Number(url.searchParams.get('at')); return json(200, { openAt }); }
      if (url.pathname === '/__hold') {
        hold = url.searchParams.get('on') === '1';
        if (!hold) for (const socket of held.splice(0)) socket.destroy();
        return json(200, { hold });
      }
      if (url.pathname === '/__at') { at[url.searchParams.get('key')] = url.searchParams.get('point'); return json(200, {}); }
      if (url.pathname === '/__counts') return json(200, { requests, accepted, times, at, total });
      if (url.pathname === '/__reset') { hold = false; for (const socket of held.splice(0)) socket.destroy(); openAt = 0; requests = {}; accepted = {}; times = {}; at = {}; total = 0; return json(200, {}); }
      const key = req.headers['idempotency-key'] ?? '(none)';
      total++;
      requests[key] = (requests[key] ?? 0) + 1;
      (times[key] ??= []).push(Date.now());
      if (url.pathname === '/drop') return req.socket.destroy();
      if (hold) return held.push(req.socket);
      const wait = openAt - Date.now();
      if (wait > 0) return json(503, { busy: true }, { 'retry-after': String(Math.ceil(wait / 1000)) });
      accepted[key] = (accepted[key] ?? 0) + 1;
      json(201, { key, body: Buffer.concat(chunks).toString('utf8'), auth: req.headers.authorization ?? null });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    counts: async () => (await fetch(`${url}/__counts`)).json(),
    open: (at) => fetch(`${url}/__open?at=${at}`, { method: 'POST' }).then((r) => r.json()),
    hold: (on) => fetch(`${url}/__hold?on=${on ? 1 : 0}`, { method: 'POST' }).then((r) => r.json()),
    reset: () => fetch(`${url}/__reset`, { method: 'POST' }).then((r) => r.json()),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
