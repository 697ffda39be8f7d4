// `outbox()` in workerd (docs/outbox.md "Outbox"): a store must be given (on
// Cloudflare, `OutboxObject` of saferetry/cloudflare keeps it in a Durable
// Object); the rules are a wasm module of their own, instantiated at the
// first outbox.
import { openOutbox } from "./outbox.js";
import { outboxRules } from "./outbox-rules-workerd.js";

const rules = () => Promise.resolve().then(outboxRules);

/** A durable outbox whose sends and re-sends go through `policy`. */
export function outbox(policy, name, options) {
  return openOutbox(policy, name, options, rules);
}
