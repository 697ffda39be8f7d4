// The fleet's module — the authority, `BudgetAuthority`, and the policies'
// leased clients (src/host/mod.rs) — where the runtime instantiates wasm
// synchronously (Node, Deno, Bun, workerd): instantiated at the first `new
// BudgetAuthority()` or the first policy whose shared budget needs a
// client (js/src/lease-relay.js), so an isolate that only retries never pays for
// it.
import * as fleet from "./saferetry_authority.js";
import { loadFailed } from "./load.js";
import { provide } from "./lease-relay.js";
import { withObjects } from "./authority-api.js";

/** `module()` gives the wasm (bytes or a compiled module); `file` names it
 * in errors. Answers the class, and `fleet()`: the module's glue,
 * instantiated (at the first call). */
export function lazily(file, module) {
  let ready = false;
  /** The module, instantiated once. */
  const load = () => {
    if (!ready) {
      try {
        fleet.initSync({ module: module() });
      } catch (error) {
        throw loadFailed(file, error);
      }
      ready = true;
    }
    return fleet;
  };
  provide(load);
  // Anonymous, named below: a class expression named like the glue's class
  // it extends made esbuild (in Wrangler's build) refer `extends` to itself.
  const Lazy = class extends withObjects(fleet.BudgetAuthority) {
    constructor() {
      load();
      super();
    }
  };
  Object.defineProperty(Lazy, "name", { value: "BudgetAuthority" });
  return { BudgetAuthority: Lazy, fleet: load };
}
