// Runs a runtime-agnostic suite — the e2e suite (tests/e2e/suite.mjs,
// unchanged) or the fidelity suite (tests/fidelity/suite.mjs) — against the
// PACKED package installed in a project (scripts/pack-install.sh
// <projectDir>), in one runtime:
//
//   node tests/runtimes/run.mjs <runtime> <projectDir> [filter] [--suite e2e|fidelity|streams] [--mode M] [--shapes FILE] [--location]
//     runtime: node | deno | bun | workerd | chromium | firefox | webkit | bundle
//              (bundle = the page built by esbuild from the package, in Chromium)
//     --mode M: passed to the suite's runSuite (fidelity: "selfcheck")
//     --location: Deno runs with `--location` at the suite server's main
//              origin (a caller's origin: tests/fidelity/cases-origin.mjs)
//     --shapes FILE: the suite's "shapes" mode (fidelity: what the host's own
//              fetch throws for each deterministic failure), written to FILE as JSON
//
// The e2e suite runs from the project folder against the fault server; the
// fidelity suite from <projectDir>/fidelity/ (its files copied there) against
// its own recording server. Either server runs as its own Node process (its
// CLI, --static <projectDir>).
// Each runtime loads the package through its own resolver and export
// condition; the entry file it got is printed and checked against the
// package's `exports`. Prints the suite's lines, then exactly one
// "N passed, M failed" line for the runtime, then a timing line; exits 1 on any
// failure (or if nothing ran). Every process started here is killed at the end,
// on error and on SIGINT/SIGTERM; every wait is bounded.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  live, moduleGraph, resolveExport, runMain, start, startFaultServer, stop, waitExit, workerdConfig, workerdPort,
} from './procs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const BIN = path.join(REPO, 'node_modules/.bin');
const RUNTIMES = ['node', 'deno', 'bun', 'workerd', 'chromium', 'firefox', 'webkit', 'bundle'];
// Where each suite runs from and which server it talks to. `files`: [repo
// path, project path] copied into the project, in the repo's layout (the e2e
// suite's own are put in the project by scripts/pack-install.sh).
const inProject = (dir) => readdirSync(path.join(REPO, dir)).filter((f) => f.endsWith('.mjs'))
  .map((f) => [path.join(REPO, dir, f), path.join(path.basename(dir), f)]);
const SUITES = {
  e2e: { folder: '', files: [], server: undefined },
  fidelity: {
    folder: 'fidelity',
    files: [...inProject('tests/fidelity'), [path.join(REPO, 'tests/e2e/run-cases.mjs'), 'e2e/run-cases.mjs']],
    server: path.join(REPO, 'tests/fidelity/server.mjs'),
  },
  // tests/streams: every case at once (each reads a 12 s stream), so workerd gets them all at once too
  streams: {
    folder: 'streams',
    files: [...inProject('tests/streams'), [path.join(REPO, 'tests/e2e/run-cases.mjs'), 'e2e/run-cases.mjs']],
    server: path.join(REPO, 'tests/streams/server.mjs'),
    concurrent: true,
    caseTimeoutMs: 45_000,
  },
};
// Conditions each runtime's resolver has active (the first matching key of
// `exports`, in the package's key order, wins; `types` is never active).
const CONDITIONS = {
  node: ['node', 'import', 'default'],
  deno: ['deno', 'node', 'import', 'default'],
  bun: ['bun', 'node', 'import', 'default'],
  workerd: ['workerd', 'worker', 'browser', 'import', 'default'], // as wrangler resolves for workerd
  browser: ['browser', 'import', 'default'], // esbuild --platform=browser; a browser import map points there too
};
// What `new RetryPolicy().runtime` must say in each (the wasm's error rules).
const DETECTED = { node: 'node', deno: 'deno', bun: 'bun', workerd: 'workerd', chromium: 'browser', firefox: 'browser', webkit: 'browser', bundle: 'browser' };
const RUN_BUDGET_MS = Number(process.env.SAFERETRY_RUNTIME_BUDGET_MS) || 8 * 60_000; // the whole run, hard stop
const CASE_TIMEOUT_MS = 15_000; // the suite's own per-case bound
const WORKERD_COMPAT_DATE = '2025-06-01'; // as in docs/runtime-errors.md's measurements

const t0 = Date.now();
const stamp = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
const note = (line) => process.stderr.write(`[run ${stamp()}] ${line}\n`);

const COUNT_LINE = /^(\d+) passed, (\d+) failed$/;

// ---------------- Node, Deno, Bun: the runner in the project, by the runtime's own resolver ----------------
async function runScriptRuntime(runtime, { projectDir, suiteDir, mode, location: withLocation }, server, filter, deadline) {
  const bin = runtime === 'node' ? process.execPath : path.join(BIN, runtime);
  const runner = path.relative(projectDir, path.join(suiteDir, 'runner.mjs'));
  const rest = [runner, runtime, server.url, server.altUrl, filter ?? '', mode];
  // --location: Deno with a caller's origin, the main server's (tests/fidelity/cases-origin.mjs).
  const location = withLocation ? [`--location=${server.url}/page`] : [];
  const args = runtime === 'deno'
    ? ['run', '--no-prompt', '--allow-net=127.0.0.1', `--allow-read=${projectDir}`, '--node-modules-dir=manual', '--no-lock', ...location, ...rest]
    : runtime === 'node' ? rest : ['run', ...rest];
  const env = runtime === 'deno'
    ? { DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }
    : { DO_NOT_TRACK: '1', NO_COLOR: '1' };
  note(`${path.relative(REPO, bin)} ${args.join(' ')}   (cwd ${projectDir})`);
  const p = start(runtime, bin, args, { cwd: projectDir, env });
  const code = await waitExit(p, deadline);
  const entry = p.lines.map((l) => /^entry (\S+)/.exec(l)?.[1]).find(Boolean) ?? null;
  const detected = p.lines.map((l) => /^detected (\S+)/.exec(l)?.[1]).find(Boolean) ?? null;
  const counts = p.lines.map((l) => COUNT_LINE.exec(l)).filter(Boolean).pop();
  return { code, entry: entry && fileURLToPath(entry), detected, lines: p.lines, counts: counts && { passed: +counts[1], failed: +counts[2] } };
}

// ---------------- workerd: one case per request ----------------

async function runWorkerd({ projectDir, suiteDir, mode, suite }, server, filter, deadline) {
  const pkgDir = path.join(projectDir, 'node_modules/saferetry');
  const entry = resolveExport(pkgDir, CONDITIONS.workerd);
  const genDir = path.join(suiteDir, 'gen');
  mkdirSync(genDir, { recursive: true });
  // workerd resolves a bare `saferetry` from "app/worker.mjs" as the module
  // named "app/saferetry", and the entry's relative imports from that name.
  // So every package module is named by its path relative to the entry's
  // folder, under the worker's folder "app/" (deep enough for the entry's "../").
  // The suite's own modules: worker.mjs and every module suite.mjs imports.
  const modules = [{ name: 'app/worker.mjs', file: path.join(suiteDir, 'worker.mjs'), type: 'esModule' }];
  for (const file of moduleGraph(path.join(suiteDir, 'suite.mjs')).keys()) { // named as workerd resolves them from app/suite.mjs
    modules.push({ name: path.posix.normalize(`app/${path.relative(suiteDir, file).split(path.sep).join('/')}`), file, type: 'esModule' });
  }
  for (const [file, type] of moduleGraph(entry)) {
    const rel = path.posix.normalize(`app/${path.relative(path.dirname(entry), file).split(path.sep).join('/')}`);
    if (rel.startsWith('..')) throw new Error(`package module ${file} lies outside what "app/" can reach`);
    modules.push({ name: file === entry ? 'app/saferetry' : rel, file, type });
  }
  const config = workerdConfig({
    dir: genDir, modules, compatibilityDate: WORKERD_COMPAT_DATE,
    comment: `Generated by tests/runtimes/run.mjs: the ${path.basename(suiteDir)} suite in workerd, one case per request.`,
    bindings: { FAULT_URL: server.url, FAULT_ALT_URL: server.altUrl },
  });
  const configFile = path.join(genDir, 'workerd.capnp');
  writeFileSync(configFile, config);
  for (const m of modules) note(`workerd module ${m.name} = ${m.type} ${path.relative(projectDir, m.file)}`);
  const lines = [];

  // --control-fd=3: workerd reports the port it bound (address 127.0.0.1:0) as JSON lines.
  const args = ['serve', configFile, '--control-fd=3'];
  note(`${path.relative(REPO, path.join(BIN, 'workerd'))} ${args.join(' ')}`);
  const p = start('workerd', path.join(BIN, 'workerd'), args, { cwd: projectDir, extraFds: 1 });
  try {
    const port = await workerdPort(p);
    const base = `http://127.0.0.1:${port}`;
    const get = async (pathname, ms = 10_000) => {
      const res = await fetch(base + pathname, { signal: AbortSignal.timeout(ms) });
      const text = await res.text();
      if (!res.ok) throw new Error(`workerd GET ${pathname}: ${res.status} ${text.slice(0, 500)}`);
      return JSON.parse(text);
    };
    const { runtime: detected } = await get('/detected');
    console.log(`detected ${detected}`);
    const list = await get('/list');
    note(`workerd listening on ${base}; ${list.length} cases`);
    // In "shapes" mode the worker numbers only the suite's shape cases.
    const selected = (mode === 'shapes' ? list.filter((c) => c.shape).map((c, index) => ({ ...c, index })) : list)
      .filter((c) => selects(filter, c.name));
    let passed = 0, failed = 0, skipped = 0;
    const caseMs = suite.caseTimeoutMs ?? CASE_TIMEOUT_MS;
    const runCase = async (c) => { // bounded: one request per case, each bounded
      if (Date.now() > deadline) { failed += 1; console.log(`FAIL ${c.name} — not run: the run's deadline passed`); return; }
      let r;
      try {
        r = await get(`/run?case=${c.index}&timeoutMs=${caseMs}&mode=${mode}`, caseMs + 10_000);
        if (r.name !== c.name) throw new Error(`case ${c.index} is ${JSON.stringify(r.name)}, expected ${JSON.stringify(c.name)}`);
      } catch (err) {
        r = { name: c.name, ok: false, line: `FAIL ${c.name} — request failed: ${err.message}${live.has(p) ? '' : `\n${p.tail}`}` };
      }
      console.log(r.line);
      lines.push(r.line);
      if (r.skipped) skipped += 1; else if (r.ok) passed += 1; else failed += 1;
    };
    if (suite.concurrent) await Promise.all(selected.map(runCase));
    else for (const c of selected) await runCase(c);
    if (skipped) console.log(`(${skipped} skipped)`);
    console.log(`${passed} passed, ${failed} failed`);
    return { code: failed === 0 && passed > 0 ? 0 : 1, entry, detected, lines, counts: { passed, failed } };
  } finally {
    await stop(p);
  }
}

function selects(filter, name) {
  return !filter || name.toLowerCase().includes(String(filter).toLowerCase());
}

// ---------------- browsers ----------------
function pageHtml({ title, importMap, script }) {
  return `<!doctype html>
<meta charset="utf-8">
<title>${title}</title>
<script>
  window.__log = [];
  // A failure before the suite starts ends the page at once; later stray errors are logged.
  const fatal = (what) => {
    window.__log.push('page error: ' + what);
    if (!window.__started && window.__result === undefined) window.__result = { error: String(what) };
  };
  addEventListener('error', (e) => fatal(e.error?.stack ?? e.message));
  addEventListener('unhandledrejection', (e) => fatal(e.reason?.stack ?? e.reason));
</script>
${importMap ? `<script type="importmap">${JSON.stringify({ imports: importMap })}</script>\n` : ''}<script type="module" src="${script}" onerror="fatal('module script ${script} or one of its imports failed to load')"></script>
`;
}

async function buildBundle(projectDir, suiteDir, entry) {
  const outDir = path.join(suiteDir, 'gen/bundle');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(path.join(outDir, 'dist'), { recursive: true });
  const outfile = path.join(outDir, 'dist/page.js');
  const meta = path.join(outDir, 'meta.json');
  const args = [path.join(suiteDir, 'page.mjs'), '--bundle', '--format=esm', '--platform=browser',
    `--outfile=${outfile}`, `--metafile=${meta}`, '--log-level=warning'];
  note(`${path.relative(REPO, path.join(BIN, 'esbuild'))} ${args.map((a) => a.replace(projectDir, '<project>')).join(' ')}`);
  const p = start('esbuild', path.join(BIN, 'esbuild'), args, { cwd: projectDir });
  const code = await waitExit(p, Date.now() + 60_000);
  if (code !== 0) throw new Error(`esbuild failed (${code}):\n${p.tail}`);
  const inputs = Object.keys(JSON.parse(readFileSync(meta, 'utf8')).inputs);
  const fromPkg = inputs.filter((f) => f.includes('node_modules/saferetry/')).sort();
  note(`bundle: ${(readFileSync(outfile).length / 1024).toFixed(1)} KB; package files in it: ${fromPkg.join(', ')}`);
  // esbuild leaves `new URL("<rel>", import.meta.url)` alone, and in the
  // bundle import.meta.url is the bundle's URL: the wasm must be served at
  // <rel> relative to the bundle. Copy each where the package's loaders
  // point (the entry's module, and the authority's, the poll's and the
  // outbox's rules' when the bundle has them, as the README asks of a
  // bundler that does not copy assets; the glue's own default is not used
  // when a loader passes a URL).
  const urlRefs = (src) => [...new Set([...src.matchAll(/new URL\(\s*(["'])([^"']+\.wasm)\1\s*,\s*import\.meta\.url\s*\)/g)].map((m) => m[2]))];
  const bundleRefs = urlRefs(readFileSync(outfile, 'utf8'));
  const loaders = [entry, ...['authority.js', 'poll-web.js', 'outbox-rules.js'].map((f) => path.join(path.dirname(entry), f))].filter((f) => existsSync(f));
  const entryRefs = loaders.flatMap((f) => urlRefs(readFileSync(f, 'utf8'))).filter((r) => bundleRefs.includes(r));
  const targets = entryRefs.length ? entryRefs : bundleRefs;
  if (!targets.length) throw new Error('the bundle references no .wasm through new URL(..., import.meta.url)');
  const served = [];
  for (const rel of targets) {
    const wasm = path.join(projectDir, 'node_modules/saferetry/src', path.basename(rel));
    const dest = path.resolve(path.dirname(outfile), rel);
    if (!dest.startsWith(outDir + path.sep)) throw new Error(`wasm path ${rel} leaves the bundle folder`);
    mkdirSync(path.dirname(dest), { recursive: true });
    copyFileSync(wasm, dest);
    served.push(path.relative(projectDir, dest).split(path.sep).join('/'));
    note(`bundle: new URL(${JSON.stringify(rel)}, import.meta.url) in ${path.basename(entry)} -> copied the wasm to ${served.at(-1)}`);
  }
  return { fromPkg, served, html: path.relative(projectDir, path.join(outDir, 'index.html')).split(path.sep).join('/'), outDir };
}

async function runBrowser(runtime, { projectDir, suiteDir, mode }, server, filter, deadline) {
  const { runPage } = await import('../browsers/run-page.mjs');
  const browser = runtime === 'bundle' ? 'chromium' : runtime;
  const pkgDir = path.join(projectDir, 'node_modules/saferetry');
  const entry = resolveExport(pkgDir, CONDITIONS.browser);
  let pagePath;
  let expectEntryUrl = null;
  let expectWasm;
  if (runtime === 'bundle') {
    const b = await buildBundle(projectDir, suiteDir, entry);
    const want = path.relative(projectDir, entry).split(path.sep).join('/');
    // No other runtime's entry (the shared core, load.js and the glue are fine).
    const wrong = b.fromPkg.filter((f) => /\/src\/(web|node|workerd)\.js$/.test(f) && !f.endsWith(want));
    if (!b.fromPkg.some((f) => f.endsWith(want)) || wrong.length) {
      throw new Error(`esbuild did not bundle the browser entry ${want} alone: ${b.fromPkg.join(', ')}`);
    }
    writeFileSync(path.join(projectDir, b.html), pageHtml({ title: 'saferetry e2e (esbuild bundle)', script: 'dist/page.js' }));
    expectWasm = b.served.map((f) => `${server.url}/static/${f}`);
    pagePath = b.html;
  } else {
    const genDir = path.join(suiteDir, 'gen');
    mkdirSync(genDir, { recursive: true });
    const rel = path.relative(projectDir, entry).split(path.sep).join('/');
    const webPath = (file) => `/static/${path.relative(projectDir, file).split(path.sep).join('/')}`;
    expectEntryUrl = `${server.url}/static/${rel}`;
    // Unbundled, the entry loads its own module and nothing else: the
    // fleet's ("saferetry/authority") is imported by the page only after
    // it listed what it loaded.
    expectWasm = ['saferetry_web_bg.wasm'].map((f) => `${server.url}/static/node_modules/saferetry/src/${f}`);
    const authority = path.relative(projectDir, resolveExport(pkgDir, CONDITIONS.browser, './authority')).split(path.sep).join('/');
    // One page per browser: runs of two browsers at once must not share it.
    const page = path.join(genDir, `page-${runtime}.html`);
    pagePath = webPath(page).slice('/static/'.length);
    writeFileSync(page, pageHtml({
      title: `saferetry ${path.basename(suiteDir)} (import map)`, importMap: { saferetry: `/static/${rel}`, 'saferetry/authority': `/static/${authority}` }, script: webPath(path.join(suiteDir, 'page.mjs')),
    }));
    note(`import map: "saferetry" -> /static/${rel}`);
  }
  const q = new URLSearchParams({ runtime: browser, url: server.url, alt: server.altUrl, mode, ...(filter ? { filter } : {}) });
  const url = `${server.url}/static/${pagePath}?${q}`;
  note(`${browser}: ${url}`);
  const lines = [];
  const r = await runPage({
    browser, url, timeoutMs: Math.max(10_000, deadline - Date.now() - 15_000),
    screenshotPath: path.join(suiteDir, 'gen', `${runtime}.png`),
    onLog: (line) => { console.log(line); lines.push(line); },
  });
  note(`${browser} ${r.browserVersion}: launch ${r.timings.launchMs} ms, page ${r.timings.pageMs} ms, close ${r.timings.closeMs} ms; ${r.userAgent}`);
  const res = r.result ?? {};
  if (res.error) {
    console.log(`page failed: ${res.error}`);
    return { code: 1, entry: null, counts: null };
  }
  if (expectEntryUrl && res.entry !== expectEntryUrl) {
    console.log(`page resolved saferetry to ${res.entry}, expected ${expectEntryUrl}`);
    return { code: 1, entry: res.entry, counts: { passed: res.passed, failed: res.failed } };
  }
  // Unbundled, the page loaded no module of the fleet's or the outbox's
  // before it asked for one: they load at their first use.
  const later = (res.modules ?? []).filter((f) => /^(authority|saferetry_authority|outbox|outbox-rules|saferetry_outbox)\.js$/.test(f));
  if (runtime !== 'bundle' && (!res.modules?.includes('web.js') || later.length)) {
    console.log(`the page loaded ${later.join(', ') || 'no web.js'} at import (modules: ${(res.modules ?? []).join(', ')})`);
    return { code: 1, entry, counts: { passed: res.passed, failed: res.failed } };
  }
  const wrongWasm = (res.wasm ?? []).filter((u) => !expectWasm.includes(u));
  if (wrongWasm.length) {
    console.log(`the page loaded wasm from ${wrongWasm.join(', ')}, expected ${expectWasm.join(' or ')}`);
    return { code: 1, entry, counts: { passed: res.passed, failed: res.failed } };
  }
  return { code: res.failed === 0 && res.passed > 0 ? 0 : 1, entry, detected: res.detected, lines, counts: { passed: res.passed, failed: res.failed } };
}

// ---------------- main ----------------
function parseArgs(argv) {
  const flags = { suite: 'e2e', shapes: null, mode: 'compare', location: false };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--suite') flags.suite = argv[++i];
    else if (argv[i] === '--shapes') flags.shapes = argv[++i];
    else if (argv[i] === '--mode') flags.mode = argv[++i];
    else if (argv[i] === '--location') flags.location = true;
    else rest.push(argv[i]);
  }
  return { ...flags, runtime: rest[0], dirArg: rest[1], filter: rest[2] };
}

// Copies `src` to `dest` unless it is there already, by rename: a run of
// another runtime at the same time never reads a half-written file.
function install(src, dest) {
  const data = readFileSync(src);
  mkdirSync(path.dirname(dest), { recursive: true });
  if (existsSync(dest) && readFileSync(dest).equals(data)) return;
  const tmp = `${dest}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, dest);
}

// "shape {json}" lines of the suite's shapes mode -> the file named by --shapes.
function writeShapes(file, runtime, lines) {
  const shapes = lines.map((l) => /^shape (\{.*\})$/.exec(l)?.[1]).filter(Boolean).map((j) => JSON.parse(j));
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ runtime, shapes }, null, 1)}\n`);
  note(`${shapes.length} shapes written to ${file}`);
}

async function main() {
  const { runtime, dirArg, filter, suite, shapes, mode, location } = parseArgs(process.argv.slice(2));
  if (!RUNTIMES.includes(runtime) || !dirArg || !SUITES[suite] || shapes === undefined || !mode || (location && runtime !== 'deno')) {
    console.error(`usage: node tests/runtimes/run.mjs <${RUNTIMES.join('|')}> <projectDir> [filter] [--suite ${Object.keys(SUITES).join('|')}] [--mode M] [--shapes FILE] [--location (deno)]`);
    return 2;
  }
  const projectDir = path.resolve(dirArg);
  const suiteDir = path.join(projectDir, SUITES[suite].folder);
  const pkgDir = path.join(projectDir, 'node_modules/saferetry');
  for (const [src, dest] of SUITES[suite].files) install(src, path.join(projectDir, dest));
  if (!existsSync(path.join(pkgDir, 'package.json')) || !existsSync(path.join(suiteDir, 'suite.mjs'))) {
    console.error(`${projectDir} has no installed saferetry or suite.mjs: run scripts/pack-install.sh ${dirArg} first`);
    return 2;
  }
  for (const f of ['runner.mjs', 'worker.mjs', 'page.mjs']) install(path.join(HERE, f), path.join(suiteDir, f));
  const deadline = t0 + RUN_BUDGET_MS;
  const where = { projectDir, suiteDir, mode: shapes ? 'shapes' : mode, suite: SUITES[suite], location };

  const server = await startFaultServer(projectDir, SUITES[suite].server);
  note(`${suite} suite; server ${server.url}, alt origin ${server.altUrl}`);
  const tSuite = Date.now();
  let r;
  try {
    if (runtime === 'node' || runtime === 'deno' || runtime === 'bun') {
      r = await runScriptRuntime(runtime, where, server, filter, deadline);
      const want = resolveExport(pkgDir, CONDITIONS[runtime]);
      if (r.entry !== want) {
        console.log(`${runtime} loaded saferetry from ${r.entry}, expected ${want}`);
        r.code = 1;
      }
    } else if (runtime === 'workerd') {
      r = await runWorkerd(where, server, filter, deadline);
    } else {
      r = await runBrowser(runtime, where, server, filter, deadline);
    }
  } finally {
    await stop(server.proc);
  }
  if (shapes) writeShapes(shapes, runtime, r.lines ?? []);
  if (r.counts && r.detected !== DETECTED[runtime]) {
    console.log(`the policy applies ${JSON.stringify(r.detected)} fetch-error rules here, expected ${JSON.stringify(DETECTED[runtime])}`);
    r.code = 1;
  }
  const ok = r.code === 0 && r.counts && r.counts.failed === 0 && r.counts.passed > 0;
  const entryNote = `${r.entry ? `entry ${path.relative(projectDir, r.entry)}` : 'entry ?'}, detected ${r.detected ?? '?'}`;
  console.log(`${runtime}: ${ok ? 'ok' : 'FAILED'}; ${r.counts ? `${r.counts.passed} passed, ${r.counts.failed} failed` : 'no count line'}`
    + `; ${entryNote}; suite ${((Date.now() - tSuite) / 1000).toFixed(1)} s, total ${stamp()}`);
  return ok ? 0 : 1;
}

await runMain('run.mjs', main);
