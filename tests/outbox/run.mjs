// The outbox tier (docs/outbox.md): Node (memory and file stores, process
// restarts), the three browsers (IndexedDB, Web Locks, a page closed and
// reopened, two tabs) and workerd (a Durable Object whose alarm sends after
// a restart); for each store, the four crash points of a drain with
// contenders taking over (crash.mjs, browsers-crash.mjs, workerd.mjs).
// The file store's writes against a process killed between their steps
// (durable.mjs). Prints one line per case and a final "N passed, M failed".
//
//   node tests/outbox/run.mjs [node] [calls] [crash] [browsers] [workerd]
//   OUTBOX_BROWSERS=webkit node tests/outbox/run.mjs browsers   (some browsers only)
//   OUTBOX_CRASH_ROUNDS / OUTBOX_TAB_ROUNDS / OUTBOX_DO_ROUNDS: the crash rounds
//   of the file store (5), IndexedDB (8 per browser), the Durable Object (20)
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PKG = process.env.OUTBOX_PKG ?? pathToFileURL(path.resolve(HERE, '../../js/src/node.js')).href;
const parts = process.argv.slice(2);
const want = (p) => parts.length === 0 || parts.includes(p);
let passed = 0, failed = 0;

async function run(name, { setup, teardown, list }) {
  try {
    await setup();
    for (const [sentence, fn] of list) {
      const t0 = Date.now();
      try {
        await fn();
        passed++;
        console.log(`ok   ${name}: ${sentence} (${Date.now() - t0} ms)`);
      } catch (error) {
        failed++;
        console.log(`FAIL ${name}: ${sentence}\n     ${error?.stack ?? error}`);
      }
    }
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: setup: ${error?.stack ?? error}`);
  } finally {
    await teardown?.().catch((e) => console.log(`teardown ${name}: ${e}`));
  }
}

if (want('node')) await run('node', (await import('./node.mjs')).cases(PKG));
if (want('node')) await run('node', (await import('./ahead-node.mjs')).cases(PKG));
if (want('node')) await run('node', (await import('./durable.mjs')).cases(PKG));
if (want('calls')) await run('calls', (await import('./calls.mjs')).cases(PKG));
if (want('crash')) await run('crash', (await import('./crash.mjs')).cases(PKG));
const BROWSERS = (process.env.OUTBOX_BROWSERS ?? 'chromium firefox webkit').split(/[ ,]+/);
if (want('browsers')) for (const b of BROWSERS) await run(b, (await import('./browsers.mjs')).cases(b));
if (want('browsers') || want('sync')) await run('chromium', (await import('./sync-chromium.mjs')).cases());
if (want('workerd')) await run('workerd', (await import('./workerd.mjs')).cases());
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
