// Runs the e2e suite in Node against an in-process fault server.
//
//   node run-node.mjs [filter]
//
// The package is imported by its bare name `saferetry` (install the packed
// tarball next to this file), or from SAFERETRY_E2E_PACKAGE (a path or URL).
// The fault server module is SAFERETRY_E2E_SERVER if set, else
// ./fault-server.mjs next to this file (the copied layout), else the repo's
// www/server/fault-server.mjs.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runSuite } from './suite.mjs';

const toUrl = (p) => (/^[a-z]+:/i.test(p) ? p : pathToFileURL(path.resolve(p)).href);

function serverModule() {
  if (process.env.SAFERETRY_E2E_SERVER) return toUrl(process.env.SAFERETRY_E2E_SERVER);
  const copied = new URL('./fault-server.mjs', import.meta.url);
  if (fs.existsSync(copied)) return copied.href;
  return new URL('../../www/server/fault-server.mjs', import.meta.url).href;
}

const pkg = process.env.SAFERETRY_E2E_PACKAGE;
const saferetry = await import(pkg ? toUrl(pkg) : 'saferetry');
const { startFaultServer } = await import(serverModule());

// The entries beside the root one whose options the table covers
// (tests/e2e/options.mjs): saferetry/redis, and saferetry/otel with the
// OpenTelemetry API it takes providers from (an optional peer: skipped
// where it is not installed).
const sibling = (sub) => import(pkg ? toUrl(pkg.replace(/[^/]+$/, `${sub}.js`)) : `saferetry/${sub}`);
// saferetry/authority, as Node resolves it (authority-node.js: the same class as the root entry's).
const authority = await (pkg ? import(toUrl(pkg.replace(/[^/]+$/, 'authority-node.js'))) : import('saferetry/authority'));
const modules = { redis: await sibling('redis'), authority };
try {
  modules.otelApi = await import('@opentelemetry/api');
  modules.otel = await sibling('otel');
} catch {
  // no OpenTelemetry API here: the instrument row is skipped, saying so
}

const server = await startFaultServer();
let code = 1;
try {
  const { failed } = await runSuite({
    saferetry,
    server: { url: server.url, altUrl: server.altUrl },
    runtime: 'node',
    filter: process.argv[2],
    modules,
  });
  code = failed === 0 ? 0 : 1;
} catch (err) {
  console.error('suite crashed:', err);
} finally {
  await server.close();
}
// Exit explicitly: a library timer left behind must not keep CI waiting.
process.exit(code);
