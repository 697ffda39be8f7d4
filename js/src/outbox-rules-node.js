// The durable outbox's rules, `OutboxRules`, in Node, Deno and Bun: read
// from disk and compiled when the first outbox opens (outbox-node.js,
// `import()`), so a process that only retries never pays for them.
import { readFileSync } from "node:fs";
import { OutboxRules as Rules, initSync } from "./saferetry_outbox.js";
import { loadFailed } from "./load.js";

const wasm = new URL("./saferetry_outbox_bg.wasm", import.meta.url);
try {
  initSync({ module: readFileSync(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}

export class OutboxRules extends Rules {}
