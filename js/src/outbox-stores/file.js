// An outbox store in a directory, for Node (docs/outbox.md "Outbox", stores):
// Node 20 has no `node:sqlite`, so one JSON file per entry. Bodies are
// kept as base64. Processes sharing the directory drain one at a time,
// under the directory's lock (file-lock.js). An entry's file is named by a
// hash of its id: an id is never a path, whatever the caller's key holds.
//
// A write or a delete resolves only once it would survive a power cut, in
// the order databases replace a file (etcd's WAL segment cut, SQLite's
// journal, RocksDB's CURRENT): the entry is written to a temporary name and
// synced (`fdatasync`: its bytes and length on the disk), renamed over its
// name (atomic on one file system: a crash leaves the old entry or the new
// one, never half of one), and the directory is synced (`fsync`: the
// rename itself on the disk). Without the first sync a power cut may leave
// the new name on an empty or torn file; without the second, the old entry
// or none. A delete syncs the directory too: a lost one would bring back an
// entry whose outcome was final (a write-ahead entry whose send the caller
// cancelled would be sent). On macOS libuv makes both syncs `F_FULLFSYNC`.
import { createHash } from "node:crypto";
import { mkdir, open, readFile, readdir, rename, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileLock } from "./file-lock.js";

const SUFFIX = ".entry.json";

/** Makes the names in directory `dir` durable (the rename or unlink just
 * made there). Windows cannot open a directory (NTFS journals the rename
 * itself). */
async function syncDir(dir) {
  if (process.platform === "win32") return;
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Creates `dir` as `mkdir -p` does, and makes each directory it created
 * durable in its parent (else a power cut could take the whole outbox). */
async function makeDir(dir) {
  const created = await mkdir(dir, { recursive: true });
  if (created === undefined) return;
  const first = resolve(created);
  for (let made = resolve(dir); ; made = dirname(made)) {
    await syncDir(dirname(made));
    if (made === first || made === dirname(made)) return;
  }
}

export function fileStore(dir) {
  if (typeof dir !== "string" || dir === "") throw new TypeError("saferetry: `fileStore(dir)`: dir must be a non-empty path");
  const file = (id) => join(dir, createHash("sha256").update(String(id)).digest("hex") + SUFFIX);
  const lock = fileLock(dir);
  // A drainer overtaken while it stalled writes nothing more.
  const owned = () => {
    if (lock.lost()) throw new Error(`saferetry: the outbox lock of ${dir} was taken over (this process stalled past its heartbeat)`);
  };
  let writes = 0;
  return {
    async list() {
      let names;
      try {
        names = await readdir(dir);
      } catch (error) {
        if (error.code === "ENOENT") return [];
        throw error;
      }
      const out = [];
      for (const name of names.filter((n) => n.endsWith(SUFFIX))) {
        try {
          const at = join(dir, name);
          const entry = JSON.parse(await readFile(at, "utf8"));
          if (entry.body !== null) entry.body = new Uint8Array(Buffer.from(entry.body, "base64"));
          // An entry an earlier version kept under its id as the name: moved
          // to its hashed name (atomically: either name holds it, so the
          // move needs no sync of its own; the next write's or delete's
          // sync of the directory covers it).
          if (at !== file(entry.id)) await rename(at, file(entry.id));
          out.push(entry);
        } catch (error) {
          if (error.code !== "ENOENT") throw error; // deleted meanwhile
        }
      }
      return out;
    },
    async put(entry) {
      owned();
      await makeDir(dir);
      const body = entry.body === null ? null : Buffer.from(entry.body).toString("base64");
      const tmp = `${file(entry.id)}.${process.pid}.${writes++}.tmp`;
      const handle = await open(tmp, "w");
      try {
        await handle.writeFile(JSON.stringify({ ...entry, body }));
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await rename(tmp, file(entry.id));
      await syncDir(dir);
    },
    async delete(id) {
      owned();
      try {
        await unlink(file(id));
      } catch (error) {
        if (error.code === "ENOENT") return;
        throw error;
      }
      await syncDir(dir);
    },
    async lock(_name, fn, signal) {
      await makeDir(dir);
      return lock.hold(fn, signal);
    },
  };
}
