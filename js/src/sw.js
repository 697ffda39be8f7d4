// saferetry/sw (docs/outbox.md "Outbox", service worker): a service worker that
// sends an outbox's waiting writes while no page of the origin is open,
// on the Background Sync `sync` event a page's outbox registers when it
// keeps a write (Chromium; elsewhere no such event comes, and the next
// page's drain sends them). A service worker may neither await at its top
// level nor `import()`: both wasm modules are imported here and
// instantiated at the first event, and `syncOutbox` must be called while
// the worker script first runs (the event's listener is added then).
import * as glue from "./saferetry_web.js";
import initRules, { OutboxRules } from "./saferetry_outbox.js";
import { loaded, loadFailed } from "./load.js";
import { RetryPolicy } from "./core.js";
import { openOutbox } from "./outbox.js";
import { check } from "./options.js";
import { indexedDBStore, syncTag } from "./outbox-stores/indexeddb.js";

let ready;
const instantiate = (start, file) => {
  const wasm = new URL(file, import.meta.url);
  return start({ module_or_path: wasm }).catch((error) => {
    throw loadFailed(wasm, error);
  });
};
const load = () => {
  ready ??= Promise.all([instantiate(glue.default, "./saferetry_web_bg.wasm"), instantiate(initRules, "./saferetry_outbox_bg.wasm")]).then(([instance]) => loaded(glue, instance));
  return ready;
};

/** Sends what is due in outbox `name` (the pages' IndexedDB outbox of that
 * name). Rejects when writes still wait, so that the browser fires the
 * event again later (Background Sync's own retry). */
async function drain(name, options) {
  await load();
  const [policy, ttl, credentials] = check("syncOutbox", options);
  const box = await openOutbox(new RetryPolicy(policy), name, { ttl, credentials }, async () => OutboxRules, indexedDBStore);
  try {
    await box.flush();
    const left = (await box.pending()).length;
    if (left > 0) throw new Error(`saferetry: ${left} write(s) of outbox "${name}" still wait; the browser fires the sync again later`);
  } finally {
    await box.close();
  }
}

/** In a service worker, at its top level: drain outbox `name` on its
 * Background Sync event. `options`: the outbox's (`ttl`, `credentials`)
 * and `policy`, the `RetryPolicy` options its sends go through; checked
 * when the first event has loaded the modules (a bad one rejects it, with
 * the TypeError or RangeError naming the field). */
export function syncOutbox(name, options) {
  if (typeof name !== "string" || name === "") throw new TypeError("saferetry: `syncOutbox(name)`: name must be a non-empty string");
  const tag = syncTag(name);
  globalThis.addEventListener("sync", (event) => {
    if (event.tag === tag) event.waitUntil(drain(name, options));
  });
}
