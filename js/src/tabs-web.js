// `tabBudget` in browsers and bundlers: the fleet's module (authority.js,
// its wasm beside it) fetched with `import()` when a policy first takes a
// tab budget. A function of its own, not a re-export: a bundler drops this
// file (and the `import()` with it) from a page that does not use
// `tabBudget`, which would otherwise carry the fleet's module (inlined by a
// bundler that does not split), and keeps it whole in one that does (a
// re-export would be resolved straight to tabs.js, the registration
// dropped).
import { fleetFrom } from "./load.js";
import { tabBudget as budget } from "./tabs.js";

const fleet = () => import("./authority.js");

/** A budget shared by the origin's tabs (js/src/tabs.js `tabBudget`). */
export function tabBudget(name, options) {
  fleetFrom(fleet);
  return budget(name, options);
}
