// The `bundlers` tier: the packed package, imported the three ways the
// README shows (named, namespace, dynamic `import()`), built by every
// bundler people use and loaded unbundled by every runtime, then run for
// real: one `policy.fetch` right after the import, then one `policy.poll`
// (whose module is loaded at the first poll: in a page, one more wasm
// fetched by the poll and none before), against the fault server.
//
//   node tests/bundlers/run.mjs <projectDir> [filter]
//     projectDir: a project with the packed package installed
//                 (scripts/pack-install.sh <projectDir>)
//
// Each case prints "ok <case>" or "FAIL <case> — why"; then one
// "N passed, M failed" line. Every process is tracked and killed at the end;
// every wait is bounded.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../browsers/webdriver.mjs';
import { runPage } from '../browsers/run-page.mjs';
import {
  bundleModules, moduleGraph, resolveExport, runMain, start, startFaultServer, stop, waitExit, workerdConfig, workerdPort,
} from '../runtimes/procs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(HERE, '../../node_modules/.bin');
const STYLES = ['named', 'namespace', 'dynamic'];
const COMPAT_DATE = '2025-06-01';
const BUILD_MS = 120_000;
const RUN_MS = 30_000;
const RUN_BUDGET_MS = 12 * 60_000;
const WASM = 'saferetry_bg.wasm'; // Node, Deno, Bun, workerd
const WEB_WASM = 'saferetry_web_bg.wasm'; // browsers (src/web.js): the same without the redirect hops
const AUTHORITY_WASM = 'saferetry_authority_bg.wasm';
const OUTBOX_WASM = 'saferetry_outbox_bg.wasm'; // the outbox's rules (docs/outbox.md)
const POLL_WASM = 'saferetry_poll_bg.wasm'; // `policy.poll`'s loop, loaded at the first poll
const t0 = Date.now();
const note = (line) => process.stderr.write(`[bundlers ${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);

// ---------------- the app's entry per host ----------------
const ERRORS_TO_RESULT = `<script>
  const fail = (e) => { window.__result ??= { error: String(e?.stack ?? e) }; };
  addEventListener('error', (e) => fail(e.error ?? e.message));
  addEventListener('unhandledrejection', (e) => fail(e.reason));
</script>`;

const MAIN = {
  browser: (style) => `import { run } from "../app/${style}.mjs";
const q = new URLSearchParams(location.search);
run(q.get("base"), q.get("run")).then((r) => { window.__result = r; }, (e) => { window.__result = { error: String(e?.stack ?? e) }; });
`,
  script: (style) => `import { run } from "../app/${style}.mjs";
const [base, runId] = globalThis.Deno ? Deno.args : process.argv.slice(2);
console.log(JSON.stringify(await run(base, runId)));
`,
  workerd: (style) => `import { run } from "../app/${style}.mjs";
export default {
  async fetch(request, env) {
    try {
      return Response.json(await run(env.FAULT_URL, new URL(request.url).searchParams.get("run")));
    } catch (e) {
      return Response.json({ error: String(e?.stack ?? e) });
    }
  },
};
`,
};

const page = (script, type = 'module') => `<!doctype html>
<meta charset="utf-8">
<title>saferetry bundler check</title>
${ERRORS_TO_RESULT}
<script${type ? ` type="${type}"` : ''} src="${script}"></script>
`;

// ---------------- builds: each returns how to run its output ----------------
async function exec(name, cmd, args, { cwd, env, ms = BUILD_MS } = {}) {
  note(`${name}: ${path.basename(cmd)} ${args.join(' ')}`);
  const p = start(name, cmd, args, { cwd, env, echo: false });
  const code = await waitExit(p, Date.now() + ms);
  return { code, out: p.lines.join('\n'), err: p.tail };
}

async function mustExec(name, cmd, args, opts) {
  const r = await exec(name, cmd, args, opts);
  if (r.code !== 0) throw new Error(`${name} exited ${r.code}:\n${r.out}\n${r.err}`);
  return r;
}

/** The README's recipe for bundlers that leave `new URL(..., import.meta.url)`
 * alone (esbuild, Bun): the wasm files next to the bundle — the package's
 * (for a page the browser's, `saferetry_web_bg.wasm`, and only it: a page
 * bundle that asked for the full one would fail to load), the poll's, and
 * the fleet authority's and the outbox's, which a namespace or dynamic
 * import keeps in the bundle (a named import of `RetryPolicy` leaves them
 * out). */
function copyWasmBeside(ctx, distDir, page = false) {
  const files = [page ? WEB_WASM : WASM, POLL_WASM, AUTHORITY_WASM, OUTBOX_WASM].filter((f) => !(ctx.withoutPollWasm && f === POLL_WASM));
  for (const f of files) copyFileSync(path.join(ctx.pkgDir, 'src', f), path.join(distDir, f));
}

/** The app as it is, run by `host`'s own resolver. */
function unbundledScript(host) {
  return async (ctx, dir) => {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.script(ctx.style));
    return { host, script: 'main.mjs' };
  };
}

const BUILDS = {
  async 'esbuild-browser'(ctx, dir) {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.browser(ctx.style));
    await mustExec('esbuild', path.join(BIN, 'esbuild'), ['main.mjs', '--bundle', '--format=esm', '--platform=browser', '--outfile=dist/main.js', '--log-level=warning'], { cwd: dir });
    if (!ctx.withoutWasm) copyWasmBeside(ctx, path.join(dir, 'dist'), true);
    writeFileSync(path.join(dir, 'dist/index.html'), page('main.js'));
    return { host: 'browser', html: 'dist/index.html' };
  },
  async 'esbuild-node'(ctx, dir) {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.script(ctx.style));
    await mustExec('esbuild', path.join(BIN, 'esbuild'), ['main.mjs', '--bundle', '--format=esm', '--platform=node', '--outfile=dist/main.mjs', '--log-level=warning'], { cwd: dir });
    if (!ctx.withoutWasm) copyWasmBeside(ctx, path.join(dir, 'dist'));
    return { host: 'node', script: 'dist/main.mjs' };
  },
  async 'esbuild-workerd'(ctx, dir) { // as Wrangler builds a Worker: workerd conditions, .wasm left as a module import
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.workerd(ctx.style));
    await mustExec('esbuild', path.join(BIN, 'esbuild'), ['main.mjs', '--bundle', '--format=esm', '--platform=neutral', '--conditions=workerd,worker,browser', '--external:*.wasm', '--outfile=dist/main.js', '--log-level=warning'], { cwd: dir });
    copyWasmBeside(ctx, path.join(dir, 'dist'));
    return { host: 'workerd', modules: bundleModules(path.join(dir, 'dist'), 'main.js') };
  },
  async vite(ctx, dir) {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.browser(ctx.style));
    writeFileSync(path.join(dir, 'index.html'), page('./main.mjs'));
    writeFileSync(path.join(dir, 'vite.config.mjs'), `export default { root: ${JSON.stringify(dir)}, base: "./", logLevel: "warn", build: { outDir: "dist", emptyOutDir: true } };\n`);
    await mustExec('vite', path.join(BIN, 'vite'), ['build', '--config', 'vite.config.mjs'], { cwd: dir });
    return { host: 'browser', html: 'dist/index.html', emits: 'dist' };
  },
  async webpack(ctx, dir) {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.browser(ctx.style));
    writeFileSync(path.join(dir, 'webpack.config.mjs'), `export default { mode: "production", entry: "./main.mjs", output: { path: ${JSON.stringify(path.join(dir, 'dist'))}, filename: "main.js", clean: true }, performance: { hints: false } };\n`);
    await mustExec('webpack', path.join(BIN, 'webpack'), ['--config', 'webpack.config.mjs', '--no-stats'], { cwd: dir });
    writeFileSync(path.join(dir, 'dist/index.html'), page('main.js', null));
    return { host: 'browser', html: 'dist/index.html', emits: 'dist' };
  },
  async wrangler(ctx, dir) { // Wrangler's own build, offline: a dry run to a folder
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.workerd(ctx.style));
    writeFileSync(path.join(dir, 'wrangler.toml'), `name = "bundler-check"\nmain = "main.mjs"\ncompatibility_date = "${COMPAT_DATE}"\n`);
    await mustExec('wrangler', path.join(BIN, 'wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], {
      cwd: dir, env: { WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1', WRANGLER_LOG_PATH: path.join(dir, 'logs') },
    });
    return { host: 'workerd', modules: bundleModules(path.join(dir, 'dist'), 'main.js') };
  },
  async 'bun-browser'(ctx, dir) {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.browser(ctx.style));
    await mustExec('bun build', path.join(BIN, 'bun'), ['build', 'main.mjs', '--target=browser', '--format=esm', '--outfile=dist/main.js'], { cwd: dir, env: { DO_NOT_TRACK: '1' } });
    copyWasmBeside(ctx, path.join(dir, 'dist'), true);
    writeFileSync(path.join(dir, 'dist/index.html'), page('main.js'));
    return { host: 'browser', html: 'dist/index.html' };
  },
  async 'bun-bun'(ctx, dir) {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.script(ctx.style));
    await mustExec('bun build', path.join(BIN, 'bun'), ['build', 'main.mjs', '--target=bun', '--format=esm', '--outfile=dist/main.mjs'], { cwd: dir, env: { DO_NOT_TRACK: '1' } });
    copyWasmBeside(ctx, path.join(dir, 'dist'));
    return { host: 'bun', script: 'dist/main.mjs' };
  },
  // Unbundled: each runtime's own resolver, the package as installed.
  'unbundled-node': unbundledScript('node'),
  'unbundled-deno': unbundledScript('deno'),
  'unbundled-bun': unbundledScript('bun'),
  async 'unbundled-workerd'(ctx, dir) {
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.workerd(ctx.style));
    return { host: 'workerd', modules: unbundledWorkerdModules(ctx, dir) };
  },
  async 'script-module'(ctx, dir) { // a plain <script type="module"> with an import map
    writeFileSync(path.join(dir, 'main.mjs'), MAIN.browser(ctx.style));
    const entry = path.relative(ctx.projectDir, resolveExport(ctx.pkgDir, ['browser', 'import', 'default'])).split(path.sep).join('/');
    writeFileSync(path.join(dir, 'index.html'), page('main.mjs').replace('<script type="module"',
      `<script type="importmap">${JSON.stringify({ imports: { saferetry: `/static/${entry}` } })}</script>\n<script type="module"`));
    return { host: 'browser', html: 'index.html' };
  },
};

/** workerd resolves a bare `saferetry` from "app/x/y.mjs" as "app/x/saferetry":
 * the app's modules keep their folders under "app/", and the package's
 * modules are named relative to its `workerd` entry in the app's folder. */
function unbundledWorkerdModules(ctx, dir) {
  const modules = [
    { name: 'app/main/main.mjs', file: path.join(dir, 'main.mjs'), type: 'esModule' },
    { name: `app/app/${ctx.style}.mjs`, file: path.join(ctx.appCopy, `${ctx.style}.mjs`), type: 'esModule' },
    { name: 'app/app/check.mjs', file: path.join(ctx.appCopy, 'check.mjs'), type: 'esModule' },
  ];
  const entry = resolveExport(ctx.pkgDir, ['workerd', 'worker', 'browser', 'import', 'default']);
  for (const [file, type] of moduleGraph(entry)) {
    const rel = path.relative(path.dirname(entry), file).split(path.sep).join('/');
    modules.push({ name: file === entry ? 'app/app/saferetry' : path.posix.normalize(`app/app/${rel}`), file, type });
  }
  return modules;
}

/** A page bundler that copies the wasm itself (Vite, webpack: under names of
 * its own) copied the browser's module and not the full one (byte for
 * byte); null when it did, else why not. */
function emittedWasm(ctx, distDir) {
  const bytes = (f) => readFileSync(f).toString('base64');
  const [web, full] = [WEB_WASM, WASM].map((f) => bytes(path.join(ctx.pkgDir, 'src', f)));
  const files = readdirSync(distDir, { recursive: true }).filter((f) => String(f).endsWith('.wasm'));
  const emitted = files.map((f) => bytes(path.join(distDir, String(f))));
  if (emitted.includes(full)) return `the page's build carries the full module (${WASM}), not only the browser's: ${files.join(', ')}`;
  return emitted.includes(web) ? null : `the page's build carries no ${WEB_WASM}: ${files.join(', ') || 'no .wasm'}`;
}

// ---------------- hosts: run a built output, get its result ----------------
const SCRIPT_HOSTS = {
  node: (script) => [process.execPath, [script]],
  bun: (script) => [path.join(BIN, 'bun'), ['run', script]],
  deno: (script, ctx) => [path.join(BIN, 'deno'), ['run', '--no-prompt', '--allow-net=127.0.0.1', `--allow-read=${ctx.projectDir}`, '--node-modules-dir=manual', '--no-lock', script]],
};

async function runScript(built, ctx, dir, runId) {
  const [cmd, args] = SCRIPT_HOSTS[built.host](built.script, ctx);
  const r = await exec(built.host, cmd, [...args, ctx.server.url, runId], {
    cwd: dir, env: { DENO_NO_UPDATE_CHECK: '1', DO_NOT_TRACK: '1', NO_COLOR: '1' }, ms: RUN_MS,
  });
  if (r.code !== 0) return { error: `exit ${r.code}: ${r.err.trim()}` };
  const line = r.out.trim().split('\n').pop();
  try { return JSON.parse(line); } catch { return { error: `no JSON result: ${r.out}\n${r.err}` }; }
}

async function runBrowser(built, ctx, dir, runId) {
  const rel = path.relative(ctx.projectDir, path.join(dir, built.html)).split(path.sep).join('/');
  const url = `${ctx.server.url}/static/${rel}?${new URLSearchParams({ base: ctx.server.url, run: runId })}`;
  ctx.browser ??= await launch('chromium');
  const r = await runPage({ browser: 'chromium', url, timeoutMs: RUN_MS, handle: ctx.browser, onLog: (l) => note(`page: ${l}`) });
  return r.result;
}

async function runWorkerd(built, ctx, dir, runId) {
  const config = workerdConfig({
    dir, modules: built.modules, compatibilityDate: COMPAT_DATE, bindings: { FAULT_URL: ctx.server.url },
  });
  writeFileSync(path.join(dir, 'workerd.capnp'), config);
  const p = start('workerd', path.join(BIN, 'workerd'), ['serve', 'workerd.capnp', '--control-fd=3'], { cwd: dir, extraFds: 1, echo: false });
  try {
    const port = await workerdPort(p);
    const res = await fetch(`http://127.0.0.1:${port}/?run=${runId}`, { signal: AbortSignal.timeout(RUN_MS) });
    return await res.json();
  } catch (e) {
    return { error: `${e.message}\n${p.tail}` };
  } finally {
    await stop(p);
  }
}

const HOSTS = { node: runScript, bun: runScript, deno: runScript, browser: runBrowser, workerd: runWorkerd };
const EXPECT_RUNTIME = { node: 'node', bun: 'bun', deno: 'deno', browser: 'browser', workerd: 'workerd' };

// ---------------- cases ----------------
let seq = 0;
async function serverCount(ctx, runId) {
  const res = await fetch(`${ctx.server.url}/count/${runId}`, { signal: AbortSignal.timeout(5000) });
  return (await res.json()).requests;
}

/** Builds and runs one (target, style); returns null when it behaved, else why not. */
async function runCase(ctx, target, style) {
  const dir = path.join(ctx.root, `${target}-${style}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const built = await BUILDS[target]({ ...ctx, style }, dir);
  const runId = `b${process.pid}-${++seq}`;
  const r = await HOSTS[built.host](built, ctx, dir, runId);
  // The poll: one submit, one poll (the task is done at once); in a page,
  // exactly one wasm more fetched by the first poll — its own module.
  const poll = { kind: 'succeeded', attempts: ['submit 202', 'poll 200'], body: 'done', wasmFetchedByThePoll: built.host === 'browser' ? 1 : undefined };
  const want = { status: 200, body: 'status 200 (request 2)', attempts: [503, 200], runtime: EXPECT_RUNTIME[built.host], poll };
  if (r?.error) return r.error;
  const p = r?.poll; // (a page's result comes back with its keys in another order)
  const got = { status: r?.status, body: r?.body, attempts: r?.attempts, runtime: r?.runtime, poll: p && { kind: p.kind, attempts: p.attempts, body: p.body, wasmFetchedByThePoll: p.wasmFetchedByThePoll } };
  if (JSON.stringify(got) !== JSON.stringify(want)) return `got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  if (built.emits) {
    const wrong = emittedWasm(ctx, path.join(dir, built.emits));
    if (wrong) return wrong;
  }
  const requests = await serverCount(ctx, runId);
  if (requests !== 2) return `the server saw ${requests} requests, expected 2`;
  const polled = await serverCount(ctx, `${runId}-poll`);
  return polled === 2 ? null : `the server saw ${polled} requests of the poll, expected 2 (one submit, one poll)`;
}

/** A build that lost the wasm file fails at import with an error naming the
 * file and the README's bundler note, in Node and in a browser. */
async function runMissingWasm(ctx, target) {
  const dir = path.join(ctx.root, `${target}-missing-wasm`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const built = await BUILDS[target]({ ...ctx, style: 'named', withoutWasm: true }, dir);
  const r = await HOSTS[built.host](built, ctx, dir, `b${process.pid}-${++seq}`);
  const text = String(r?.error ?? '');
  const file = built.host === 'browser' ? WEB_WASM : WASM;
  return text.includes(file) && text.includes('Install and bundle') ? null : `expected an error naming ${file} and "Install and bundle", got ${JSON.stringify(r).slice(0, 600)}`;
}

/** A build that lost the poll's wasm file still imports and fetches; its
 * first poll's `result` rejects with an error naming that file and the
 * README's bundler note (the one rejection of `result`), in Node and in a
 * browser. */
async function runMissingPollWasm(ctx, target) {
  const dir = path.join(ctx.root, `${target}-missing-poll-wasm`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const built = await BUILDS[target]({ ...ctx, style: 'named', withoutPollWasm: true }, dir);
  const runId = `b${process.pid}-${++seq}`;
  const r = await HOSTS[built.host](built, ctx, dir, runId);
  const text = String(r?.error ?? '');
  if (!text.includes(POLL_WASM) || !text.includes('Install and bundle')) return `expected an error naming ${POLL_WASM} and "Install and bundle", got ${JSON.stringify(r).slice(0, 600)}`;
  const requests = await serverCount(ctx, runId);
  return requests === 2 ? null : `the fetch before the poll: the server saw ${requests} requests, expected 2`;
}

/** A page whose server sends the wasm files as `application/octet-stream`
 * (no streaming compile then): each module is compiled from its bytes
 * (js/src/compile.js, as wasm-bindgen's loader does) and the page retries
 * and polls as ever. The page's `fetch` relabels every `.wasm` answer. */
async function runWasmWithoutMime(ctx) {
  const dir = path.join(ctx.root, 'esbuild-browser-octet-stream');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const built = await BUILDS['esbuild-browser']({ ...ctx, style: 'named' }, dir);
  const html = path.join(dir, built.html);
  writeFileSync(html, readFileSync(html, 'utf8').replace(ERRORS_TO_RESULT, `${ERRORS_TO_RESULT}<script>
  const plainFetch = fetch;
  window.relabelled = [];
  window.fetch = async (input, init) => {
    const r = await plainFetch(input, init);
    if (!String(input).endsWith('.wasm')) return r;
    window.relabelled.push(String(input).split('/').pop());
    return new Response(await r.arrayBuffer(), { status: r.status, headers: { 'Content-Type': 'application/octet-stream' } });
  };
</script>`));
  const runId = `b${process.pid}-${++seq}`;
  const r = await HOSTS[built.host](built, ctx, dir, runId);
  if (r?.error) return r.error;
  const got = { status: r?.status, attempts: r?.attempts, poll: r?.poll?.kind };
  const want = { status: 200, attempts: [503, 200], poll: 'succeeded' };
  if (JSON.stringify(got) !== JSON.stringify(want)) return `got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  const wasm = await ctx.browser.session.executeScript('return window.relabelled.join()');
  return wasm === `${WEB_WASM},${POLL_WASM}` ? null : `the page's wasm fetches relabelled: ${wasm}, expected ${WEB_WASM},${POLL_WASM}`;
}

/** The core without a runtime entry (what a build that dropped the entry's
 * initialisation would run) says so instead of failing inside the glue. */
async function runCoreWithoutEntry(ctx) {
  const dir = path.join(ctx.root, 'core-without-entry');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'main.mjs'), `import { RetryPolicy } from ${JSON.stringify(path.join(ctx.pkgDir, 'src/core.js'))};
try { new RetryPolicy(); console.log(JSON.stringify({ error: "constructed" })); } catch (e) { console.log(JSON.stringify({ message: e.message })); }
`);
  const r = await runScript({ host: 'node', script: 'main.mjs' }, ctx, dir, 'unused');
  return /never initialised/.test(r?.message ?? '') && r.message.includes('Install and bundle') ? null : `got ${JSON.stringify(r)}`;
}

/** js/src/hops.js (saferetry following redirects hop by hop) is in a Node
 * and a Worker bundle and not in a page's: a browser's `fetch` follows
 * redirects, and only the runtime entries that need hops.js import it. */
async function runFollowerBundled(ctx) {
  const MARK = 'a 307/308 redirect needs the request body again'; // hops.js's own message
  const outputs = { 'esbuild-browser': 'dist/main.js', 'esbuild-node': 'dist/main.mjs', 'esbuild-workerd': 'dist/main.js' };
  const carried = {};
  for (const [target, file] of Object.entries(outputs)) {
    const dir = path.join(ctx.root, `${target}-follower`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await BUILDS[target]({ ...ctx, style: 'named' }, dir);
    carried[target] = readFileSync(path.join(dir, file), 'utf8').includes(MARK);
  }
  const want = { 'esbuild-browser': false, 'esbuild-node': true, 'esbuild-workerd': true };
  return JSON.stringify(carried) === JSON.stringify(want) ? null : `hops.js in the bundle: got ${JSON.stringify(carried)}, want ${JSON.stringify(want)}`;
}

/** The JS a split bundle's entry loads before it runs: the entry chunk and
 * the chunks it imports statically, transitively (not those it `import()`s). */
function staticChunks(dist, entry) {
  const seen = new Map();
  for (const todo = [entry]; todo.length > 0; ) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    const js = readFileSync(path.join(dist, file), 'utf8');
    seen.set(file, js);
    for (const [, dep] of js.matchAll(/(?:^|[;}\s])(?:import|export)\s*(?:[\w$*{][^;"']*?from\s*)?["']\.\/([^"']+\.js)["']/g)) todo.push(dep);
  }
  return [...seen.values()].join('\n');
}

/** A page that only imports `RetryPolicy` carries no leased client: not
 * its relay (js/src/lease-relay.js) nor the fleet's module it runs in
 * (saferetry_authority_bg.wasm); a page with a `tabBudget` carries both,
 * and a Node bundle the relay (its carriers of their own find the fleet's
 * module at first use). Bundled with esbuild, and with Vite and webpack,
 * which emit the wasm a build loads under names of their own; and with
 * esbuild split at each `import()` (`--splitting`), where what counts is
 * what the entry loads before it runs: the fleet's module only when a
 * `tabBudget` asks for it. */
async function runLeaseBundled(ctx) {
  const RELAY = 'links[handle]'; // lease-relay.js's own code (esbuild keeps names unminified)
  const apps = {
    only: 'import { RetryPolicy } from "saferetry";\nexport const run = async () => ({ policy: String(new RetryPolicy().runtime) });\n',
    tabs: 'import { RetryPolicy, tabBudget } from "saferetry";\nexport const run = async () => ({ policy: String(new RetryPolicy({ shared: tabBudget("x") }).runtime) });\n',
  };
  const carried = {};
  for (const [app, code] of Object.entries(apps)) {
    for (const target of ['esbuild-browser', 'esbuild-node', 'vite', 'webpack', 'esbuild-split']) {
      if (app === 'tabs' && target === 'esbuild-node') continue;
      const style = `lease-${app}`;
      const dir = path.join(ctx.root, `${target}-${style}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(ctx.appCopy, `${style}.mjs`), code);
      if (target === 'esbuild-split') {
        writeFileSync(path.join(dir, 'main.mjs'), MAIN.browser(style));
        await mustExec('esbuild', path.join(BIN, 'esbuild'), ['main.mjs', '--bundle', '--splitting', '--format=esm', '--platform=browser', '--outdir=dist', '--log-level=warning'], { cwd: dir });
        const loaded = staticChunks(path.join(dir, 'dist'), 'main.js');
        carried[`${target} ${app}`] = { relay: loaded.includes(RELAY), fleet: loaded.includes(AUTHORITY_WASM) };
        continue;
      }
      const built = await BUILDS[target]({ ...ctx, style }, dir);
      const out = built.emits ? path.join(dir, built.emits) : path.join(dir, 'dist');
      const files = readdirSync(out, { recursive: true }).map(String);
      const js = files.filter((f) => /\.m?js$/.test(f)).map((f) => readFileSync(path.join(out, f), 'utf8')).join('\n');
      // Vite emits every asset a module it read names, used or not: the
      // fleet's wasm is carried when the code names the file it emitted.
      const authority = readFileSync(path.join(ctx.pkgDir, 'src', AUTHORITY_WASM)).toString('base64');
      const emitted = files.find((f) => f.endsWith('.wasm') && readFileSync(path.join(out, f)).toString('base64') === authority);
      carried[`${target} ${app}`] = {
        relay: target.startsWith('esbuild') ? js.includes(RELAY) : undefined,
        fleet: js.includes(built.emits ? path.basename(emitted ?? AUTHORITY_WASM) : AUTHORITY_WASM),
      };
    }
  }
  const want = {
    'esbuild-browser only': { relay: false, fleet: false },
    'esbuild-node only': { relay: true, fleet: true },
    'vite only': { fleet: false },
    'webpack only': { fleet: false },
    'esbuild-split only': { relay: false, fleet: false },
    'esbuild-browser tabs': { relay: true, fleet: true },
    'vite tabs': { fleet: true },
    'webpack tabs': { fleet: true },
    'esbuild-split tabs': { relay: true, fleet: false },
  };
  return JSON.stringify(carried) === JSON.stringify(want) ? null : `got ${JSON.stringify(carried)}, want ${JSON.stringify(want)}`;
}

/** The browser's module outside a browser (a page bundle that Deno runs:
 * its `fetch` reads the wasm from a file URL) has no redirect hops, which
 * Deno's attempts need (`policy::redirect::follower`): each attempt fails
 * before sending, with the error the full module gave when an entry handed
 * it no hops (src/host/attempt/nohops.rs), and the server sees nothing. */
async function runBrowserModuleOutside(ctx) {
  const dir = path.join(ctx.root, 'browser-module-in-deno');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'dist'), { recursive: true });
  writeFileSync(path.join(dir, 'main.mjs'), `import { RetryPolicy } from "saferetry";
const [base, runId] = Deno.args;
const policy = new RetryPolicy({ maxAttempts: 2, baseMs: 1, capMs: 5 });
try {
  const res = await policy.fetch(\`\${base}/s/seq/\${runId}?steps=200\`);
  console.log(JSON.stringify({ status: res.status }));
} catch (e) {
  const attempts = e.report?.attempts.map((a) => \`\${a.error?.stage}/\${a.error?.code}\`);
  console.log(JSON.stringify({ name: e.name, reason: e.reason, attempts, cause: e.cause?.message, runtime: policy.runtime }));
}
`);
  await mustExec('esbuild', path.join(BIN, 'esbuild'), ['main.mjs', '--bundle', '--format=esm', '--platform=browser', '--outfile=dist/main.js', '--log-level=warning'], { cwd: dir });
  copyWasmBeside(ctx, path.join(dir, 'dist'), true);
  const runId = `b${process.pid}-${++seq}`;
  const r = await runScript({ host: 'deno', script: 'dist/main.js' }, ctx, dir, runId);
  const cause = 'saferetry: this entry cannot follow redirects hop by hop (the browser entry, src/web.js, loaded outside a browser?); see "Install and bundle" in saferetry\'s README';
  const want = { name: 'RetryError', reason: 'attempts-exhausted', attempts: ['not-sent/setup', 'not-sent/setup'], cause, runtime: 'deno' };
  if (JSON.stringify(r) !== JSON.stringify(want)) return `got ${JSON.stringify(r)}, expected ${JSON.stringify(want)}`;
  const requests = await serverCount(ctx, runId);
  return requests === 0 ? null : `the server saw ${requests} requests, expected none`;
}

async function main() {
  const [dirArg, filter] = process.argv.slice(2);
  if (!dirArg) {
    console.error('usage: node tests/bundlers/run.mjs <projectDir> [filter]');
    return 2;
  }
  const projectDir = path.resolve(dirArg);
  const pkgDir = path.join(projectDir, 'node_modules/saferetry');
  const root = path.join(projectDir, 'bundlers');
  rmSync(root, { recursive: true, force: true });
  const appCopy = path.join(root, 'app');
  mkdirSync(appCopy, { recursive: true });
  for (const f of readdirSync(path.join(HERE, 'app'))) copyFileSync(path.join(HERE, 'app', f), path.join(appCopy, f));
  const server = await startFaultServer(projectDir);
  const ctx = { projectDir, pkgDir, root, appCopy, server, browser: null };
  const cases = [];
  for (const target of Object.keys(BUILDS)) {
    for (const style of STYLES) cases.push([`${target} ${style} import`, () => runCase(ctx, target, style)]);
  }
  cases.push(['esbuild-node without the wasm file: the import names the file', () => runMissingWasm(ctx, 'esbuild-node')]);
  cases.push(['esbuild-browser without the wasm file: the import names the file', () => runMissingWasm(ctx, 'esbuild-browser')]);
  cases.push(['esbuild-node without the poll\'s wasm file: the first poll\'s result rejects naming the file', () => runMissingPollWasm(ctx, 'esbuild-node')]);
  cases.push(['esbuild-browser without the poll\'s wasm file: the first poll\'s result rejects naming the file', () => runMissingPollWasm(ctx, 'esbuild-browser')]);
  cases.push(['a page whose wasm files come as application/octet-stream compiles them from their bytes, then retries and polls as ever', () => runWasmWithoutMime(ctx)]);
  cases.push(['the core without its runtime entry says it was never initialised', () => runCoreWithoutEntry(ctx)]);
  cases.push(['a page bundle leaves out the redirect follower (hops.js), which Node and Worker bundles carry', () => runFollowerBundled(ctx)]);
  cases.push(['a page that only imports RetryPolicy leaves out the leased client (its relay and the fleet\'s wasm), which a tabBudget page and a Node bundle carry', () => runLeaseBundled(ctx)]);
  cases.push(['the browser\'s module run outside a browser fails each attempt before sending, naming the browser entry', () => runBrowserModuleOutside(ctx)]);
  let passed = 0, failed = 0;
  try {
    for (const [name, fn] of cases.filter(([n]) => !filter || n.includes(filter))) {
      if (Date.now() - t0 > RUN_BUDGET_MS) { failed += 1; console.log(`FAIL ${name} — not run: the tier's time budget passed`); continue; }
      const t = Date.now();
      let why;
      try { why = await fn(); } catch (e) { why = e.stack ?? String(e); }
      if (why) { failed += 1; console.log(`FAIL ${name} — ${why}`); } else { passed += 1; console.log(`ok ${name} (${Date.now() - t} ms)`); }
    }
  } finally {
    await ctx.browser?.close();
    await stop(server.proc);
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

await runMain('bundlers', main);
