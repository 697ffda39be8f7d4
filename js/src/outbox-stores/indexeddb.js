// An outbox store in IndexedDB, for browsers (docs/outbox.md "Outbox", stores): one
// database per outbox name, one object store keyed by entry id; bodies are
// kept as bytes (structured clone). `lock` is a Web Lock of the origin, so
// exactly one tab (or worker) drains at a time: the others find the entries
// it sent already gone when they get the lock. `wake` registers a
// Background Sync (where the browser has it, and a service worker of the
// page runs `syncOutbox` of saferetry/sw), so what waits is sent even once
// no page of the origin is open.

const STORE = "entries";
// Every write and delete completes only once the browser has flushed it to
// the disk (docs/outbox.md "Outbox", stores): Chromium (since 121) and Firefox
// complete a default transaction before any sync; WebKit makes a strict
// commit a full checkpoint. A browser without the option ignores it.
const STRICT = { durability: "strict" };

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
  const close = async () => {
    const opened = await db?.catch(() => undefined);
    opened?.close();
    db = undefined;
  };
  // A page going into the back/forward cache ends its transactions,
  // closes its connection and starts no other until it is shown again. WebKit froze a cached page with a write still open, and
  // every later page's reads and writes of the database then waited
  // without end (tests/outbox, the write-ahead case). A write cut so is
  // one a crash would cut: the entry stays as it was, for the next drain.
  let hidden = false;
  const transactions = new Set();
  globalThis.addEventListener?.("pagehide", (event) => {
    if (!event.persisted) return; // unloaded: the browser ends it all
    hidden = true;
    for (const t of transactions) {
      try {
        t.abort();
      } catch {
        // Finished meanwhile.
      }
    }
    close();
  });
  globalThis.addEventListener?.("pageshow", () => {
    hidden = false;
  });
  const run = async (mode, fn) => {
    const connection = await open();
    if (hidden) throw new DOMException("The page is hidden: IndexedDB is closed until it is shown again.", "InvalidStateError");
    const t = connection.transaction(STORE, mode, mode === "readwrite" ? STRICT : undefined);
    transactions.add(t);
    const ended = () => transactions.delete(t);
    const done = new Promise((resolve, reject) => {
      t.oncomplete = () => resolve(ended());
      t.onerror = () => reject(t.error, ended());
      t.onabort = () => reject(t.error ?? new DOMException("The transaction was aborted.", "AbortError"), ended());
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
    close,
  };
}
