// One Node process of the file store's crash cases (tests/outbox/crash.mjs):
//
//   node crash-child.mjs <pkg> <dir> <point>
//
// `point` is where this process dies (SIGKILL, nothing flushed, its lock
// left behind) while draining the directory: `before-claim` (about to
// write the claim), `after-claim` (claim written, nothing sent),
// `mid-send` (the server has the request, its answer is not read),
// `after-send` (the answer read, the entry not yet deleted). With `none`
// it is a contender: it prints `ready`, waits for a line on stdin (so that
// every contender starts at once), drains until nothing is pending
// (bounded), prints the keys it sent as JSON and exits.
import { createInterface } from 'node:readline';
import { crashingFetch, crashingPut } from './crash-points.mjs';

const [pkg, dir, point] = process.argv.slice(2);
const { RetryPolicy, outbox, fileStore } = await import(pkg);
const die = () => process.kill(process.pid, 'SIGKILL');

const store = fileStore(dir);
const crashing = { ...store, put: crashingPut(store.put, point, die) };

// One attempt, with room for a loaded machine: every request the server
// counts is one drain's send, never a retry inside one.
const policy = new RetryPolicy({ maxAttempts: 1, totalMs: 30_000, attemptMs: 30_000, fetch: point === 'none' ? fetch : crashingFetch(point, die) });
if (point === 'none') {
  console.log('ready');
  await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
}
const box = await outbox(policy, 'orders', { store: point === 'none' ? store : crashing });
const sent = [];
box.addEventListener('sent', (e) => sent.push(e.detail.entry.key));
const until = Date.now() + 20_000;
while (Date.now() < until && (await box.pending()).length > 0) await new Promise((r) => setTimeout(r, 50));
await box.flush();
console.log(JSON.stringify({ sent, pending: (await box.pending()).length }));
await box.close();
process.exit(0);
