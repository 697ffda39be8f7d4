// The built package (js/src) under /pkg/ for a test page's server:
// `servePackage(url, res)` answers a request under /pkg/ (its file, 404 when
// missing, 403 outside js/src) and says whether it did.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '../runtimes/serve.mjs';

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../js/src');

export function servePackage(url, res) {
  if (!url.pathname.startsWith('/pkg/')) return false;
  serveStatic(res, PKG, url.pathname.slice('/pkg/'.length));
  return true;
}
