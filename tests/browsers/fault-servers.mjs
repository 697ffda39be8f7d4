// Raw node:net HTTP/1.1 fault servers for measure-failures.mjs. Each server
// counts what it actually received: conn (TCP accepts), req (request heads,
// OPTIONS excluded), reused (requests on a connection that already carried
// one), opt (OPTIONS preflights), body[x] (request bodies read completely, by
// content), killed[x] / answered[x] / trace["body@connN#k"] (keep-alive server).
import { createServer } from 'node:net';

const CORS = 'Access-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: GET, POST\r\nAccess-Control-Allow-Headers: *\r\n';

function respond(sock, status, text, { body = '', headers = '', close = false, contentLength } = {}) {
  sock.write(`HTTP/1.1 ${status} ${text}\r\n${CORS}${headers}Content-Type: text/plain\r\n` +
    `Content-Length: ${contentLength ?? Buffer.byteLength(body)}\r\nConnection: ${close ? 'close' : 'keep-alive'}\r\n\r\n${body}`);
}

// Calls onRequest(sock, req, srv) for each complete request on a connection.
function parseRequests(sock, srv, onRequest) {
  let buf = Buffer.alloc(0);
  let nth = 0; // requests seen on this connection
  let head = null;
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (let guard = 0; guard < 100; guard++) { // bounded: at most 100 pipelined requests per chunk
      if (!head) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const [method, path] = lines[0].split(' ');
        const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        head = { method, path, headers, len: Number(headers['content-length'] || 0) };
        buf = buf.subarray(end + 4);
        if (method === 'OPTIONS') srv.counts.opt++; else srv.counts.req++;
        if (nth++ > 0) srv.counts.reused++; // arrived on a connection that already carried a request
        srv.onHead?.(sock, head, srv);
        if (sock.destroyed) return;
      }
      if (buf.length < head.len) return;
      const req = { ...head, body: buf.subarray(0, head.len).toString() };
      buf = buf.subarray(head.len);
      head = null;
      if (req.method === 'OPTIONS') {
        sock.write(`HTTP/1.1 204 No Content\r\n${CORS}Access-Control-Max-Age: 0\r\nContent-Length: 0\r\n\r\n`);
        continue;
      }
      if (req.len) srv.counts.body[req.body] = (srv.counts.body[req.body] ?? 0) + 1;
      onRequest(sock, { ...req, conn: sock.connNo, nth }, srv);
      if (sock.destroyed) return;
    }
  });
  sock.on('error', () => {});
}

const inc = (o, k) => { o[k] = (o[k] ?? 0) + 1; };

// Behaviours, by name. `closedPort` is a port nothing listens on.
export const MODES = {
  // close before reading anything: FIN / RST
  'destroy-on-accept': { onConnect: (s) => s.destroy() },
  'rst-on-accept': { onConnect: (s) => s.resetAndDestroy() },
  // read the whole POST, count it, then drop the connection: FIN / RST
  'read-then-destroy': { onRequest: (s) => s.destroy() },
  'read-then-rst': { onRequest: (s) => s.resetAndDestroy() },
  // 200 with Content-Length 100, 7 bytes sent, then FIN
  'cut-body': { onRequest: (s) => { respond(s, 200, 'OK', { body: 'partial', contentLength: 100 }); setTimeout(() => s.destroy(), 50); } },
  // 200 with Content-Length 100, 7 bytes sent, then silence
  'stall-body': { onRequest: (s) => respond(s, 200, 'OK', { body: 'partial', contentLength: 100 }) },
  // never answer
  'no-answer': { onRequest: () => {} },
  // 307 to a closed port
  'redirect-307': { onRequest: (s, req, srv) => respond(s, 307, 'Temporary Redirect', { headers: `Location: http://127.0.0.1:${srv.closedPort}/after-redirect\r\n` }) },
  // keep-alive trap: "first" answered; "second" (POST body or GET ?n=) read, then the connection is dropped
  // once (an automatic resend is answered). With pauseMs the listener also stops
  // accepting for that long, so an automatic resend is refused.
  'keepalive-kill': {
    onRequest: (s, req, srv) => {
      const name = req.body || new URL(req.path, 'http://x').searchParams.get('n'); // POST body or GET ?n=
      inc(srv.counts.trace, `${name}@conn${req.conn}#${req.nth}`); // which connection, nth request on it
      if (name === 'second' && !srv.counts.killed.second) {
        inc(srv.counts.killed, 'second');
        s.destroy();
        if (srv.pauseMs) srv.pause(srv.pauseMs);
        return;
      }
      inc(srv.counts.answered, name);
      respond(s, 200, 'OK', { body: `ok-${name}` });
    },
  },
};

export async function startFaultServer(mode, { closedPort, pauseMs } = {}) {
  const m = MODES[mode];
  if (!m) throw new Error(`unknown mode ${mode}`);
  const sockets = new Set();
  const timers = new Set();
  const srv = { mode, closedPort, pauseMs, counts: { conn: 0, req: 0, reused: 0, opt: 0, body: {}, killed: {}, answered: {}, trace: {} } };
  const servers = new Set();
  const onConn = (sock) => {
    sock.connNo = ++srv.counts.conn;
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    if (m.onConnect) { sock.on('error', () => {}); return m.onConnect(sock); }
    parseRequests(sock, srv, m.onRequest);
  };
  const listen = (port) => new Promise((res, rej) => {
    const server = createServer(onConn);
    servers.add(server);
    server.once('error', (e) => { servers.delete(server); rej(e); });
    server.listen(port, '127.0.0.1', () => { server.removeAllListeners('error'); res(server.address().port); });
  });
  srv.port = await listen(0);
  // stop accepting for `ms` (open connections stay), then listen on the same port again
  srv.pause = (ms) => {
    for (const s of servers) s.close();
    servers.clear();
    const t = setTimeout(() => { timers.delete(t); listen(srv.port).catch(() => {}); }, ms);
    timers.add(t);
  };
  srv.close = async () => {
    for (const t of timers) clearTimeout(t);
    timers.clear();
    for (const s of sockets) s.destroy();
    await Promise.all([...servers].map((s) => new Promise((res) => s.close(() => res()))));
    servers.clear();
  };
  return srv;
}
