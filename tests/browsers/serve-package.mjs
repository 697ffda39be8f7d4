// The built package (js/src) under /pkg/ for a test page's server:
// `servePackage(url, res)` answers a request under /pkg/ (its file, or 404)
// and says whether it did. Only files under js/src are served.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../js/src');

export function servePackage(url, res) {
  if (!url.pathname.startsWith('/pkg/')) return false;
  const file = path.join(PKG, path.normalize(url.pathname.slice('/pkg/'.length)));
  let bytes;
  try {
    if (!file.startsWith(PKG + path.sep)) throw new Error('outside the package');
    bytes = readFileSync(file);
  } catch {
    res.writeHead(404).end();
    return true;
  }
  res.writeHead(200, { 'content-type': file.endsWith('.wasm') ? 'application/wasm' : 'text/javascript' }).end(bytes);
  return true;
}
