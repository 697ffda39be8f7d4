// An outbox store in memory (docs/outbox.md "Outbox", stores): for tests, and for
// a process that wants the outbox's rules without durability. Entries are
// copied in and out, as a real store would; `lock` serialises the drains of
// every outbox sharing this store in this process.

export function memoryStore() {
  const entries = new Map();
  let held = Promise.resolve();
  return {
    async list() {
      return [...entries.values()].map((e) => structuredClone(e));
    },
    async put(entry) {
      entries.set(entry.id, structuredClone(entry));
    },
    async delete(id) {
      entries.delete(id);
    },
    lock(_name, fn, signal) {
      const run = held.then(() => (signal?.aborted ? undefined : fn()));
      held = run.catch(() => {});
      return run;
    },
  };
}
