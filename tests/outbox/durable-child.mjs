// One process of the file store's durability cases
// (tests/outbox/durable.mjs), in Node, Deno or Bun:
//
//   node durable-child.mjs <pkg> <dir> put <step> <entry>
//       writes `entry` (JSON, its body base64) with `fileStore(dir).put`
//       and kills itself (SIGKILL: nothing flushed, nothing cleaned up)
//       right after `step` of that write: `half` (half of its bytes
//       written to the temporary file), `write` (all of them), `fsync`
//       (that file synced), `rename` (renamed to the entry's name),
//       `dir-fsync` (the directory synced). Exits 0 when the write never
//       made that step (`none`: it writes and exits).
//   node durable-child.mjs <pkg> <dir> send <url> <key>
//       sends a keyed POST through an outbox on `fileStore(dir)` with
//       write-ahead, and prints the steps of every write and delete of the
//       store, `fetch` when the request leaves, and `answered` when send()
//       resolves, in the order they happened.
//   node durable-child.mjs <pkg> <dir> list
//       prints what a fresh process finds in the store.
//
// The steps are seen through hooks of this test's own on node:fs/promises
// (put on its exports object before the package loads: Deno's and Bun's
// modules read it then, and Node's `syncBuiltinESMExports` makes the
// package's named imports see them) and on FileHandle's methods; they
// note only the entries' files and the directory (never the lock's
// files), whether the store writes by path or through a handle.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [pkg, dir, mode, ...args] = process.argv.slice(2);
const dieAt = mode === 'put' ? args[0] : null;
const trace = [];
const step = (name) => {
  trace.push(name);
  if (name === dieAt) process.kill(process.pid, 'SIGKILL');
};

const fsp = fs.promises; // node:fs/promises' exports
const isTmp = (p) => /\.entry\.json\.\d+\.\d+\.tmp$/.test(String(p));
const isEntry = (p) => String(p).endsWith('.entry.json');
const isDir = (p) => path.resolve(String(p)) === path.resolve(dir);
const opened = new WeakMap(); // FileHandle → the path it was opened at
const { open, rename, unlink, writeFile } = fsp;
/** Writes `data` with `write`: only its first half when this process dies half-way. */
const written = async (data, write) => {
  if (dieAt === 'half') {
    await write(data.slice(0, Math.floor(data.length / 2)));
    process.kill(process.pid, 'SIGKILL');
  }
  await write(data);
  step('write');
};
fsp.open = async (p, ...rest) => {
  const handle = await open(p, ...rest);
  opened.set(handle, p);
  return handle;
};
fsp.writeFile = (p, data, ...rest) => (isTmp(p) ? written(data, (d) => writeFile(p, d, ...rest)) : writeFile(p, data, ...rest));
fsp.rename = async (from, to) => {
  await rename(from, to);
  if (isTmp(from)) step('rename');
};
fsp.unlink = async (p) => {
  await unlink(p);
  if (isEntry(p)) step('unlink');
};
const probe = await open(fileURLToPath(import.meta.url));
const handles = Object.getPrototypeOf(probe); // FileHandle.prototype
await probe.close();
const handleWrite = handles.writeFile;
handles.writeFile = function (data, ...rest) {
  return isTmp(opened.get(this)) ? written(data, (d) => handleWrite.call(this, d, ...rest)) : handleWrite.call(this, data, ...rest);
};
for (const name of ['sync', 'datasync']) {
  const sync = handles[name];
  handles[name] = async function () {
    await sync.call(this);
    const p = opened.get(this);
    if (isTmp(p)) step('fsync');
    else if (isDir(p)) step('dir-fsync');
  };
}
syncBuiltinESMExports();

const { RetryPolicy, outbox, fileStore } = await import(pkg);
const base64 = (bytes) => (bytes === null ? null : Buffer.from(bytes).toString('base64'));

if (mode === 'put') {
  const entry = JSON.parse(args[1]);
  await fileStore(dir).put({ ...entry, body: entry.body === null ? null : new Uint8Array(Buffer.from(entry.body, 'base64')) });
  console.log(JSON.stringify({ trace }));
} else if (mode === 'send') {
  const [url, key] = args;
  const policy = new RetryPolicy({ maxAttempts: 1, totalMs: 5_000, fetch: (input, init) => (trace.push('fetch'), fetch(input, init)) });
  const box = await outbox(policy, 'orders', { store: fileStore(dir) });
  const r = await box.send(url, { method: 'POST', body: JSON.stringify({ order: key }), headers: { 'content-type': 'application/json' }, retry: { idempotencyKey: key }, durable: 'before-send' });
  trace.push('answered');
  console.log(JSON.stringify({ trace, kind: r.kind, kept: r.kept }));
  await box.close();
} else {
  const entries = await fileStore(dir).list();
  console.log(JSON.stringify({ entries: entries.map((e) => ({ ...e, body: base64(e.body) })) }));
}
process.exit(0);
