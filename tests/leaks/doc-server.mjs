// A loopback server for the dropped-response case (README.md here): chunked
// JSON documents, and a count of the connections it has open, so a client in
// any runtime can see whether a response it dropped still holds one.
//
//   node tests/leaks/doc-server.mjs [--count N]   prints "doc server http://127.0.0.1:PORT …"
//   import { startDocServer } from './doc-server.mjs'
//
// GET /doc?bytes=N   200, application/json, chunked (no Content-Length): a
//                    JSON array of fixed-width records, each naming its own
//                    index ({"i":0000042,"p":"…"}), written in 64 KiB pieces
//                    as the socket drains (so a client that stops reading
//                    holds the server at its socket buffers).
//                    &cut=M: drop the connection after M bytes instead.
//                    &type=text: Content-Type text/plain instead.
//                    &wait=MS: the head at once, the first piece MS later
//                    (at most 60 s; a timer that keeps no process alive).
// GET /open[?port=P] (P: another doc server of this process)
//                    {"open": connections that carried a document and are
//                     still open (what dropped responses still hold; on
//                     loopback a 5 MiB document may be written to the end
//                     into socket buffers, so "finished" does not tell),
//                     "sockets": all connections open other than this one
//                     (undici also keeps idle spare ones a few seconds),
//                     "served": documents started, "finished": written to
//                     the end, "dropped": connection closed first}
//                     (startDocServer's `extra()` adds its fields: the
//                     runtimes driver adds the RSS of a process it watches)
// Every response: Connection: close, Access-Control-Allow-Origin: *,
// Cache-Control: no-store.
import net from 'node:net';

const RECORD = 64; // bytes per record, comma or bracket included
const MAX_BYTES = 64 * 1024 * 1024;

/** The record with index `i` (RECORD bytes, the separator before it included). */
function record(i) {
  const head = `${i === 0 ? '[' : ','}{"i":${String(i).padStart(7, '0')},"p":"`;
  return `${head}${'x'.repeat(RECORD - head.length - 2)}"}`;
}

/** The document of `bytes` bytes (rounded down to whole records, at least one) as 64 KiB pieces. */
function* pieces(bytes) {
  const records = Math.max(1, Math.floor((bytes - 1) / RECORD));
  const per = 1024; // records per piece: 64 KiB
  for (let i = 0; i < records; i += per) {
    let text = '';
    for (let j = i; j < Math.min(records, i + per); j += 1) text += record(j);
    if (i + per >= records) text += ']';
    yield Buffer.from(text);
  }
}

/** Writes `piece` as one HTTP/1.1 chunk; resolves when the socket can take more. */
function writeChunk(socket, piece) {
  const more = socket.write(`${piece.length.toString(16)}\r\n`) & socket.write(piece) & socket.write('\r\n');
  if (more || socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { socket.off('drain', done); socket.off('close', done); resolve(); };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

// A plain TCP server speaking just enough HTTP/1.1: Node's http server stops
// reading a socket whose response is backed up, so it would notice a client
// that closed only seconds later; here a close is seen (and counted) at once.
// Every doc server of this process, by port: any of them answers /open for
// any other (a browser's requests to an origin whose connections are all
// held by dropped responses would wait).
const servers = new Map();

export async function startDocServer({ port = 0, host = '127.0.0.1', extra = () => ({}) } = {}) {
  const sockets = new Set();
  const docSockets = new Set(); // connections that carried a document and are still open
  const stats = { served: 0, finished: 0, dropped: 0 };
  const head = (status, type, extra = '') => `HTTP/1.1 ${status}\r\nConnection: close\r\n` +
    `Access-Control-Allow-Origin: *\r\nCache-Control: no-store\r\nContent-Type: ${type}\r\n${extra}\r\n`;
  const serve = async (socket, target) => {
    const url = new URL(target, 'http://x');
    if (url.pathname === '/open') {
      const of = servers.get(Number(url.searchParams.get('port'))) ?? { docSockets, sockets, stats };
      const self = of.sockets === sockets ? 1 : 0;
      const body = JSON.stringify({ open: of.docSockets.size, sockets: of.sockets.size - self, ...of.stats, ...extra() });
      socket.end(head('200 OK', 'application/json', `Content-Length: ${Buffer.byteLength(body)}\r\n`) + body);
      return;
    }
    if (url.pathname !== '/doc') {
      socket.end(head('404 Not Found', 'text/plain', 'Content-Length: 0\r\n'));
      return;
    }
    const bytes = Math.min(MAX_BYTES, Math.max(RECORD, Number(url.searchParams.get('bytes')) || 5 << 20));
    const cut = Number(url.searchParams.get('cut')) || 0;
    const wait = Math.min(60_000, Number(url.searchParams.get('wait')) || 0);
    const type = url.searchParams.get('type') === 'text' ? 'text/plain' : 'application/json';
    stats.served += 1;
    let ended = false;
    docSockets.add(socket);
    socket.once('close', () => {
      docSockets.delete(socket);
      if (!ended) stats.dropped += 1;
    });
    socket.write(head('200 OK', type, 'Transfer-Encoding: chunked\r\n'));
    if (wait) await new Promise((resolve) => setTimeout(resolve, wait).unref());
    let sent = 0;
    for (const piece of pieces(bytes)) {
      if (socket.destroyed) return;
      if (cut && sent + piece.length > cut) {
        socket.write(`${(cut - sent).toString(16)}\r\n`);
        socket.write(piece.subarray(0, cut - sent), () => socket.destroy());
        return;
      }
      sent += piece.length;
      await writeChunk(socket, piece);
    }
    if (socket.destroyed) return;
    ended = true;
    stats.finished += 1;
    socket.end('0\r\n\r\n');
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {}); // a client that went away: counted by 'close'
    let text = '';
    const onData = (data) => {
      text += data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) {
        if (text.length > 16 * 1024) socket.destroy();
        return;
      }
      // Keep reading (and dropping) whatever comes next, so a close is seen.
      socket.off('data', onData);
      socket.on('data', () => {});
      const target = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r\n/.exec(text)?.[1];
      if (!target) { socket.destroy(); return; }
      serve(socket, target).catch(() => socket.destroy());
    };
    socket.on('data', onData);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const url = `http://${host}:${server.address().port}`;
  servers.set(server.address().port, { docSockets, sockets, stats });
  return {
    url,
    stats,
    open: () => docSockets.size,
    close: () => new Promise((resolve) => {
      servers.delete(Number(new URL(url).port));
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // --count N: N servers (a fresh origin per round: a browser's connection
  // limit per origin must not carry one round's held connections into the next).
  const i = process.argv.indexOf('--count');
  const n = i > 0 ? Math.max(1, Math.min(16, Number(process.argv[i + 1]) || 1)) : 1;
  const servers = [];
  for (let k = 0; k < n; k += 1) servers.push(await startDocServer());
  console.log(`doc server ${servers.map((s) => s.url).join(' ')}`);
  const stop = () => Promise.all(servers.map((s) => s.close())).then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
