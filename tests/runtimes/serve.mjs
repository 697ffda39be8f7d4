// What the suites' test servers share (tests/fidelity/server.mjs,
// tests/streams/server.mjs): the static files of the browser pages, and the
// CLI contract tests/runtimes/procs.mjs `startFaultServer` reads.
import fs from 'node:fs';
import path from 'node:path';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

const plain = (res, status, text) => {
  res.writeHead(status, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' });
  res.end(text);
};

/** Answers `rel` (a URL path below /static/) from `staticDir`, never outside it. */
export function serveStatic(res, staticDir, rel) {
  if (!staticDir) return plain(res, 404, 'no static dir');
  const root = path.resolve(staticDir);
  const file = path.resolve(root, '.' + path.posix.normalize('/' + decodeURIComponent(rel)));
  if (!file.startsWith(root + path.sep)) return plain(res, 403, 'forbidden');
  fs.readFile(file, (err, data) => {
    if (err) return plain(res, 404, 'not found');
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': data.length, 'Cache-Control': 'no-store' });
    res.end(data);
  });
}

/** When the module at `moduleUrl` is the script Node runs: starts its
 * server (`--static DIR`), prints "<name> server <url>" and "alt origin
 * <url>", and closes it on SIGINT/SIGTERM. */
export async function serverCli(moduleUrl, name, startServer) {
  if (!process.argv[1] || path.resolve(process.argv[1]) !== path.resolve(new URL(moduleUrl).pathname)) return;
  const i = process.argv.indexOf('--static');
  const s = await startServer({ staticDir: i > 0 ? process.argv[i + 1] : undefined });
  console.log(`${name} server ${s.url}`);
  console.log(`alt origin ${s.altUrl}`);
  const stop = () => s.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
