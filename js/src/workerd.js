// Cloudflare workerd: the wasm arrives as a compiled module import (Wrangler's
// default rule for `.wasm`). Declared in package.json `sideEffects` so that
// no bundler drops this. The glue's exports by name, as web.js takes them:
// a namespace passed on would keep the glue's async loader (3 KB of a
// Worker's JavaScript, parsed at every start) that `initSync` makes unused.
import wasm from "./saferetry_bg.wasm";
import { initSync, Policy, checkOptions, machineWork, machineChain, onSettled, onNumber, onText, onTimer, onOnline, onEvent, outcomeText, workBuffer, textBuffer, textBytes } from "./saferetry.js";
import { follow } from "./hops.js";
import { loaded } from "./load.js";
import { instantiate } from "./poll-workerd.js";
import { HeldResponse } from "./held.js";

// The poll's module, instantiated at the first `policy.poll()`; a buffered
// body held as bytes (js/src/held.js). No fleet's
// module for a `tabBudget`: a Worker has no tabs (its shared budget is
// `durableBudget`), and one here would be compiled at every start.
loaded({ Policy, checkOptions, machineWork, machineChain, onSettled, onNumber, onText, onTimer, onOnline, onEvent, outcomeText, workBuffer, textBuffer, textBytes }, initSync({ module: wasm }), follow, () => Promise.resolve().then(instantiate), HeldResponse);

export * from "./core.js";
/** Its policies take no fleet's module here (see above). */
export { tabBudget } from "./tabs.js";
/** The fleet's authority (docs/fleet-budgets.md "Fleet budgets"): a module of its own, instantiated at its first `new`. */
export { BudgetAuthority } from "./authority-workerd.js";
/** The durable outbox (docs/outbox.md "Outbox"). */
export { outbox } from "./outbox-workerd.js";
