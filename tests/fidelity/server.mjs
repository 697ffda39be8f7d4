// The fidelity tier's server: answers as a case's query asks and records
// every request it receives, so a case can compare what the server got from
// the host's `fetch` and from `policy.fetch`. Loopback only, two origins
// (two ports), plus static files for the browser pages.
//
//   node tests/fidelity/server.mjs [--static DIR]
//     prints "fidelity server http://127.0.0.1:A" and "alt origin http://127.0.0.1:B"
//
// GET /rec/<id>   -> [{ origin: "main"|"alt", method, target, headers: [[name, value]], body }]
//                    every request to /r/<id> so far (preflights included, in
//                    arrival order; body as latin1 text, as far as it arrived)
// ANY /r/<id>?... -> the answer the query describes (every parameter optional):
//   status=200 reason=<text>   status line (reason: a custom status text)
//   seq=503,200                the Nth request of <id> gets the Nth status (the last repeats)
//   ct=<type>                  Content-Type (default text/plain; "none": no header)
//   body=<text> | bin=1        the body (bin: the 256 byte values); default "ok"
//   chunked=1                  no Content-Length, the body in two chunks
//   h=Name:value               a response header (repeatable)
//   cookie=<v>                 a Set-Cookie header (repeatable)
//   delay=<ms>                 the head after ms
//   drip=<ms>                  head at once, then ms / 50 chunks, 50 ms apart
//   nul=1                      200 with a NUL byte in a header value, written
//                              raw to the socket (Node's server refuses one)
//   badchunk=<ms>              head at once (chunked), a chunk after ms, then
//                              after ms more bytes that are no chunk (a
//                              broken chunked encoding), and the close
//   loc=<url>                  Location (status 302 unless given)
//   uloc=<url>                 the same, its UTF-8 bytes raw in the header
//   hops=<n>&hs=<status>       redirect to this URL with hops=n-1 (hs: status,
//                              default 302) until hops=0, then the answer above
// A preflight (OPTIONS with Access-Control-Request-Method) gets 204 allowing
// what it asks. Every answer: Connection: close, Cache-Control: no-store,
// Access-Control-Allow-Origin (the Origin, with credentials, or *).
// Connection: close on the records and static files too, so no connection
// is ever reused: a case's POST sent on a pooled connection can fail with
// the browser's bare network error on one side only (seen once, WebKit's
// "Load failed" on a lowercase "post", the host's side answered 200; not
// seen again in six runs of WebKit's whole suite before this change).
import http from 'node:http';
import { serveStatic, serverCli } from '../runtimes/serve.mjs';

const MAX_IDS = 5000;
const MAX_MS = 20_000;
const MAX_BODY = 1 << 20; // recorded request bytes per request
const BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

const clamp = (v, def, max) => (v == null || v === '' || !Number.isFinite(Number(v)) ? def : Math.max(0, Math.min(max, Number(v))));

export async function startServer({ staticDir } = {}) {
  const recs = new Map();
  const timers = new Set();
  const later = (ms, fn) => { const t = setTimeout(() => { timers.delete(t); fn(); }, ms); timers.add(t); };

  function record(id, req, originName) {
    if (!recs.has(id) && recs.size >= MAX_IDS) recs.delete(recs.keys().next().value);
    const list = recs.get(id) ?? [];
    recs.set(id, list);
    const headers = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i].toLowerCase(), req.rawHeaders[i + 1]]);
    const entry = { origin: originName, method: req.method, target: req.url, headers, body: '' };
    list.push(entry);
    req.on('data', (d) => { if (entry.body.length < MAX_BODY) entry.body += d.toString('latin1'); });
    return list.length;
  }

  function cors(req) {
    const origin = req.headers.origin;
    return origin
      ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', 'Access-Control-Expose-Headers': '*, X-Test, Location' }
      : { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': '*' };
  }

  function answer(req, res, q, ordinal, selfUrl) {
    if (q.get('nul') === '1') return rawNul(req, res);
    if (q.has('badchunk')) return badChunk(req, res, clamp(q.get('badchunk'), 500, MAX_MS));
    const statuses = q.get('seq')?.split(',');
    let status = Number(statuses ? statuses[Math.min(ordinal, statuses.length) - 1] : q.get('status') ?? 0) || 200;
    const headers = [];
    const hops = clamp(q.get('hops'), 0, 100);
    if (hops > 0) {
      const next = new URL(selfUrl);
      next.searchParams.set('hops', String(hops - 1));
      status = Number(q.get('hs')) || 302;
      headers.push(['Location', next.pathname + next.search]);
    } else if (q.has('loc')) {
      if (!q.has('status') && !statuses) status = 302;
      headers.push(['Location', q.get('loc')]);
    } else if (q.has('uloc')) {
      if (!q.has('status') && !statuses) status = 302;
      // Node writes a header string as Latin-1: these chars are the UTF-8 bytes.
      headers.push(['Location', Buffer.from(q.get('uloc'), 'utf8').toString('latin1')]);
    }
    const ct = q.get('ct') ?? 'text/plain';
    if (ct !== 'none') headers.push(['Content-Type', ct]);
    for (const h of q.getAll('h')) { const i = h.indexOf(':'); if (i > 0) headers.push([h.slice(0, i), h.slice(i + 1)]); }
    for (const c of q.getAll('cookie')) headers.push(['Set-Cookie', c]);
    const body = hops > 0 ? Buffer.from('') : q.get('bin') === '1' ? BYTES : Buffer.from(q.get('body') ?? 'ok');
    const noBody = req.method === 'HEAD' || status === 204 || status === 304;
    const drip = clamp(q.get('drip'), 0, MAX_MS);
    const chunked = q.get('chunked') === '1' || drip > 0;
    if (!chunked) headers.push(['Content-Length', String(noBody ? 0 : body.length)]);
    const head = () => {
      if (res.destroyed) return;
      res.writeHead(status, q.get('reason') ?? undefined, [...headers, ...Object.entries(cors(req)),
        ['Connection', 'close'], ['Cache-Control', 'no-store']].flat());
      if (noBody) return res.end();
      if (drip > 0) return dripBody(res, drip);
      if (chunked) { res.write(body.subarray(0, body.length >> 1)); return later(5, () => res.end(body.subarray(body.length >> 1))); }
      res.end(body);
    };
    const delay = clamp(q.get('delay'), 0, MAX_MS);
    if (delay) later(delay, head); else head();
  }

  // Bytes Node's own response writer would refuse, straight to the socket.
  function rawNul(req, res) {
    const allow = Object.entries(cors(req)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    res.socket.end(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Nul: x\u0000x\r\n${allow}Content-Length: 2\r\nCache-Control: no-store\r\nConnection: close\r\n\r\nok`, 'latin1');
  }

  function badChunk(req, res, ms) {
    res.writeHead(200, [...Object.entries(cors(req)), ['Content-Type', 'text/plain'], ['Cache-Control', 'no-store'], ['Connection', 'close']].flat());
    res.flushHeaders();
    later(ms, () => {
      if (res.destroyed) return;
      res.write('TEST_CHUNK');
      later(ms, () => { if (!res.destroyed) res.socket.end('garbage'); });
    });
  }

  // A fixed number of chunks, not as many as fit in `ms` by the clock:
  // fetch's body and policy.fetch's are compared, and a clock-bound count
  // differed by one between them (WebKit, a fresh-clone CI run: a 50 ms
  // timer against `Date.now()` fits one chunk more or less).
  function dripBody(res, ms) {
    let left = Math.ceil(ms / 50);
    const tick = () => {
      if (res.destroyed) return;
      if (left-- <= 0) return res.end('end');
      res.write('chunk ');
      later(50, tick);
    };
    tick();
  }

  const send = (res, status, text, headers = {}) => {
    res.writeHead(status, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store', Connection: 'close', ...headers });
    res.end(text);
  };

  function handler(req, res, originName, base) {
    const url = new URL(req.url, base);
    let m;
    if ((m = /^\/r\/([\w.-]{1,128})$/.exec(url.pathname))) {
      const ordinal = record(m[1], req, originName);
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
        return send(res, 204, '', { ...cors(req), 'Access-Control-Allow-Methods': req.headers['access-control-request-method'],
          'Access-Control-Allow-Headers': req.headers['access-control-request-headers'] ?? '' });
      }
      // Answer once the request body has arrived (or the client went away).
      req.on('end', () => answer(req, res, url.searchParams, ordinal, url.href));
      req.on('error', () => res.destroy());
      return req.resume();
    }
    if ((m = /^\/rec\/([\w.-]{1,128})$/.exec(url.pathname))) {
      return send(res, 200, JSON.stringify(recs.get(m[1]) ?? []), { 'Content-Type': 'application/json', ...cors(req) });
    }
    if (url.pathname.startsWith('/static/')) {
      res.setHeader('Connection', 'close');
      return serveStatic(res, staticDir, url.pathname.slice('/static/'.length));
    }
    send(res, 404, 'not found');
  }

  const servers = [];
  async function listen(originName) {
    const ref = {};
    const server = http.createServer((req, res) => {
      try { handler(req, res, originName, ref.url); } catch { res.destroy(); }
    });
    // An idle connection is never closed under a client (Node's 5 s default
    // would race a browser reusing it for a POST: a "Load failed" of the
    // server's making). close() ends every connection.
    server.keepAliveTimeout = 0;
    servers.push(server);
    await new Promise((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', resolve); });
    ref.url = `http://127.0.0.1:${server.address().port}`;
    return ref.url;
  }
  const url = await listen('main');
  const altUrl = await listen('alt');
  return {
    url, altUrl,
    async close() {
      for (const t of timers) clearTimeout(t);
      await Promise.all(servers.map((s) => new Promise((resolve) => { s.close(resolve); s.closeAllConnections(); })));
    },
  };
}

await serverCli(import.meta.url, 'fidelity', startServer);
