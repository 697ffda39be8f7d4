// `outbox()` in Node, Deno and Bun (README "Outbox"): a store must be given
// (`fileStore(dir)`, `memoryStore()` or one of your own); the rules come
// with the authority's module, compiled at the first outbox.
import { openOutbox } from "./outbox.js";

const rules = () => import("./authority-node.js").then((m) => m.OutboxRules);

/** A durable outbox whose sends and re-sends go through `policy`. */
export function outbox(policy, name, options) {
  return openOutbox(policy, name, options, rules);
}

export { fileStore } from "./outbox-stores/file.js";
