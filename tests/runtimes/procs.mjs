// Processes for the test runners and benches: each started in its own
// process group, tracked, and killed when the runner exits; every wait is
// bounded. Also the package's export resolution, its module graph, workerd
// configs (and a Worker built by Wrangler for one), and the fault server
// started as its own process.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const note = (line) => process.stderr.write(`[procs] ${line}\n`);

// ---------------- processes: tracked, own process group, killed on exit ----------------
export const live = new Set();
function killGroup(child, sig) {
  try { process.kill(-child.pid, sig); } catch { /* gone */ }
}
process.on('exit', () => { for (const p of live) killGroup(p.child, 'SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => { note(`${sig}: stopping ${live.size} process(es)`); process.exit(130); });
}

export function start(name, cmd, args, { cwd, env = {}, extraFds = 0, echo = true } = {}) {
  const child = spawn(cmd, args, {
    cwd, detached: true, env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...Array(extraFds).fill('pipe')],
  });
  const p = { name, child, lines: [], tail: '', onLine: null };
  p.exited = new Promise((resolve) => child.once('close', (code, sig) => { live.delete(p); resolve(code ?? sig); }));
  child.once('error', (e) => { p.tail += `spawn error: ${e.message}\n`; });
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      p.lines.push(line);
      p.onLine?.(line);
      if (echo) console.log(line);
    }
  });
  child.stdout.on('end', () => { if (buf) { p.lines.push(buf); p.onLine?.(buf); if (echo) console.log(buf); buf = ''; } });
  child.stderr.setEncoding('utf8').on('data', (d) => {
    p.tail = (p.tail + d).slice(-6000);
    if (echo) process.stderr.write(d.replace(/^(?=.)/gm, `[${name}] `));
  });
  live.add(p);
  return p;
}

export async function stop(p, graceMs = 2000) {
  if (!live.has(p)) return;
  killGroup(p.child, 'SIGTERM');
  const ac = new AbortController();
  await Promise.race([p.exited, sleep(graceMs, null, { signal: ac.signal }).catch(() => {})]);
  ac.abort();
  killGroup(p.child, 'SIGKILL');
  await Promise.race([p.exited, sleep(1000)]);
}

// Resolves with the process's exit code, or kills it when the deadline passes.
export async function waitExit(p, deadline) {
  const ac = new AbortController();
  const left = Math.max(0, deadline - Date.now());
  const r = await Promise.race([p.exited, sleep(left, 'timeout', { signal: ac.signal }).catch(() => {})]);
  ac.abort();
  if (r === 'timeout') {
    note(`${p.name} still running at the deadline: killed`);
    await stop(p, 500);
    return 'timeout';
  }
  return r;
}

// ---------------- package layout ----------------
export function resolveExport(pkgDir, conditions, subpath = '.') {
  const pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  let target = typeof pkg.exports === 'string' || !('.' in (pkg.exports ?? {})) ? pkg.exports : pkg.exports[subpath];
  for (let depth = 0; target && typeof target === 'object' && depth < 10; depth++) { // nested conditions
    const key = Object.keys(target).find((k) => conditions.includes(k));
    target = key ? target[key] : undefined;
  }
  if (typeof target !== 'string') throw new Error(`package exports have no entry ${subpath} for conditions ${conditions.join(', ')}`);
  return path.join(pkgDir, target);
}

// Modules reachable from `entry` by static relative imports (JS and .wasm).
export function moduleGraph(entry) {
  const seen = new Map(); // absolute path -> 'esModule' | 'wasm'
  const todo = [entry];
  while (todo.length && seen.size < 200) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    if (file.endsWith('.wasm')) { seen.set(file, 'wasm'); continue; }
    seen.set(file, 'esModule');
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\1/g)) {
      todo.push(path.resolve(path.dirname(file), m[2]));
    }
  }
  return seen;
}

// ---------------- fault server (its CLI, in its own Node process) ----------------
// `script`: another server with the same CLI contract (`--static DIR`, prints
// "<name> server <url>" and "alt origin <url>"), e.g. the fidelity tier's.
export async function startFaultServer(projectDir, script) {
  script ??= existsSync(path.join(projectDir, 'fault-server.mjs'))
    ? path.join(projectDir, 'fault-server.mjs') : path.join(REPO, 'www/server/fault-server.mjs');
  const p = start(path.basename(script, '.mjs'), process.execPath, [script, '--static', projectDir], { echo: false });
  const until = Date.now() + 10_000;
  for (;;) { // bounded by `until`
    const url = p.lines.map((l) => /^[\w-]+ server (\S+)/.exec(l)?.[1]).find(Boolean);
    const altUrl = p.lines.map((l) => /^alt origin (\S+)/.exec(l)?.[1]).find(Boolean);
    if (url && altUrl) return { url, altUrl, proc: p };
    if (!live.has(p)) throw new Error(`fault server exited:\n${p.tail}`);
    if (Date.now() > until) throw new Error(`fault server printed no URLs in 10 s:\n${p.lines.join('\n')}\n${p.tail}`);
    await sleep(50);
  }
}

// ---------------- workerd: the port it bound, from --control-fd=3 ----------------
/** Resolves with the port of the socket named `http` that workerd (started
 * by `start(..., { extraFds: 1 })` with `--control-fd=3`) reports. */
export function workerdPort(p, socket = 'http') {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`workerd reported no port in 20 s:\n${p.tail}`)), 20_000);
    p.child.stdio[3].setEncoding('utf8').on('data', (d) => {
      buf += d;
      for (const line of buf.split('\n')) {
        try {
          const m = JSON.parse(line);
          if (m.event === 'listen' && m.socket === socket) { clearTimeout(timer); resolve(m.port); }
        } catch { /* partial line */ }
      }
    });
    p.exited.then((c) => { clearTimeout(timer); reject(new Error(`workerd exited (${c}):\n${p.tail}`)); });
  });
}

// ---------------- workerd: one Worker's config ----------------
/** A workerd config serving one Worker on 127.0.0.1 (port 0: read it with
 * `workerdPort`), whose outbound fetch may reach loopback. `modules`:
 * `[{ name, type: 'esModule' | 'wasm', file }]` (files relative to `dir`,
 * where the config is written); `bindings`: `{ NAME: text }`. */
export function workerdConfig({ dir, modules, bindings = {}, compatibilityDate, comment = '' }) {
  const str = (s) => JSON.stringify(s); // capnp text takes JSON-style escapes
  return `using Workerd = import "/workerd/workerd.capnp";
${comment ? `# ${comment}\n` : ''}const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
${modules.map((m) => `    (name = ${str(m.name)}, ${m.type} = embed ${str(path.relative(dir, m.file))}),`).join('\n')}
  ],
  compatibilityDate = ${str(compatibilityDate)},
  bindings = [${Object.entries(bindings).map(([name, text]) => `(name = ${str(name)}, text = ${str(text)})`).join(', ')}],
  globalOutbound = "internet",
);
`;
}

/** A runner's entry: runs `main` (its exit code), reports a throw under
 * `name`, stops every process still running, and exits. */
export async function runMain(name, main) {
  let exitCode = 1;
  try {
    exitCode = await main();
  } catch (err) {
    console.error(`${name}: ${err.stack ?? err}`);
  } finally {
    for (const p of [...live]) await stop(p, 1000);
  }
  process.exit(exitCode);
}

/** A bundle's modules for a workerd config: the JS and every .wasm it imports
 * by a relative path, named as the bundle imports them. Throws when it
 * imports none and `requireWasm` (a bundle of the package must). */
export function bundleModules(distDir, main, { requireWasm = true } = {}) {
  const js = readFileSync(path.join(distDir, main), 'utf8');
  const modules = [{ name: main, file: path.join(distDir, main), type: 'esModule' }];
  // Imported as a module, or with `import()` (the poll's, at a first poll).
  for (const [, spec] of js.matchAll(/(?:from\s*|\bimport\s*\(\s*)["'](\.\/[^"']+\.wasm)["']/g)) {
    if (!modules.some((m) => m.name === spec)) modules.push({ name: spec, file: path.join(distDir, spec), type: 'wasm' });
  }
  const present = readdirSync(distDir).filter((f) => f.endsWith('.wasm'));
  if (requireWasm && modules.length < 2) throw new Error(`${main} imports no .wasm module; ${distDir} has ${present.join(', ') || 'none'}`);
  return modules;
}

/** A Worker from `source` (main.mjs) built in `dir` by Wrangler's own
 * dry-run build, offline, with `saferetry` resolving to `packageDir`; writes
 * `dir/config.capnp` for workerd and returns nothing. `wranglerJsonc`: a
 * whole `wrangler.jsonc` to build with instead of the minimal one. */
export function wranglerWorker({ dir, source, packageDir, compatibilityDate, bindings = {}, wranglerJsonc }) {
  mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  writeFileSync(path.join(dir, 'main.mjs'), source);
  rmSync(path.join(dir, wranglerJsonc ? 'wrangler.toml' : 'wrangler.jsonc'), { force: true });
  if (wranglerJsonc) writeFileSync(path.join(dir, 'wrangler.jsonc'), wranglerJsonc);
  else writeFileSync(path.join(dir, 'wrangler.toml'), `name = "worker"\nmain = "main.mjs"\ncompatibility_date = "${compatibilityDate}"\n`);
  rmSync(path.join(dir, 'node_modules/saferetry'), { force: true, recursive: true });
  symlinkSync(packageDir, path.join(dir, 'node_modules/saferetry'));
  execFileSync(path.join(REPO, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], {
    cwd: dir, stdio: 'ignore', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', WRANGLER_LOG_PATH: path.join(dir, 'logs') },
  });
  const modules = bundleModules(path.join(dir, 'dist'), 'main.js', { requireWasm: false });
  writeFileSync(path.join(dir, 'config.capnp'), workerdConfig({ dir, modules, compatibilityDate, bindings }));
}

