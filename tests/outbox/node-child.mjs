// One Node process of the file-store cases (tests/outbox/node.mjs):
//
//   node node-child.mjs send  <pkg> <dir> <url> <key>   sends once, prints the result, exits at once
//   node node-child.mjs drain <pkg> <dir>               opens the outbox, prints what ended, exits when nothing waits (bounded)
//   node node-child.mjs send-ahead <pkg> <dir> <url> <key> <durable>
//                                                       sends with `durable` ("before-send", or "after-try-later"
//                                                       to show what is lost without it); the test kills it mid-send
//
// Exiting right after a send is the process ending between the try-later
// and the re-send; the next process finds the entry in the directory.
const [mode, pkg, dir, url, key] = process.argv.slice(2);
const { RetryPolicy, outbox, fileStore } = await import(pkg);
const policy = new RetryPolicy({ totalMs: 800 });
const ended = [];
const box = await outbox(policy, 'orders', { store: fileStore(dir) });
for (const type of ['sent', 'expired', 'failed']) box.addEventListener(type, (e) => ended.push({ type, key: e.detail.entry.key }));
if (mode === 'send-ahead') {
  const [durable] = process.argv.slice(7);
  console.log(JSON.stringify({ sending: key }));
  await box.send(url, { method: 'POST', body: JSON.stringify({ order: 1 }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key }, durable });
  console.log(JSON.stringify({ answered: key })); // never reached: killed mid-send
  process.exit(0);
}
if (mode === 'send') {
  const r = await box.send(url, { method: 'POST', body: JSON.stringify({ order: 1 }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key } });
  console.log(JSON.stringify({ kind: r.kind, kept: r.kept, notKept: r.notKept ?? null, retryAt: r.retryAt ?? null }));
  process.exit(0);
}
const until = Date.now() + 15_000;
while (Date.now() < until && (await box.pending()).length > 0) await new Promise((r) => setTimeout(r, 100));
await box.flush();
console.log(JSON.stringify({ ended, pending: (await box.pending()).length }));
await box.close();
process.exit(0);
