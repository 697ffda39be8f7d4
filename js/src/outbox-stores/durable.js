// An outbox store in a Durable Object's storage (docs/outbox.md "Outbox", stores):
// entries under one key prefix, and `wake(at)` sets the object's alarm, so
// the entry is sent when due even if the object was evicted or workerd
// restarted meanwhile (`OutboxObject` in cloudflare.js). No lock: one
// object runs one outbox, whose drains follow each other.

const PREFIX = "saferetry-outbox:";

export function durableStore(storage) {
  if (typeof storage?.list !== "function" || typeof storage.setAlarm !== "function") {
    throw new TypeError("saferetry: `durableStore(storage)`: storage must be a Durable Object's `ctx.storage`");
  }
  return {
    list: async () => [...(await storage.list({ prefix: PREFIX })).values()],
    put: (entry) => storage.put(PREFIX + entry.id, entry),
    delete: async (id) => {
      await storage.delete(PREFIX + id);
    },
    wake: (at) => storage.setAlarm(at),
  };
}
