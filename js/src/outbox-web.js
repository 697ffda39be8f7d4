// `outbox()` in browsers (docs/outbox.md "Outbox"): IndexedDB is the default store,
// and the rules are a wasm module of their own, fetched at the first
// outbox (outbox-rules.js). The outbox itself (outbox.js) is fetched then
// too: a page that only retries loads neither, bundled or not.
import { indexedDBStore } from "./outbox-stores/indexeddb.js";

// One `import()` for every outbox: WebKit resolves a second `import()` of a
// module still awaiting its wasm (top-level await) before that module has
// run, and its `OutboxRules` is then an uninitialised binding (a
// ReferenceError when a page opens two outboxes at once). A failed load
// stays failed, as the module map keeps it.
let loading;
const rules = () => (loading ??= import("./outbox-rules.js").then((m) => m.OutboxRules));

/** A durable outbox whose sends and re-sends go through `policy`. */
export function outbox(policy, name, options) {
  return import("./outbox.js").then((m) => m.openOutbox(policy, name, options, rules, indexedDBStore));
}

export { indexedDBStore };
