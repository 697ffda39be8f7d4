// The file store's lock (docs/outbox.md "Outbox", stores): processes sharing an
// outbox directory drain one at a time, on one machine.
//
// The lock is a series of generation files `.lock.1`, `.lock.2`, … in the
// directory. Whoever creates the highest generation holds the lock; each
// is created exclusively (`open(…, "wx")`), so of two contenders for the
// next generation exactly one wins, and a takeover never deletes another
// process's file. A generation says who made it (a random owner id, the
// pid and start time, for people reading the directory) and whether it was
// released; its holder refreshes its mtime every second (the heartbeat).
// The next generation may be created when the highest one is released or
// its heartbeat is older than `STALE_MS`: a process that crashed, whatever
// its pid has become since (a restarted container's PID 1 is not mistaken
// for the owner). A holder that finds a higher generation than its own
// (its process stalled past `STALE_MS`) has lost the lock. Old generations
// are removed by whoever takes the lock.
import { open, readFile, readdir, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";

const PREFIX = ".lock.";
export const HEARTBEAT_MS = 1_000;
export const STALE_MS = 10_000;
const POLL_MS = 50;

/** The generations in `dir`, highest first. */
async function generations(dir) {
  const numbers = (await readdir(dir)).filter((n) => n.startsWith(PREFIX)).map((n) => Number(n.slice(PREFIX.length)));
  return numbers.filter((n) => Number.isSafeInteger(n) && n > 0).sort((a, b) => b - a);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Whether generation `path` may be followed: released, or its heartbeat
 * is old. `null` when it is gone (removed meanwhile). A file just created
 * and not yet written reads as held (its mtime is fresh). */
async function followable(path) {
  const [info, text] = await Promise.all([stat(path).catch(() => null), readFile(path, "utf8").catch(() => null)]);
  if (info === null || text === null) return null;
  let released = false;
  try {
    released = JSON.parse(text).released === true;
  } catch {
    // being written: held
  }
  return released || Date.now() - info.mtimeMs > STALE_MS;
}

/** Creates `path` exclusively with `content`; false when it exists. */
async function create(path, content) {
  let handle;
  try {
    handle = await open(path, "wx");
  } catch (error) {
    if (error.code === "EEXIST") return false;
    throw error;
  }
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  return true;
}

/** The lock of `dir`: `hold(fn, signal)` runs `fn` while holding it and
 * resolves with its result, or with `undefined` without running it when
 * `signal` aborts the wait. `lost()` says whether a holder was overtaken. */
export function fileLock(dir) {
  const path = (n) => join(dir, PREFIX + n);
  let lost = false;

  /** The generation this process now holds, or `null` when aborted. */
  async function take(signal) {
    for (;;) {
      if (signal?.aborted) return null;
      const [top] = await generations(dir);
      const open = top === undefined ? true : await followable(path(top));
      if (open) {
        const next = (top ?? 0) + 1;
        const me = { owner: globalThis.crypto.randomUUID(), pid: process.pid, startedAt: new Date().toISOString(), released: false };
        if (await create(path(next), JSON.stringify(me))) {
          // A process that listed long ago may create a generation removed
          // since: it holds nothing unless its generation is the highest.
          const [now] = await generations(dir);
          if (now === next) return next;
          await unlink(path(next)).catch(() => {});
        }
        continue;
      }
      if (open === null) continue; // removed meanwhile: list again
      await pause(POLL_MS, signal);
    }
  }

  return {
    lost: () => lost,
    async hold(fn, signal) {
      const held = await take(signal);
      if (held === null) return undefined;
      lost = false;
      for (const n of await generations(dir)) if (n < held - 1) await unlink(path(n)).catch(() => {});
      const heartbeat = setInterval(async () => {
        const now = new Date();
        await utimes(path(held), now, now).catch(() => {});
        const [top] = await generations(dir).catch(() => [held]);
        if (top !== held) lost = true;
      }, HEARTBEAT_MS);
      heartbeat.unref?.();
      try {
        return await fn();
      } finally {
        clearInterval(heartbeat);
        lost = false;
        await writeFile(path(held), JSON.stringify({ released: true })).catch(() => {});
      }
    },
  };
}
