// The SDK tier's stream and redirect cases in Chromium and in workerd: the
// same adapters, cases and verdicts as run.mjs (Node), each case once on the
// host's plain fetch and once on `policy.fetch` from the packed package.
//
//   node tests/sdks/hosts.mjs <projectDir> [filter]
//
// projectDir holds the packed package (scripts/pack-install.sh). filter keeps
// the runs whose "<host> <sdk> <case>" contains it. esbuild bundles
// hosts/page.mjs for Chromium (the `browser` condition: src/web.js) and
// hosts/worker.mjs for workerd (`workerd,worker,browser`: src/workerd.js).
// The page is served from its own loopback origin, so every SDK call is
// cross-origin to the fake, preflights and all, as a browser app's calls are.
// Prints one line per (host, SDK, case) — ok / FAIL / n/a with the reason —
// then "N passed, M failed"; exits 1 on any failure. Every process started is
// killed at the end; every wait is bounded.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../browsers/webdriver.mjs';
import { runPage } from '../browsers/run-page.mjs';
import { runMain, start, stop, waitExit, workerdConfig, workerdPort } from '../runtimes/procs.mjs';
import { startFake } from './fake-server.mjs';
import { SDKS, matrix, notApplicable, runPair, verdictLine } from './judge.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const BIN = path.join(REPO, 'node_modules/.bin');
const CASES = ['stream', 'redirect'];
const HOSTS = ['chromium', 'workerd'];
const BUILD_MS = 60_000;
const RUN_MS = 30_000;
const BUDGET_MS = 3 * 60_000;
const COMPAT_DATE = '2025-06-01';
const WASM = 'saferetry_bg.wasm'; // the Worker's (src/workerd.js)
const POLL_WASM = 'saferetry_poll_bg.wasm'; // the Worker's poll module (src/poll-workerd.js)
const WEB_WASM = 'saferetry_web_bg.wasm'; // the page's (src/web.js): the browser's module
const t0 = Date.now();
const note = (line) => process.stderr.write(`[sdks hosts ${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);

// ---------------- builds ----------------
async function esbuild(name, entry, outfile, args, projectDir) {
  note(`${name}: esbuild ${path.relative(REPO, entry)}`);
  const p = start(name, path.join(BIN, 'esbuild'), [
    path.relative(REPO, entry), '--bundle', '--format=esm', `--outfile=${outfile}`, '--log-level=error',
    // ws (supabase's realtime transport in Node) → the platform's WebSocket
    '--alias:ws=./tests/sdks/hosts/ws-global.mjs', ...args,
  ], { cwd: REPO, echo: false, env: { NODE_PATH: path.join(projectDir, 'node_modules') } });
  const code = await waitExit(p, Date.now() + BUILD_MS);
  if (code !== 0) throw new Error(`esbuild for ${name} exited ${code}:\n${p.lines.join('\n')}\n${p.tail}`);
}

/** The page, its bundle and the wasm file beside it (web.js loads it by URL). */
async function buildBrowser(dir, ctx) {
  mkdirSync(dir, { recursive: true });
  await esbuild('chromium', path.join(HERE, 'hosts/page.mjs'), path.join(dir, 'page.js'), ['--platform=browser'], ctx.projectDir);
  copyFileSync(path.join(ctx.pkgDir, 'src', WEB_WASM), path.join(dir, WEB_WASM));
  writeFileSync(path.join(dir, 'index.html'), `<!doctype html>
<meta charset="utf-8">
<title>saferetry SDK check</title>
<script>
  const fail = (e) => { window.__result ??= { harnessError: String(e?.stack ?? e) }; };
  addEventListener('error', (e) => fail(e.error ?? e.message));
  addEventListener('unhandledrejection', (e) => fail(e.reason));
</script>
<script type="module" src="page.js"></script>
`);
}

/** The Worker as Wrangler bundles one: workerd conditions, the .wasm left as a module import. */
async function buildWorker(dir, ctx) {
  mkdirSync(dir, { recursive: true });
  await esbuild('workerd', path.join(HERE, 'hosts/worker.mjs'), path.join(dir, 'worker.js'),
    ['--platform=browser', '--conditions=workerd,worker', '--external:*.wasm'], ctx.projectDir);
  const js = readFileSync(path.join(dir, 'worker.js'), 'utf8');
  // The default module and the poll's (imported with the entry, instantiated
  // at a first poll: js/src/poll-workerd.js), each a module of the Worker.
  const wasmImports = [...js.matchAll(/from\s*["'](\.\/[^"']+\.wasm)["']/g)].map((m) => m[1].slice(2)).sort();
  if (JSON.stringify(wasmImports) !== JSON.stringify([WASM, POLL_WASM])) {
    throw new Error(`the Worker bundle imports ${JSON.stringify(wasmImports)}, expected ${WASM} and ${POLL_WASM} (did the workerd condition pick src/workerd.js?)`);
  }
  for (const file of wasmImports) copyFileSync(path.join(ctx.pkgDir, 'src', file), path.join(dir, file));
  writeFileSync(path.join(dir, 'workerd.capnp'), workerdConfig({
    dir, compatibilityDate: COMPAT_DATE,
    modules: [
      { name: 'worker.js', type: 'esModule', file: path.join(dir, 'worker.js') },
      ...wasmImports.map((file) => ({ name: `./${file}`, type: 'wasm', file: path.join(dir, file) })),
    ],
  }));
}

/** A static server for the page, on its own loopback port (another origin than the fake). */
async function servePage(dir) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
  const server = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url, 'http://127.0.0.1').pathname) || 'index.html';
    const type = types[path.extname(name)];
    let body;
    try { body = type && readFileSync(path.join(dir, name)); } catch { body = null; }
    if (!body) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

// ---------------- hosts: one run → its outcome ----------------
async function openChromium(ctx) {
  const dir = path.join(ctx.root, 'chromium');
  await buildBrowser(dir, ctx);
  const page = await servePage(dir);
  let handle;
  try {
    handle = await launch('chromium');
  } catch (e) {
    await page.close();
    throw e;
  }
  note(`chromium ${handle.browserVersion}, page at ${page.origin}`);
  return {
    version: handle.browserVersion,
    async run(params) {
      const url = `${page.origin}/index.html?${new URLSearchParams(params)}`;
      try {
        const r = await runPage({ browser: 'chromium', url, timeoutMs: RUN_MS, handle, onLog: (l) => note(`page: ${l}`) });
        return r.result ?? { harnessError: 'the page set no result' };
      } catch (e) {
        return { harnessError: `chromium: ${e.message}` };
      }
    },
    async close() { await handle.close(); await page.close(); },
  };
}

async function openWorkerd(ctx) {
  const dir = path.join(ctx.root, 'workerd');
  await buildWorker(dir, ctx);
  const p = start('workerd', path.join(BIN, 'workerd'), ['serve', 'workerd.capnp', '--control-fd=3'], { cwd: dir, extraFds: 1, echo: false });
  let port;
  try {
    port = await workerdPort(p);
  } catch (e) {
    await stop(p);
    throw e;
  }
  const version = (await (async () => {
    const v = start('workerd-version', path.join(BIN, 'workerd'), ['--version'], { echo: false });
    await waitExit(v, Date.now() + 10_000);
    return v.lines.join(' ').trim();
  })()) || 'workerd';
  note(`${version} on 127.0.0.1:${port}`);
  return {
    version,
    async run(params) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/?${new URLSearchParams(params)}`, { signal: AbortSignal.timeout(RUN_MS) });
        const text = await res.text();
        try { return JSON.parse(text); } catch { return { harnessError: `workerd answered ${res.status}: ${text.slice(0, 300)} ${p.tail.slice(-300)}` }; }
      } catch (e) {
        return { harnessError: `workerd: ${e.message} ${p.tail.slice(-300)}` };
      }
    },
    async close() { await stop(p); },
  };
}

const OPEN = { chromium: openChromium, workerd: openWorkerd };

// ---------------- the run ----------------
async function main() {
  const [dirArg, filter = ''] = process.argv.slice(2);
  const projectDir = dirArg && path.resolve(dirArg);
  const pkgDir = projectDir && path.join(projectDir, 'node_modules/saferetry');
  try {
    readFileSync(path.join(pkgDir, 'package.json'));
  } catch {
    console.error('usage: node tests/sdks/hosts.mjs <projectDir with saferetry installed> [filter]');
    return 2;
  }
  const root = path.join(projectDir, 'sdk-hosts');
  rmSync(root, { recursive: true, force: true });
  const ctx = { projectDir, pkgDir, root };
  const adapters = Object.fromEntries(await Promise.all(SDKS.map(async (sdk) => [sdk, await import(`./adapters/${sdk}.mjs`)])));
  const fake = await startFake();
  const rows = [];
  let passed = 0;
  let failed = 0;
  try {
    for (const host of HOSTS) {
      const pairs = SDKS.flatMap((sdk) => CASES.map((kase) => [sdk, kase])).filter(([sdk, kase]) => `${host} ${sdk} ${kase}`.includes(filter));
      if (!pairs.length) continue;
      const preflightsBefore = fake.seen.preflights;
      let opened;
      try {
        opened = await OPEN[host](ctx);
      } catch (e) {
        for (const [sdk, kase] of pairs) {
          failed += 1;
          console.log(`FAIL ${host} ${sdk} ${kase} — the host did not start: ${String(e.message).split('\n').slice(0, 6).join(' | ')}`);
        }
        continue;
      }
      try {
        for (const [sdk, kase] of pairs) {
          const na = notApplicable(adapters[sdk], kase); // every SDK runs on both hosts: only its own n/a
          if (na) {
            console.log(`n/a ${host} ${sdk} ${kase} — ${na}`);
            rows.push({ host, sdk, kase, na });
            continue;
          }
          if (Date.now() - t0 > BUDGET_MS) {
            failed += 1;
            console.log(`FAIL ${host} ${sdk} ${kase} — not run: the ${BUDGET_MS / 1000} s budget passed`);
            continue;
          }
          const j = await runPair(fake, kase, `${host}-${sdk}-${kase}`, (mode, runId) => opened.run({ sdk, kase, mode, origin: fake.origin, runId }));
          if (j.ok) passed += 1; else failed += 1;
          console.log(verdictLine(`${host} ${sdk}`, kase, j));
          rows.push({ host, sdk, kase, ...j });
        }
      } finally {
        await opened.close();
      }
      note(`${host}: the fake answered ${fake.seen.preflights - preflightsBefore} CORS preflights`);
      console.error(`\n${host} (${opened.version}):\n${matrix(rows.filter((r) => r.host === host), CASES)}`);
    }
  } finally {
    await fake.close();
  }
  note(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

await runMain('sdks hosts', main);
