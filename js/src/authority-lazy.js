// The second wasm module's classes — the fleet's authority,
// `BudgetAuthority`, and the outbox's rules, `OutboxRules` — where the
// runtime instantiates wasm synchronously (Node, Deno, Bun, workerd): the
// module (src/host/mod.rs) is instantiated at the first `new` of either,
// so an isolate that only retries never pays for it.
import { BudgetAuthority as Authority, OutboxRules as Rules, initSync } from "./saferetry_authority.js";
import { loadFailed } from "./load.js";

let ready = false;

/** `module()` gives the wasm (bytes or a compiled module); `file` names it in errors. */
export function lazily(file, module, Base = Authority, name = "BudgetAuthority") {
  // Anonymous, named below: a class expression named like the glue's class
  // it extends made esbuild (in Wrangler's build) refer `extends` to itself.
  const Lazy = class extends Base {
    constructor(...args) {
      if (!ready) {
        try {
          initSync({ module: module() });
        } catch (error) {
          throw loadFailed(file, error);
        }
        ready = true;
      }
      super(...args);
    }
  };
  Object.defineProperty(Lazy, "name", { value: name });
  return Lazy;
}

export { Rules };
