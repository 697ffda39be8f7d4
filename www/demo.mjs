// `make demo`: the saferetry demo page, served by the fault server it talks to.
//
//   node www/demo.mjs [--port N]   prints "demo: <url>", runs until Ctrl-C
//   node www/demo.mjs --check      starts, fetches the page, the package and one
//                                  scenario, prints "demo check ok", exits
//
//   import { startDemo } from './demo.mjs';
//   const demo = await startDemo();   // { url, server, close() }
//
// The fault server serves the repository root as /static/, so the page
// (www/index.html) imports the built package (js/src/web.js and the wasm-bindgen output beside it) through
// its import map, and every scenario request is same-origin.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain, startFaultServer } from './server/fault-server.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = '/static/www/index.html';
const BUILT = ['js/src/saferetry_web.js', 'js/src/saferetry_web_bg.wasm']; // the browser's module (js/src/web.js)

/** Starts the fault server with the page; resolves to `{ url, server, close }`. */
export async function startDemo({ port = 0 } = {}) {
  const missing = BUILT.filter((f) => !fs.existsSync(path.join(REPO, f)));
  if (missing.length) throw new Error(`the package is not built (${missing.join(', ')} missing): run \`make build\``);
  // Only the page and the built package are served: not the rest of the repository.
  const server = await startFaultServer({ port, host: '127.0.0.1', staticDir: REPO, staticOnly: ['www', 'js'], index: PAGE });
  return { url: server.url + '/', server, close: () => server.close() };
}

/** Fetches the page, the package and one scenario; throws on the first problem. */
async function check(demo) {
  const expect = async (url, type) => {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const got = res.headers.get('content-type') ?? '';
    await res.arrayBuffer();
    if (!res.ok || !got.startsWith(type)) throw new Error(`${url}: ${res.status} ${got}`);
  };
  const base = demo.server.url + '/static/';
  await expect(demo.url, 'text/html');
  await expect(base + 'www/tab.html', 'text/html');
  for (const f of ['www/demo.js', 'www/timeline.js', 'www/scenarios.js', 'www/several.js', 'www/tab.js', 'js/src/web.js', 'js/src/core.js', 'js/src/executor.js', 'js/src/attempts.js', 'js/src/body.js', 'js/src/packed.js', 'js/src/shape.js', 'js/src/kept.js', 'js/src/compile.js', 'js/src/request.js', 'js/src/options.js', 'js/src/load.js', 'js/src/tabs.js', BUILT[0]]) {
    await expect(base + f, 'text/javascript');
  }
  await expect(base + 'www/demo.css', 'text/css');
  const hidden = await fetch(base + 'Cargo.toml', { signal: AbortSignal.timeout(5000) });
  await hidden.arrayBuffer();
  if (hidden.status !== 403) throw new Error(`the repository outside www/ and js/ is served (${hidden.status})`);
  await expect(base + BUILT[1], 'application/wasm');
  await expect(`${demo.server.url}/s/seq/demo-check?steps=200`, 'text/plain');
}

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  const portArg = args.includes('--port') ? Number(args[args.indexOf('--port') + 1]) : 0;
  let demo;
  try {
    demo = await startDemo({ port: Number.isInteger(portArg) ? portArg : 0 });
  } catch (err) {
    console.error(`demo: ${err.message}`);
    process.exit(1);
  }
  if (args.includes('--check')) {
    try {
      await check(demo);
      console.log(`demo check ok (${demo.url})`);
    } catch (err) {
      console.error(`demo check failed: ${err.message}`);
      process.exitCode = 1;
    } finally {
      await demo.close();
    }
  } else {
    console.log(`demo: ${demo.url}`);
    console.log('Ctrl-C stops it.');
    const stop = async (sig) => {
      console.log(`\n${sig}: stopping the demo server`);
      await demo.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
}
