// `outbox()` in browsers (README "Outbox"): IndexedDB is the default store,
// and the rules are a wasm module of their own, fetched at the first
// outbox (outbox-rules.js).
import { openOutbox } from "./outbox.js";
import { indexedDBStore } from "./outbox-stores/indexeddb.js";

const rules = () => import("./outbox-rules.js").then((m) => m.OutboxRules);

/** A durable outbox whose sends and re-sends go through `policy`. */
export function outbox(policy, name, options) {
  return openOutbox(policy, name, options, rules, indexedDBStore);
}

export { indexedDBStore };
