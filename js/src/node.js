// Node, Deno and Bun: the wasm bytes come from disk, compiled synchronously.
// Declared in package.json `sideEffects` so that no bundler drops this.
import { readFileSync } from "node:fs";
import * as glue from "./saferetry.js";
import { follow } from "./hops.js";
import { HeldResponse } from "./held.js";
import { fleetFrom, loaded, loadFailed } from "./load.js";
import { fleetModule } from "./authority-node.js";

const wasm = new URL("./saferetry_bg.wasm", import.meta.url);
let instance;
try {
  instance = glue.initSync({ module: readFileSync(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}
// The poll's module, read at the first `policy.poll()`; a buffered body held
// as bytes where the host is Node (js/src/held.js).
loaded(glue, instance, follow, () => import("./poll-node.js"), HeldResponse);
// A tabBudget's fleet module: the authority's, read at its first use.
fleetFrom(fleetModule);

export * from "./core.js";
export { tabBudget } from "./tabs.js";
/** The fleet's authority (docs/fleet-budgets.md "Fleet budgets"): a module of its own, instantiated at its first `new`. */
export { BudgetAuthority } from "./authority-node.js";
/** The durable outbox (docs/outbox.md "Outbox"). */
export { outbox, fileStore } from "./outbox-node.js";
