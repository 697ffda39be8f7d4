// The streams tier's server: slow chunked streams on several loopback ports
// (a browser opens at most 6 HTTP/1.1 connections per origin, and a runtime
// runs every call of the tier at once), the stalled-JSON control, and what
// it received per call. Same CLI contract as tests/fidelity/server.mjs, so
// tests/runtimes/run.mjs starts it:
//
//   node tests/streams/server.mjs [--static DIR]
//     prints "streams server http://127.0.0.1:A" and "alt origin http://127.0.0.1:B"
//
// On every port:
// GET /ports           -> ["http://127.0.0.1:P", …]: the ports that serve streams
// ANY /s/<id>?shape=<key>&head=flush|first[&n=24][&every=500]
//                      -> 200, no Content-Length (chunked), the shape's
//                         Content-Type (tests/streams/shapes.mjs), n chunks one
//                         every `every` ms; head=flush sends the head at once
//                         (res.flushHeaders()), head=first with the first chunk
// GET /stall/<id>      -> the id's first request: 200 application/json, chunked,
//                         the first half of STALL_JSON at once, then nothing
//                         (held until the client goes or the server closes);
//                         later requests: the whole document
// GET /rec/<id>        -> { requests, sent, firstAt, ended, closedEarly }:
//                         requests received for the id, chunks sent, when
//                         the first was written (Date.now()), whether the
//                         last answer ended, whether its client went before
//                         the end
// GET /static/<path>   -> a file of DIR (the browser pages)
// Every answer: Access-Control-Allow-Origin: *, Cache-Control: no-store,
// Connection: close. Loopback only; every timer is bounded and cleared at close.
import http from 'node:http';
import { serveStatic, serverCli } from '../runtimes/serve.mjs';
import { CHUNKS, EVERY_MS, SHAPES, STALL_JSON, chunk } from './shapes.mjs';

const STREAM_PORTS = 20;
const MAX_IDS = 5000;
const MAX_HOLD_MS = 60_000; // a stalled answer is ended by then at the latest
const COMMON = { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store', Connection: 'close' };

export async function startServer({ staticDir } = {}) {
  const recs = new Map();
  const timers = new Set();
  const later = (ms, fn) => { const t = setTimeout(() => { timers.delete(t); fn(); }, ms); timers.add(t); };
  const rec = (id) => {
    if (!recs.has(id) && recs.size >= MAX_IDS) recs.delete(recs.keys().next().value);
    if (!recs.has(id)) recs.set(id, { requests: 0, sent: 0, ended: false, closedEarly: false });
    return recs.get(id);
  };
  const send = (res, status, text, type = 'text/plain') => {
    res.writeHead(status, { ...COMMON, 'Content-Type': type });
    res.end(text);
  };
  // Watches one answer: `ended` when it finished, `closedEarly` when the client went first.
  const watch = (r, res) => {
    r.ended = false;
    r.closedEarly = false;
    res.on('finish', () => { r.ended = true; });
    res.on('close', () => { if (!res.writableFinished) r.closedEarly = true; });
  };

  function stream(req, res, r, q) {
    const shape = SHAPES.find((s) => s.key === q.get('shape'));
    if (!shape) return send(res, 400, 'shape=<key> required');
    const count = Math.min(Number(q.get('n')) || CHUNKS, 200);
    const every = Math.min(Number(q.get('every')) || EVERY_MS, 5000);
    watch(r, res);
    const headers = { ...COMMON, ...(shape.type ? { 'Content-Type': shape.type } : {}) };
    res.writeHead(200, headers);
    if (q.get('head') === 'flush') res.flushHeaders();
    let i = 0;
    const tick = () => {
      if (res.destroyed) return;
      i += 1;
      res.write(chunk(shape.key, i));
      if (i === 1) r.firstAt = Date.now();
      r.sent = i;
      if (i >= count) res.end(); else later(every, tick);
    };
    later(every, tick);
  }

  function stall(req, res, r) {
    watch(r, res);
    if (r.requests > 1) return send(res, 200, STALL_JSON, 'application/json');
    res.writeHead(200, { ...COMMON, 'Content-Type': 'application/json' });
    res.write(STALL_JSON.slice(0, STALL_JSON.length >> 1));
    r.sent = 1;
    later(MAX_HOLD_MS, () => res.end());
  }

  const urls = [];
  function handler(req, res, base) {
    const url = new URL(req.url, base);
    let m;
    if (url.pathname === '/ports') return send(res, 200, JSON.stringify(urls.slice(1)), 'application/json');
    if ((m = /^\/(s|stall)\/([\w.-]{1,128})$/.exec(url.pathname))) {
      const r = rec(m[2]);
      r.requests += 1;
      req.resume(); // the POST's body: read and dropped
      return m[1] === 's' ? stream(req, res, r, url.searchParams) : stall(req, res, r);
    }
    if ((m = /^\/rec\/([\w.-]{1,128})$/.exec(url.pathname))) {
      return send(res, 200, JSON.stringify(recs.get(m[1]) ?? { requests: 0, sent: 0, ended: false, closedEarly: false }), 'application/json');
    }
    if (url.pathname.startsWith('/static/')) return serveStatic(res, staticDir, url.pathname.slice('/static/'.length));
    send(res, 404, 'not found');
  }

  const servers = [];
  for (let i = 0; i <= STREAM_PORTS; i++) { // port 0 is the main one (pages, records), the rest serve streams
    const ref = {};
    const server = http.createServer((req, res) => {
      try { handler(req, res, ref.url); } catch { res.destroy(); }
    });
    server.keepAliveTimeout = 0;
    servers.push(server);
    await new Promise((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', resolve); });
    ref.url = `http://127.0.0.1:${server.address().port}`;
    urls.push(ref.url);
  }
  return {
    url: urls[0], altUrl: urls[1],
    async close() {
      for (const t of timers) clearTimeout(t);
      await Promise.all(servers.map((s) => new Promise((resolve) => { s.close(resolve); s.closeAllConnections(); })));
    },
  };
}

await serverCli(import.meta.url, 'streams', startServer);
