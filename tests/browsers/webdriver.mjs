// Minimal W3C WebDriver client (Node's fetch) + launchers for Chromium
// (chromedriver), Firefox (geckodriver) and WebKit (WebKitWebDriver on an Xvfb
// display we start). Every request and launch step has a timeout; every
// process we start is tracked and killed (its whole process group) on close,
// on error, on exit and on SIGINT/SIGTERM.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../runtimes/port.mjs';

export const BROWSERS = ['chromium', 'firefox', 'webkit'];

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

function which(name, fallbacks = []) {
  for (const dir of (process.env.PATH || '').split(':')) if (dir && existsSync(join(dir, name))) return join(dir, name);
  return fallbacks.find((p) => existsSync(p)) ?? null;
}

// ---------- process tracking: everything we spawn is killed by group ----------
const live = new Set(); // { child, name, tail() }
const sessions = new Set(); // sessions not yet deleted (best effort on SIGINT)

function killGroup(child, sig) {
  try { process.kill(-child.pid, sig); } catch { /* already gone */ }
}
process.on('exit', () => { for (const p of live) killGroup(p.child, 'SIGKILL'); });
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    if (interrupted) { for (const p of live) killGroup(p.child, 'SIGKILL'); process.exit(130); }
    interrupted = true;
    process.stderr.write(`\nwebdriver: ${sig}: closing ${sessions.size} session(s), ${live.size} process(es)\n`);
    const hard = setTimeout(() => process.exit(130), 3000); // bounded cleanup
    await Promise.allSettled([...sessions].map((s) => s.delete()));
    await Promise.allSettled([...live].map((p) => stopProcess(p)));
    clearTimeout(hard);
    process.exit(130);
  });
}

function startProcess(name, cmd, args, env = {}, extraStdio = []) {
  const child = spawn(cmd, args, {
    detached: true, // own process group, so the browser it starts dies with it
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...extraStdio],
  });
  let out = '';
  const keep = (d) => { out = (out + d).slice(-4000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const p = { name, child, tail: () => out.trim().split('\n').slice(-8).join('\n'), exited: null };
  p.exited = new Promise((res) => child.once('exit', (code, sig) => { live.delete(p); res(sig ?? code); }));
  child.once('error', (e) => { keep(`spawn error: ${e.message}`); live.delete(p); });
  live.add(p);
  return p;
}

async function stopProcess(p, graceMs = 2000) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) { killGroup(p.child, 'SIGKILL'); return; }
  killGroup(p.child, 'SIGTERM');
  const ac = new AbortController();
  await Promise.race([p.exited, sleep(graceMs, null, { signal: ac.signal }).catch(() => {})]);
  ac.abort(); // clear the grace timer
  killGroup(p.child, 'SIGKILL'); // whatever is left of the group (browser children)
}

// ---------- HTTP ----------
async function wd(base, method, path, body, timeoutMs = 10_000) {
  let res;
  try {
    res = await fetch(base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw new Error(`webdriver ${method} ${path}: ${e.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : e.message}`);
  }
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = { value: text }; }
  const v = json?.value;
  if (!res.ok || (v && typeof v === 'object' && v.error)) {
    throw new Error(`webdriver ${method} ${path}: HTTP ${res.status} ${v?.error ?? ''}: ${String(v?.message ?? text).split('\n')[0].slice(0, 400)}`);
  }
  return v;
}

async function waitReady(base, proc, timeoutMs) {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) { // bounded by time
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(`${proc.name} exited early (${proc.child.exitCode ?? proc.child.signalCode}):\n${proc.tail()}`);
    }
    try {
      const v = await wd(base, 'GET', '/status', undefined, 1000);
      if (v?.ready !== false) return;
      last = v?.message ?? 'not ready';
    } catch (e) { last = e.message; }
    await sleep(100);
  }
  throw new Error(`${proc.name} not ready after ${timeoutMs} ms (${last}):\n${proc.tail()}`);
}

export class Session {
  constructor(base, id, caps) { this.base = base; this.id = id; this.caps = caps; }
  cmd(method, path, body, timeoutMs) { return wd(this.base, method, `/session/${this.id}${path}`, body, timeoutMs); }
  setTimeouts(t) { return this.cmd('POST', '/timeouts', t); }
  navigate(url, timeoutMs = 30_000) { return this.cmd('POST', '/url', { url }, timeoutMs + 2000); }
  executeScript(script, args = [], timeoutMs = 10_000) { return this.cmd('POST', '/execute/sync', { script, args }, timeoutMs); }
  // The script gets its callback as the last argument (W3C).
  executeAsyncScript(script, args = [], timeoutMs = 30_000) { return this.cmd('POST', '/execute/async', { script, args }, timeoutMs + 2000); }
  async screenshot() { return Buffer.from(await this.cmd('GET', '/screenshot', undefined, 15_000), 'base64'); }
  async delete() {
    if (this.deleted) return;
    this.deleted = true;
    sessions.delete(this);
    await wd(this.base, 'DELETE', `/session/${this.id}`, undefined, 5000);
  }
}

// ---------- launchers ----------
function driverSpec(browser) {
  if (browser === 'chromium') {
    const bin = which('chromedriver');
    return {
      bin, name: 'chromedriver', args: (port) => [`--port=${port}`],
      caps: { browserName: 'chrome', 'goog:chromeOptions': { binary: which('chromium', ['/usr/bin/chromium']), args: CHROMIUM_ARGS } },
    };
  }
  if (browser === 'firefox') {
    const bin = process.env.GECKODRIVER || which('geckodriver', [join(homedir(), '.cargo/bin/geckodriver')]);
    return {
      bin, name: 'geckodriver', args: (port) => ['--host', '127.0.0.1', '--port', String(port)],
      caps: { browserName: 'firefox', 'moz:firefoxOptions': { args: ['-headless'], binary: which('firefox-esr', ['/usr/bin/firefox-esr']) } },
    };
  }
  if (browser === 'webkit') {
    const bin = process.env.SAFARIDRIVER || which('WebKitWebDriver');
    // MiniBrowser 2.50 rejects --headless: it runs on our Xvfb display instead.
    return { bin, name: 'WebKitWebDriver', args: (port) => [`--port=${port}`], caps: { 'webkitgtk:browserOptions': { args: ['--automation'] } }, needsX: true };
  }
  throw new Error(`unknown browser ${browser} (want ${BROWSERS.join('|')})`);
}

// Starts Xvfb on a free display (it picks one and tells us through fd 3).
async function startXvfb(timeoutMs) {
  const bin = which('Xvfb');
  if (!bin) throw new Error('Xvfb not found (apt-get install xvfb)');
  const p = startProcess('Xvfb', bin, ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x1024x24'], {}, ['pipe']);
  let timer;
  try {
    const display = await new Promise((resolve, reject) => {
      let buf = '';
      timer = setTimeout(() => reject(new Error(`Xvfb gave no display in ${timeoutMs} ms:\n${p.tail()}`)), timeoutMs);
      p.child.stdio[3].on('data', (d) => { buf += d; if (buf.includes('\n')) resolve(`:${buf.trim()}`); });
      p.exited.then((c) => reject(new Error(`Xvfb exited (${c}):\n${p.tail()}`)));
    });
    return { proc: p, display };
  } catch (e) { await stopProcess(p); throw e; } finally { clearTimeout(timer); }
}

/**
 * Starts the driver (and Xvfb for WebKit), opens a session.
 * Returns { session, browserVersion, userAgent?, timings, close() }. close() is idempotent.
 */
export async function launch(browser, { launchTimeoutMs = 30_000 } = {}) {
  const spec = driverSpec(browser);
  if (!spec.bin) throw new Error(`${spec.name} not found for ${browser}`);
  const t0 = Date.now();
  const procs = [];
  let session;
  const close = async () => {
    try { if (session) await session.delete(); } catch { /* driver may be dead; processes are killed below */ }
    for (const p of procs.reverse()) await stopProcess(p);
    procs.length = 0;
  };
  try {
    const env = {};
    if (spec.needsX) {
      const x = await startXvfb(10_000);
      procs.push(x.proc);
      env.DISPLAY = x.display;
    }
    let lastErr;
    for (let attempt = 0; attempt < 3; attempt++) { // freePort() can race with another process
      const port = await freePort();
      const proc = startProcess(spec.name, spec.bin, spec.args(port), env);
      const base = `http://127.0.0.1:${port}`;
      try {
        await waitReady(base, proc, 10_000);
        const tReady = Date.now();
        const v = await wd(base, 'POST', '/session', { capabilities: { alwaysMatch: spec.caps } }, launchTimeoutMs);
        procs.push(proc);
        session = new Session(base, v.sessionId, v.capabilities);
        sessions.add(session);
        const timings = { driverReadyMs: tReady - t0, sessionMs: Date.now() - tReady };
        return { browser, session, browserVersion: v.capabilities?.browserVersion, timings, close };
      } catch (e) {
        lastErr = new Error(`${e.message}\n--- ${spec.name} output ---\n${proc.tail()}`);
        await stopProcess(proc);
        if (!/exited early|not ready/.test(e.message)) break; // a session error will not fix itself
      }
    }
    throw lastErr;
  } catch (e) {
    await close();
    throw e;
  }
}
