// saferetry fault server: a loopback HTTP server that misbehaves on purpose
// and counts every request it actually received, so end-to-end tests can
// assert what reached the server, not what the client believes.
//
// Usage
//   node www/server/fault-server.mjs [--port N] [--alt-port N] [--static DIR]
//     prints "fault server http://127.0.0.1:PORT" (then "alt origin ...")
//   import { startFaultServer } from './fault-server.mjs'
//   const s = await startFaultServer({ port: 0, host: '127.0.0.1', staticDir })
//   s.url, s.port, s.altUrl, s.altPort; await s.close()
//
// Scenarios: /s/<scenario>/<runId>?params     (runId: [A-Za-z0-9._:-]{1,128})
//   Every scenario request is counted under its runId when its head is parsed.
//   Unless noted, the server first reads the whole request body, then acts.
//   seq                ?steps=S1,S2,...  (or repeated &step=S) one step per
//                      request of this run; the last step repeats. A step is
//                      STATUS[~key=value]... or an action:
//                        ~ra=<v>     Retry-After: v (percent-encode the step,
//                                    e.g. an HTTP-date, with encodeURIComponent)
//                        ~ms=<n>     Retry-After-Ms: n
//                        ~delay=<n>  send the response after n ms
//                        ~body=<t>   body text (default "status S (request N)")
//                        ~hex=<h>    body bytes, in hex (any bytes, UTF-8 or not)
//                        ~echo=1     body is the echo JSON (see echo)
//                        ~reason=<t> status text (reason phrase) t
//                        ~x=<v>      header X-Fault: v
//                        ~rl=<v>     RateLimit: v (the IETF draft's field)
//                        ~rlrem=<v>  X-RateLimit-Remaining: v
//                        ~rlreset=<v> X-RateLimit-Reset: v
//                        ~rlafter=<v> X-RateLimit-Reset-After: v
//                      actions: reset (read body, drop connection),
//                      reset-before (drop before reading the body),
//                      cut (200, Content-Length 1000, 100 bytes, drop)
//   slow-headers       ?ms=250&status=200  response head after ms
//   slow-body          ?ms=250  200 head at once, a chunk every 25 ms, ends at ms
//                      (&type=<Content-Type>, default text/plain; &stall=1:
//                      one chunk at once, then nothing until ms, then one more)
//   reset-before-read  drop the connection before reading the body (&rst=1: RST)
//   reset-after-read   read the whole body, then drop the connection (&rst=1: RST)
//   cut-body           200 with Content-Length 1000, 100 bytes, then drop
//   redirect           ?to=<encoded URL>&status=307  redirect to `to` (self=1: to itself)
//   big                ?bytes=N&cl=0  a 200 body of N bytes (cl=0: chunked;
//                      &type=<Content-Type>, default application/octet-stream;
//                      &pattern=1: byte i is i % 251, so order can be checked;
//                      &cut=M: drop the connection after M bytes, with
//                      cl=0 sent chunked (Node's undici still takes that
//                      close for the end of the body; browsers do not))
//   hold               ?ms=300  200 after ms (observe maxInFlight)
//   outage             ?ms=3000  503 to every request that arrives within ms
//                      of the run's first request, 200 after (an upstream
//                      that is down, then back); with &from=<epoch ms>,
//                      503 from then for ms, 200 before and after (one
//                      outage shared by every run id that names it)
//   echo               ?status=200&setcookie=v  JSON {method,path,headers,
//                      bodyLength,body}; setcookie adds a Set-Cookie header
//   task            POST: 202 + Location of task-status (same runId and query); counts both
//   task-status     running until ms after the submit, then done (reject=1: rejected);
//                   polls listed in fail=2,3 (1-based) answer 502
//   Any scenario: expose=0 omits Access-Control-Expose-Headers.
//
// Counters (never counted themselves)
//   GET /count/<runId>  {requests, bodiesRead, maxInFlight, inFlight, starts
//     (Date.now() at head parse), methods, idempotencyKeys, bodyBytes, reused}
//     bodiesRead counts requests that carried a body and whose body was read
//     to the end; reused counts requests that came on an already-used socket.
//
// Control (never counted)
//   POST /control/late-port?delay=300  reserve a port that refuses now and
//     starts a counting listener on it after delay ms (answers 200 to
//     anything; counted as runId "port-<port>"; closes itself after 30 s).
//     -> {port, url, countUrl, opensAt}
//   GET  /control/closed-port  -> {port, url}: nothing listens there.
//
// Static: GET /static/<path> from staticDir (when given), limited to the
// top-level folders in staticOnly when that is given.
//
// Every response: Cache-Control: no-store, Connection: close (no connection is
// ever reused, so no runtime can silently resend a request on a dead
// keep-alive connection), Access-Control-Allow-Origin (the Origin, or *).
// Preflights (OPTIONS with Access-Control-Request-Method) get 204, uncounted.

import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MAX_MS = 30_000;
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_RUNS = 5000;
const MAX_LIST = 1000;
const LATE_LIFETIME_MS = 30_000;
const RATE_LIMIT_MODS = [['rl', 'RateLimit'], ['rlrem', 'X-RateLimit-Remaining'], ['rlreset', 'X-RateLimit-Reset'], ['rlafter', 'X-RateLimit-Reset-After']];
const ALLOW_HEADERS = 'Authorization, Cookie, Content-Type, Idempotency-Key, X-Test';
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const EXPOSE_HEADERS = 'Retry-After, Retry-After-Ms, Location, X-Fault, RateLimit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Reset-After';
const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.ts': 'text/plain; charset=utf-8', // also .d.ts
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const clampInt = (v, def, min, max) => {
  const n = v == null || v === '' ? def : Number(v);
  return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.trunc(n))) : def;
};

// `staticOnly`: top-level folders of staticDir that may be served (default all);
// `index`: where GET / redirects (default: the plain-text scenario list).
export async function startFaultServer({ port = 0, host = '127.0.0.1', staticDir, staticOnly, index, altPort = 0 } = {}) {
  const runs = new Map();
  const timers = new Set();
  const servers = new Set();
  const served = new WeakMap(); // socket -> requests served on it
  let closed = false;

  function runState(id) {
    let s = runs.get(id);
    if (!s) {
      if (runs.size >= MAX_RUNS) runs.delete(runs.keys().next().value);
      s = { requests: 0, bodiesRead: 0, maxInFlight: 0, inFlight: 0, starts: [], methods: [],
        idempotencyKeys: [], bodyBytes: [], reused: 0, seq: 0 };
      runs.set(id, s);
    }
    return s;
  }

  function later(ms, fn) {
    const t = setTimeout(() => { timers.delete(t); fn(); }, ms);
    timers.add(t);
    return () => { clearTimeout(t); timers.delete(t); };
  }

  function every(ms, fn) {
    const t = setInterval(fn, ms);
    timers.add(t);
    return () => { clearInterval(t); timers.delete(t); };
  }

  // Resolves after ms, or rejects if the response closes first (client gone).
  function sleep(ms, res) {
    return new Promise((resolve, reject) => {
      const onClose = () => { cancel(); reject(new Error('response closed')); };
      const cancel = later(ms, () => { res.off('close', onClose); resolve(); });
      res.once('close', onClose);
    });
  }

  function record(runId, req, res) {
    const s = runState(runId);
    s.requests += 1;
    const ordinal = s.requests;
    if (s.starts.length < MAX_LIST) {
      s.starts.push(Date.now());
      s.methods.push(req.method);
      s.idempotencyKeys.push(req.headers['idempotency-key'] ?? null);
    }
    const n = served.get(req.socket) ?? 0;
    if (n > 0) s.reused += 1;
    served.set(req.socket, n + 1);
    s.inFlight += 1;
    s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
    let open = true;
    const settle = () => { if (open) { open = false; s.inFlight -= 1; } };
    res.once('finish', settle);
    res.once('close', settle);
    return { s, ordinal };
  }

  function hasBody(req) {
    return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] != null;
  }

  function readBody(req, s) {
    return new Promise((resolve, reject) => {
      const chunks = [];
      let bytes = 0;
      req.on('data', (c) => { bytes += c.length; if (bytes <= 1 << 20) chunks.push(c); });
      req.on('end', () => {
        if (hasBody(req)) {
          s.bodiesRead += 1;
          if (s.bodyBytes.length < MAX_LIST) s.bodyBytes.push(bytes);
        }
        resolve({ bytes, text: Buffer.concat(chunks).toString('utf8') });
      });
      req.on('error', reject);
      req.on('close', () => { if (!req.complete) reject(new Error('request aborted')); });
    });
  }

  function corsHeaders(req, url) {
    const h = {
      'Access-Control-Allow-Origin': req.headers.origin || '*',
      'Vary': 'Origin',
      'Cache-Control': 'no-store',
      'Connection': 'close',
    };
    if (url.searchParams.get('expose') !== '0') h['Access-Control-Expose-Headers'] = EXPOSE_HEADERS;
    return h;
  }

  function send(res, status, body, headers = {}) {
    const buf = Buffer.from(body);
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': buf.length, ...headers });
    res.end(buf);
  }

  const json = (res, status, obj) => send(res, status, JSON.stringify(obj), { 'Content-Type': 'application/json' });

  function drop(req, url) {
    const sock = req.socket;
    if (url.searchParams.get('rst') === '1' && typeof sock.resetAndDestroy === 'function') sock.resetAndDestroy();
    else sock.destroy();
  }

  function cut(res) {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 1000 });
    res.write(Buffer.alloc(100, 'c'), () => res.socket?.destroy());
  }

  function echoBody(req, url, body) {
    // The path only: a query may carry test values (setcookie) that must not echo back.
    return JSON.stringify({ method: req.method, path: url.pathname, headers: req.headers,
      bodyLength: body.bytes, body: body.text.slice(0, 1000) });
  }

  // Steps: raw `steps` value split on literal commas, then percent-decoded;
  // plus every decoded `step` param.
  function parseSteps(url) {
    const texts = [];
    for (const part of url.search.slice(1).split('&')) {
      if (!part.startsWith('steps=')) continue;
      for (const raw of part.slice(6).split(',')) {
        if (raw) texts.push(decodeURIComponent(raw.replace(/\+/g, ' ')));
      }
    }
    texts.push(...url.searchParams.getAll('step'));
    return texts.map((t) => {
      const [head, ...mods] = t.split('~');
      const step = { head: head.trim() };
      for (const m of mods) {
        const i = m.indexOf('=');
        step[i < 0 ? m : m.slice(0, i)] = i < 0 ? '1' : m.slice(i + 1);
      }
      return step;
    });
  }

  async function seq(req, res, url, s, ordinal) {
    const steps = parseSteps(url);
    const i = s.seq++;
    const step = steps.length ? steps[Math.min(i, steps.length - 1)] : { head: '200' };
    if (step.head === 'reset-before') return drop(req, url);
    const body = await readBody(req, s);
    if (step.delay) await sleep(clampInt(step.delay, 0, 0, MAX_MS), res);
    if (step.head === 'reset') return drop(req, url);
    if (step.head === 'cut') return cut(res);
    const status = Number(step.head);
    if (!Number.isInteger(status) || status < 200 || status > 599) return send(res, 400, `bad step ${JSON.stringify(step.head)}`);
    const headers = {};
    if (step.ra != null) headers['Retry-After'] = step.ra;
    if (step.ms != null) headers['Retry-After-Ms'] = step.ms;
    if (step.x != null) headers['X-Fault'] = step.x;
    for (const [mod, name] of RATE_LIMIT_MODS) if (step[mod] != null) headers[name] = step[mod];
    if (step.reason != null) res.statusMessage = step.reason;
    if (step.echo) return send(res, status, echoBody(req, url, body), { ...headers, 'Content-Type': 'application/json' });
    const text = step.body ?? `status ${status} (request ${ordinal})`;
    send(res, status, step.hex != null ? Buffer.from(step.hex, 'hex') : text, headers);
  }

  async function big(req, res, url, s) {
    await readBody(req, s);
    const total = clampInt(url.searchParams.get('bytes'), 1 << 20, 0, MAX_BYTES);
    const cut = clampInt(url.searchParams.get('cut'), total, 0, total);
    const pattern = url.searchParams.get('pattern') === '1';
    const headers = { 'Content-Type': url.searchParams.get('type') ?? 'application/octet-stream' };
    if (url.searchParams.get('cl') !== '0') headers['Content-Length'] = total;
    // Without a length, Node ends a `Connection: close` body by closing the
    // connection, and a cut would look like the end: chunked, it cannot.
    else if (cut < total) headers['Transfer-Encoding'] = 'chunked';
    res.writeHead(200, headers);
    const chunk = pattern ? Buffer.from(Array.from({ length: 64 * 1024 + 251 }, (_, i) => i % 251)) : Buffer.alloc(64 * 1024, 'b');
    let sent = 0;
    while (sent < cut && !res.destroyed) {
      const n = Math.min(cut - sent, 64 * 1024);
      const from = pattern ? sent % 251 : 0;
      const piece = chunk.subarray(from, from + n);
      sent += n;
      if (sent === cut && cut < total) {
        res.write(piece, () => res.socket?.destroy());
        return;
      }
      if (!res.write(piece)) {
        await new Promise((r) => { res.once('drain', r); res.once('close', r); });
      }
    }
    if (!res.destroyed) res.end();
  }

  async function slowBody(req, res, url, s) {
    await readBody(req, s);
    const ms = clampInt(url.searchParams.get('ms'), 250, 0, MAX_MS);
    res.writeHead(200, { 'Content-Type': url.searchParams.get('type') ?? 'text/plain; charset=utf-8' });
    res.flushHeaders();
    const t0 = Date.now();
    let k = 0;
    // stall=1: the first chunk at once, then nothing until ms (a document
    // that stops arriving mid-body), then the rest.
    const stall = url.searchParams.get('stall') === '1';
    if (stall) res.write(`chunk ${++k}\n`);
    const stop = every(stall ? ms : 25, () => {
      if (res.destroyed) return stop();
      res.write(`chunk ${++k}\n`);
      if (Date.now() - t0 >= ms) { stop(); res.end(); }
    });
    res.once('close', stop);
  }

  const scenarios = {
    seq,
    'slow-headers': async (req, res, url, s) => {
      await readBody(req, s);
      await sleep(clampInt(url.searchParams.get('ms'), 250, 0, MAX_MS), res);
      const status = clampInt(url.searchParams.get('status'), 200, 200, 599);
      send(res, status, `slow headers ${status}`);
    },
    'slow-body': slowBody,
    'reset-before-read': async (req, res, url) => drop(req, url),
    'reset-after-read': async (req, res, url, s) => { await readBody(req, s); drop(req, url); },
    'cut-body': async (req, res, url, s) => { await readBody(req, s); cut(res); },
    redirect: async (req, res, url, s) => {
      await readBody(req, s);
      const status = clampInt(url.searchParams.get('status'), 307, 300, 308);
      const to = url.searchParams.get('self') === '1' ? url.pathname + url.search : url.searchParams.get('to') ?? '/';
      send(res, status, 'redirect', { Location: to });
    },
    big,
    outage: async (req, res, url, s) => {
      await readBody(req, s);
      const ms = clampInt(url.searchParams.get('ms'), 3000, 0, MAX_MS);
      const from = Number(url.searchParams.get('from') ?? NaN);
      const since = Date.now() - (Number.isFinite(from) ? from : s.starts[0]);
      const down = since >= 0 && since < ms;
      send(res, down ? 503 : 200, down ? 'down' : 'up');
    },
    hold: async (req, res, url, s) => {
      await readBody(req, s);
      await sleep(clampInt(url.searchParams.get('ms'), 300, 0, MAX_MS), res);
      send(res, 200, 'held');
    },
    // Submit-then-poll: POST task → 202 + Location of its status; the status
    // says running until `ms` after the submit, then done (or rejected with
    // reject=1); polls listed in `fail` (1-based, e.g. fail=2,3) get a 502.
    task: async (req, res, url, s) => {
      await readBody(req, s);
      s.taskAt = Date.now();
      s.polls = 0;
      const location = `${url.pathname.replace('/s/task/', '/s/task-status/')}${url.search}`;
      send(res, 202, 'accepted', { Location: location });
    },
    'task-status': async (req, res, url, s) => {
      await readBody(req, s);
      s.polls = (s.polls ?? 0) + 1;
      const failing = (url.searchParams.get('fail') ?? '').split(',').map(Number);
      if (failing.includes(s.polls)) return send(res, 502, 'bad gateway');
      const ready = s.taskAt != null && Date.now() - s.taskAt >= clampInt(url.searchParams.get('ms'), 300, 0, MAX_MS);
      const state = !ready ? 'running' : url.searchParams.get('reject') === '1' ? 'rejected' : 'done';
      send(res, 200, JSON.stringify({ state, polls: s.polls }), { 'Content-Type': 'application/json' });
    },
    echo: async (req, res, url, s) => {
      const body = await readBody(req, s);
      const status = clampInt(url.searchParams.get('status'), 200, 200, 599);
      const headers = { 'Content-Type': 'application/json' };
      const cookie = url.searchParams.get('setcookie');
      if (cookie) headers['Set-Cookie'] = `sid=${cookie}; Path=/`;
      send(res, status, echoBody(req, url, body), headers);
    },
  };

  // One port we bound and released: refuses connections until someone binds it.
  function freePort() {
    return new Promise((resolve, reject) => {
      const probe = net.createServer();
      probe.once('error', reject);
      probe.listen(0, host, () => {
        const { port: p } = probe.address();
        probe.close(() => resolve(p));
      });
    });
  }

  function listen(server, p) {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, host, () => { server.off('error', reject); resolve(server.address().port); });
    });
  }

  const origin = (p) => `http://${host.includes(':') ? `[${host}]` : host}:${p}`;

  async function latePort(url, base) {
    const delay = clampInt(url.searchParams.get('delay'), 300, 0, 10_000);
    const p = await freePort();
    const id = `port-${p}`;
    runState(id).listening = false;
    later(delay, () => {
      if (closed) return;
      const late = http.createServer((req, res) => lateHandler(req, res, id));
      servers.add(late);
      listen(late, p).then(() => {
        if (closed) return closeServer(late);
        runState(id).listening = true;
        later(LATE_LIFETIME_MS, () => closeServer(late));
      }, (err) => { runState(id).error = err.code ?? String(err); servers.delete(late); });
    });
    return { port: p, url: origin(p), countUrl: `${base}/count/${id}`, opensAt: Date.now() + delay };
  }

  async function lateHandler(req, res, id) {
    const url = new URL(req.url, 'http://x');
    const cors = corsHeaders(req, url);
    for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
    if (isPreflight(req)) return preflight(res);
    const { s } = record(id, req, res);
    try {
      await readBody(req, s);
      send(res, 200, 'late ok');
    } catch { /* client went away */ }
  }

  const isPreflight = (req) => req.method === 'OPTIONS' && req.headers['access-control-request-method'] != null;

  function preflight(res) {
    res.writeHead(204, { 'Access-Control-Allow-Methods': ALLOW_METHODS, 'Access-Control-Allow-Headers': ALLOW_HEADERS,
      'Access-Control-Max-Age': '600', 'Content-Length': 0 });
    res.end();
  }

  function serveStatic(res, rel) {
    if (!staticDir) return send(res, 404, 'no static dir');
    const root = path.resolve(staticDir);
    const file = path.resolve(root, '.' + path.posix.normalize('/' + decodeURIComponent(rel)));
    if (file !== root && !file.startsWith(root + path.sep)) return send(res, 403, 'forbidden');
    const top = path.relative(root, file).split(path.sep)[0];
    if (staticOnly && !staticOnly.includes(top)) return send(res, 403, 'forbidden');
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) return send(res, 404, 'not found');
      const type = CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream';
      res.writeHead(200, { 'Content-Type': type, 'Content-Length': st.size });
      fs.createReadStream(file).pipe(res);
    });
  }

  async function handler(req, res, base) {
    const url = new URL(req.url, 'http://x');
    for (const [k, v] of Object.entries(corsHeaders(req, url))) res.setHeader(k, v);
    if (isPreflight(req)) return preflight(res);
    const p = url.pathname;
    let m;
    if ((m = /^\/s\/([a-z0-9-]+)\/([A-Za-z0-9._:-]{1,128})$/.exec(p))) {
      const { s, ordinal } = record(m[2], req, res);
      const fn = scenarios[m[1]];
      if (!fn) return send(res, 404, `unknown scenario ${m[1]}`);
      return fn(req, res, url, s, ordinal);
    }
    if ((m = /^\/count\/([A-Za-z0-9._:-]{1,128})$/.exec(p))) {
      const { seq: _seq, ...rest } = runState(m[1]);
      return json(res, 200, rest);
    }
    if (p === '/control/late-port' && req.method === 'POST') return json(res, 200, await latePort(url, base));
    if (p === '/control/closed-port') {
      const cp = await freePort();
      return json(res, 200, { port: cp, url: origin(cp) });
    }
    if (p.startsWith('/static/')) return serveStatic(res, p.slice('/static/'.length));
    if (p === '/health') return send(res, 200, 'ok');
    if (p === '/' && index) return send(res, 302, 'see index', { Location: index });
    if (p === '/') return send(res, 200, `saferetry fault server\nscenarios: ${Object.keys(scenarios).join(' ')}\n`);
    send(res, 404, 'not found');
  }

  function makeServer(baseRef) {
    const server = http.createServer((req, res) => {
      Promise.resolve(handler(req, res, baseRef.url)).catch(() => {
        if (!res.headersSent && !res.destroyed) send(res, 500, 'fault server error');
        else res.destroy();
      });
    });
    servers.add(server);
    return server;
  }

  function closeServer(server) {
    servers.delete(server);
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
    });
  }

  const mainRef = {};
  const altRef = {};
  const mainPort = await listen(makeServer(mainRef), port);
  const secondPort = await listen(makeServer(altRef), altPort);
  mainRef.url = origin(mainPort);
  altRef.url = origin(secondPort);

  return {
    url: mainRef.url,
    port: mainPort,
    altUrl: altRef.url,
    altPort: secondPort,
    async close() {
      closed = true;
      for (const t of timers) { clearTimeout(t); clearInterval(t); }
      timers.clear();
      await Promise.all([...servers].map(closeServer));
    },
  };
}

/** True when `moduleUrl` (an `import.meta.url`) is the script Node was started with. */
export function isMain(moduleUrl = import.meta.url) {
  if (!process.argv[1]) return false;
  try {
    return fs.realpathSync(fileURLToPath(moduleUrl)) === fs.realpathSync(process.argv[1]);
  } catch {
    return false;
  }
}

if (isMain()) {
  const args = process.argv.slice(2);
  const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
  const s = await startFaultServer({ port: clampInt(opt('--port'), 0, 0, 65535),
    altPort: clampInt(opt('--alt-port'), 0, 0, 65535), staticDir: opt('--static') });
  console.log(`fault server ${s.url}`);
  console.log(`alt origin ${s.altUrl}`);
  const stop = () => s.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
