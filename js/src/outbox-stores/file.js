// An outbox store in a directory, for Node (README "Outbox", stores):
// Node 20 has no `node:sqlite`, so one JSON file per entry, written to a
// temporary name and renamed over the old one (a rename is atomic on one
// file system: a crash leaves the old entry or the new one, never half of
// one). Bodies are kept as base64. Processes sharing the directory drain
// one at a time, under the directory's lock (file-lock.js). An entry's
// file is named by a hash of its id: an id is never a path, whatever the
// caller's key holds.
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileLock } from "./file-lock.js";

const SUFFIX = ".entry.json";

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
          const entry = JSON.parse(await readFile(join(dir, name), "utf8"));
          if (entry.body !== null) entry.body = new Uint8Array(Buffer.from(entry.body, "base64"));
          out.push(entry);
        } catch (error) {
          if (error.code !== "ENOENT") throw error; // deleted meanwhile
        }
      }
      return out;
    },
    async put(entry) {
      owned();
      await mkdir(dir, { recursive: true });
      const body = entry.body === null ? null : Buffer.from(entry.body).toString("base64");
      const tmp = `${file(entry.id)}.${process.pid}.${writes++}.tmp`;
      await writeFile(tmp, JSON.stringify({ ...entry, body }));
      await rename(tmp, file(entry.id));
    },
    async delete(id) {
      owned();
      await unlink(file(id)).catch((error) => {
        if (error.code !== "ENOENT") throw error;
      });
    },
    async lock(_name, fn, signal) {
      await mkdir(dir, { recursive: true });
      return lock.hold(fn, signal);
    },
  };
}
