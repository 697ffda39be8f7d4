// Node, Deno and Bun: the wasm bytes come from disk, compiled synchronously.
// Declared in package.json `sideEffects` so that no bundler drops this.
import { readFileSync } from "node:fs";
import * as glue from "./saferetry.js";
import { follow } from "./hops.js";
import { loaded, loadFailed } from "./load.js";

const wasm = new URL("./saferetry_bg.wasm", import.meta.url);
let instance;
try {
  instance = glue.initSync({ module: readFileSync(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}
loaded(glue, instance, follow, () => import("./poll-node.js")); // the poll's module: read at the first `policy.poll()`

export * from "./core.js";
/** The fleet's authority (docs/fleet-budgets.md "Fleet budgets"): a module of its own, instantiated at its first `new`. */
export { BudgetAuthority } from "./authority-node.js";
/** The durable outbox (docs/outbox.md "Outbox"). */
export { outbox, fileStore } from "./outbox-node.js";
