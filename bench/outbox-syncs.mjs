// What reaches the disk when an outbox store writes (docs/outbox.md,
// stores; BENCHMARKS.md "Outbox durability"): the sync system calls
// (`fsync`, `fdatasync`) made per write and per delete, counted with
// strace on the processes doing them. Not a test: figures, printed as
// Markdown tables. Needs strace (and ptrace allowed).
//
//   node bench/outbox-syncs.mjs [runtimes] [browsers]
//
// runtimes: fileStore(dir) in Node, Deno and Bun (node_modules/.bin),
// N puts then N deletes, each loop's window timed in the process and the
// calls inside it counted. browsers: N readwrite IndexedDB transactions
// (one put each) per durability — "default", "relaxed", "strict" — in
// Chromium, Firefox and WebKit, every process of the browser traced, the
// calls inside each window counted. A browser that keeps IndexedDB in
// memory (WebKitGTK's MiniBrowser under WebDriver: an ephemeral session)
// makes none in any mode, and says nothing about its disk.
import { execFileSync, execSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const N = Number(process.env.OUTBOX_SYNCS_N ?? 20);
const parts = process.argv.slice(2);
const want = (p) => parts.length === 0 || parts.includes(p);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SYNC = /^\d+\s+([\d.]+)\s+(fsync|fdatasync)\(/;

try {
  execFileSync('strace', ['-V'], { stdio: 'ignore' });
} catch {
  console.log('outbox-syncs: strace is not installed: nothing measured');
  process.exit(0);
}

/** The sync calls of strace output `file` (run with -f -ttt) inside each
 * window `[from, to]` (epoch ms), per call name. */
function count(file, windows) {
  const calls = readFileSync(file, 'utf8').split('\n').flatMap((line) => {
    const m = SYNC.exec(line);
    return m ? [{ at: Number(m[1]) * 1000, call: m[2] }] : [];
  });
  return windows.map(([from, to]) => {
    const by = { fsync: 0, fdatasync: 0 };
    for (const c of calls) if (c.at >= from && c.at <= to) by[c.call]++;
    return by;
  });
}
const per = (by) => `${(by.fdatasync / N).toFixed(2)} fdatasync + ${(by.fsync / N).toFixed(2)} fsync`;
const TRACE = ['-f', '-ttt', '-e', 'trace=fsync,fdatasync'];

if (want('runtimes')) {
  const out = mkdtempSync(path.join(tmpdir(), 'saferetry-syncs-'));
  const script = path.join(out, 'store.mjs');
  writeFileSync(script, `import { fileStore } from ${JSON.stringify(pathToFileURL(path.join(REPO, 'js/src/node.js')).href)};
const store = fileStore(${JSON.stringify(path.join(out, 'dir'))});
const body = new TextEncoder().encode('x'.repeat(200));
const entry = (id) => ({ id, method: 'POST', url: 'https://api.example/orders', headers: [['idempotency-key', id]], body, key: id, keptAt: Date.now(), retryAt: Date.now() + 32000, expiresAt: Date.now() + 86400000, sends: 1 });
await store.put(entry('first')); // the directory made before timing
const t0 = Date.now();
for (let i = 0; i < ${N}; i++) await store.put(entry('e' + i));
const t1 = Date.now();
for (let i = 0; i < ${N}; i++) await store.delete('e' + i);
const t2 = Date.now();
console.log(JSON.stringify([[t0, t1], [t1, t2]]));
`);
  console.log(`fileStore(dir), ${N} writes then ${N} deletes, ${tmpdir()}\n`);
  console.log('| runtime | per write | per delete |');
  console.log('|---|---|---|');
  const bin = (name) => path.join(REPO, 'node_modules/.bin', name);
  for (const [name, cmd] of [['Node', [process.execPath]], ['Deno', [bin('deno'), 'run', '-A']], ['Bun', [bin('bun')]]]) {
    const log = path.join(out, `${name}.strace`);
    const windows = JSON.parse(execFileSync('strace', [...TRACE, '-o', log, ...cmd, script], { encoding: 'utf8' }).trim().split('\n').pop());
    const [write, del] = count(log, windows);
    const version = execFileSync(cmd[0], ['--version'], { encoding: 'utf8' }).trim().split('\n')[0];
    console.log(`| ${name} (${version}) | ${per(write)} | ${per(del)} |`);
  }
  rmSync(out, { recursive: true, force: true });
  console.log();
}

if (want('browsers')) {
  const { launch } = await import('../tests/browsers/webdriver.mjs');
  const { startPages } = await import('../tests/outbox/browsers.mjs');
  const pages = await startPages();
  const out = mkdtempSync(path.join(tmpdir(), 'saferetry-syncs-'));
  const MODES = ['default', 'relaxed', 'strict'];
  console.log(`IndexedDB, ${N} readwrite transactions (one put each) per durability\n`);
  console.log(`| browser | ${MODES.join(' | ')} |`);
  console.log(`|---|${MODES.map(() => '---').join('|')}|`);
  try {
    for (const browser of ['chromium', 'firefox', 'webkit']) {
      const h = await launch(browser);
      let tracer;
      try {
        await h.session.setTimeouts({ script: 120_000, pageLoad: 20_000 });
        await h.session.navigate(`${pages.url}/outbox/away.html`, 20_000);
        await h.session.executeAsyncScript(`const done = arguments[arguments.length - 1];
          const r = indexedDB.open('syncs', 1);
          r.onupgradeneeded = () => r.result.createObjectStore('s', { keyPath: 'id' });
          r.onsuccess = () => { window.__db = r.result; done(true); };
          r.onerror = () => done(String(r.error));`, [], 20_000);
        // Every process this one started (the driver, the browser and its children).
        const tree = execSync('ps -e -o pid=,ppid=').toString().trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number));
        const mine = new Set([process.pid]);
        for (let grew = true; grew;) {
          grew = false;
          for (const [pid, ppid] of tree) {
            if (mine.has(ppid) && !mine.has(pid)) {
              mine.add(pid);
              grew = true;
            }
          }
        }
        mine.delete(process.pid);
        const log = path.join(out, `${browser}.strace`);
        tracer = spawn('strace', [...TRACE, '-o', log, ...[...mine].flatMap((p) => ['-p', String(p)])], { stdio: 'ignore' });
        await sleep(2000); // attached
        const windows = await h.session.executeAsyncScript(`const done = arguments[arguments.length - 1];
          (async () => {
            const put = (i, durability) => new Promise((resolve, reject) => {
              const t = window.__db.transaction('s', 'readwrite', { durability });
              t.objectStore('s').put({ id: 'k' + i, v: 'x'.repeat(200) });
              t.oncomplete = () => resolve(t.durability);
              t.onerror = () => reject(t.error);
            });
            const windows = [];
            for (const durability of ${JSON.stringify(MODES)}) {
              await new Promise((r) => setTimeout(r, 1000)); // what came before settles
              const from = Date.now();
              let reported;
              for (let i = 0; i < ${N}; i++) reported = await put(i, durability);
              windows.push([from, Date.now() + 100, reported]);
            }
            return windows;
          })().then(done, (e) => done({ error: String(e) }));`, [], 120_000);
        if (windows.error) throw new Error(`${browser}: ${windows.error}`);
        tracer.kill('SIGINT');
        await new Promise((r) => tracer.once('close', r));
        const counts = count(log, windows);
        console.log(`| ${browser} ${h.browserVersion} | ${counts.map((by, i) => `${per(by)}${windows[i][2] === MODES[i] ? '' : ` (reports ${windows[i][2]})`}`).join(' | ')} |`);
      } finally {
        tracer?.kill('SIGKILL');
        await h.close();
      }
    }
  } finally {
    await new Promise((r) => pages.server.close(r));
    rmSync(out, { recursive: true, force: true });
  }
}
process.exit(0);
