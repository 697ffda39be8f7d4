// Browsers and bundlers: the browser (or the bundler's asset) fetches the
// wasm file that sits beside this one: the browser's module, without the
// redirect hops a browser never runs (src/host/attempt/nohops.rs). Declared in
// package.json `sideEffects` so that no bundler drops this initialisation.
// Its exports by name, not `* as glue`: a namespace passed on keeps every
// export in a bundle. The module is compiled as it streams in (compile.js) and
// instantiated by the glue's `initSync`: the glue's own loader (its default
// export, its input forms and messages) stays out of a page's bundle.
import { initSync, Policy, checkOptions, machineWork, machineChain, onSettled, onNumber, onText, onTimer, onOnline, onEvent, outcomeText, workBuffer, textBuffer, textBytes } from "./saferetry_web.js";
import { compiled } from "./compile.js";
import { loaded, loadFailed } from "./load.js";

const wasm = new URL("./saferetry_web_bg.wasm", import.meta.url);
let instance;
try {
  instance = initSync({ module: await compiled(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}
// No js/src/hops.js: the browser's `fetch` follows redirects. The poll's
// module is fetched at the first `policy.poll()`.
loaded({ Policy, checkOptions, machineWork, machineChain, onSettled, onNumber, onText, onTimer, onOnline, onEvent, outcomeText, workBuffer, textBuffer, textBytes }, instance, undefined, () => import("./poll-web.js"));

export * from "./core.js";
/** A budget shared by the origin's tabs (docs/fleet-budgets.md): the fleet's module fetched when a policy first takes it. */
export { tabBudget } from "./tabs-web.js";
// No `BudgetAuthority` here: a page imports it from "saferetry/authority"
// (js/src/authority.js). A re-export would load the fleet's module with
// every page: unbundled, and in a bundle split at each `import()` (a
// tabBudget's), the chunk that holds it is the entry's too.
/** The durable outbox (docs/outbox.md "Outbox"): modules of their own, left out of a build that does not use them. */
export { outbox, indexedDBStore } from "./outbox-web.js";
