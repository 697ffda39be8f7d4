// The fleet's authority, `BudgetAuthority`, where the runtime instantiates
// wasm synchronously (Node, Deno, Bun, workerd): its module
// (src/host/mod.rs) is instantiated at the first `new BudgetAuthority()`,
// so an isolate that only retries never pays for it.
import { BudgetAuthority as Authority, initSync } from "./saferetry_authority.js";
import { loadFailed } from "./load.js";

/** `module()` gives the wasm (bytes or a compiled module); `file` names it in errors. */
export function lazily(file, module) {
  let ready = false;
  // Anonymous, named below: a class expression named like the glue's class
  // it extends made esbuild (in Wrangler's build) refer `extends` to itself.
  const Lazy = class extends Authority {
    constructor() {
      if (!ready) {
        try {
          initSync({ module: module() });
        } catch (error) {
          throw loadFailed(file, error);
        }
        ready = true;
      }
      super();
    }
  };
  Object.defineProperty(Lazy, "name", { value: "BudgetAuthority" });
  return Lazy;
}
