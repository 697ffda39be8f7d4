// An outbox store in IndexedDB, for browsers (README "Outbox", stores): one
// database per outbox name, one object store keyed by entry id; bodies are
// kept as bytes (structured clone). `lock` is a Web Lock of the origin, so
// exactly one tab (or worker) drains at a time: the others find the entries
// it sent already gone when they get the lock. `wake` registers a
// Background Sync (where the browser has it, and a service worker of the
// page runs `syncOutbox` of saferetry/sw), so what waits is sent even once
// no page of the origin is open.

const STORE = "entries";

/** The Background Sync tag of outbox `name` (saferetry/sw listens for it). */
export const syncTag = (name) => `saferetry-outbox:${name}`;

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

export function indexedDBStore(name) {
  if (typeof name !== "string" || name === "") throw new TypeError("saferetry: `indexedDBStore(name)`: name must be a non-empty string");
  let db;
  const open = () => {
    db ??= (async () => {
      if (typeof indexedDB === "undefined") throw new DOMException("IndexedDB is not available here.", "NotSupportedError");
      const r = indexedDB.open(`saferetry-outbox:${name}`, 1);
      r.onupgradeneeded = () => r.result.createObjectStore(STORE, { keyPath: "id" });
      const opened = await request(r);
      // Another tab deleting or upgrading the database: let it.
      opened.onversionchange = () => {
        opened.close();
        db = undefined;
      };
      return opened;
    })().catch((error) => {
      db = undefined; // try again next time
      throw error;
    });
    return db;
  };
  const run = async (mode, fn) => {
    const t = (await open()).transaction(STORE, mode);
    const done = new Promise((resolve, reject) => {
      t.oncomplete = resolve;
      t.onerror = () => reject(t.error);
      t.onabort = () => reject(t.error ?? new DOMException("The transaction was aborted.", "AbortError"));
    });
    const [answer] = await Promise.all([request(fn(t.objectStore(STORE))), done]);
    return answer;
  };
  return {
    list: () => run("readonly", (s) => s.getAll()),
    put: (entry) => run("readwrite", (s) => s.put(entry)).then(() => {}),
    delete: (id) => run("readwrite", (s) => s.delete(id)).then(() => {}),
    // A wait for the lock that `signal` ends resolves without running `fn`.
    lock: globalThis.navigator?.locks
      ? (lockName, fn, signal) => navigator.locks.request(lockName, { signal }, fn).catch((error) => (signal?.aborted ? undefined : Promise.reject(error)))
      : undefined,
    // No service worker, or no Background Sync (Firefox, Safari): nothing
    // to register; the next page's drain sends it.
    async wake() {
      const registration = await globalThis.navigator?.serviceWorker?.getRegistration?.().catch(() => undefined);
      await registration?.sync?.register(syncTag(name)).catch(() => {});
    },
    async close() {
      const opened = await db?.catch(() => undefined);
      opened?.close();
      db = undefined;
    },
  };
}
