// `outbox()` in Node, Deno and Bun (docs/outbox.md "Outbox"): a store must be given
// (`fileStore(dir)`, `memoryStore()` or one of your own). The outbox's glue
// and its rules (a wasm module of their own) are read when the first outbox
// opens: a process that imports the package only to retry reads neither.
const rules = () => import("./outbox-rules-node.js").then((m) => m.OutboxRules);

/** A durable outbox whose sends and re-sends go through `policy`. */
export function outbox(policy, name, options) {
  return import("./outbox.js").then((m) => m.openOutbox(policy, name, options, rules));
}

export { fileStore } from "./outbox-stores/file.js";
