// The fleet's module in browsers and bundlers (docs/fleet-budgets.md "Fleet budgets"): the
// authority, `BudgetAuthority`, and the policies' leased clients
// (src/host/mod.rs), a wasm module of its own, so a page that only retries
// never downloads it. Loaded by `import { BudgetAuthority } from
// "saferetry/authority"` and by a `tabBudget` when a policy takes it
// (tabs.js, `import()`); never by the browser's entry, web.js. Its wasm
// file sits beside it, as the package's own does.
import init, * as fleet from "./saferetry_authority.js";
import { loadFailed } from "./load.js";
import { provide } from "./lease-relay.js";
import { withObjects } from "./authority-api.js";

const wasm = new URL("./saferetry_authority_bg.wasm", import.meta.url);
try {
  await init({ module_or_path: wasm });
} catch (error) {
  throw loadFailed(wasm, error);
}
// The leased clients of carriers that name no module of their own (js/src/lease-relay.js).
provide(() => fleet);

// A class of this file's own (not a re-export of the glue's), so that no
// bundler links the glue directly and drops the initialisation above.
export class BudgetAuthority extends withObjects(fleet.BudgetAuthority) {}

/** The module's exports, for the leased clients (js/src/lease-relay.js). */
export { fleet };
