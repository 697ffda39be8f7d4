// An outbox store in a directory, for Node (README "Outbox", stores):
// Node 20 has no `node:sqlite`, so one JSON file per entry, written to a
// temporary name and renamed over the old one (a rename is atomic on one
// file system: a crash leaves the old entry or the new one, never half of
// one). Bodies are kept as base64. Processes sharing the directory drain
// one at a time: `lock` holds `.lock` (created exclusively, holding the
// owner's pid); a lock whose owner is no longer running is taken over.
import { mkdir, open, readFile, readdir, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

const SUFFIX = ".entry.json";
const STALE_CHECK_MS = 50;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

export function fileStore(dir) {
  if (typeof dir !== "string" || dir === "") throw new TypeError("saferetry: `fileStore(dir)`: dir must be a non-empty path");
  const file = (id) => join(dir, encodeURIComponent(id) + SUFFIX);
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
      await mkdir(dir, { recursive: true });
      const body = entry.body === null ? null : Buffer.from(entry.body).toString("base64");
      const tmp = `${file(entry.id)}.${process.pid}.${writes++}.tmp`;
      await writeFile(tmp, JSON.stringify({ ...entry, body }));
      await rename(tmp, file(entry.id));
    },
    async delete(id) {
      await unlink(file(id)).catch((error) => {
        if (error.code !== "ENOENT") throw error;
      });
    },
    async lock(_name, fn) {
      await mkdir(dir, { recursive: true });
      const path = join(dir, ".lock");
      for (;;) {
        try {
          const handle = await open(path, "wx");
          await handle.writeFile(String(process.pid));
          await handle.close();
          break;
        } catch (error) {
          if (error.code !== "EEXIST") throw error;
          const owner = Number(await readFile(path, "utf8").catch(() => ""));
          if (owner && !alive(owner)) await unlink(path).catch(() => {});
          else await new Promise((resolve) => setTimeout(resolve, STALE_CHECK_MS));
        }
      }
      try {
        return await fn();
      } finally {
        await unlink(path).catch(() => {});
      }
    },
  };
}
