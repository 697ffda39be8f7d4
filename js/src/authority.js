// The fleet's authority, `BudgetAuthority` (README "Fleet budgets"), in
// browsers and bundlers: a wasm module of its own (src/host/mod.rs), so a
// page that only retries never downloads it. Loaded by `import {
// BudgetAuthority }` (a bundler drops this file from a build that does not
// use it: it is not in package.json `sideEffects`) and by a tab when it
// becomes a `tabBudget` leader (tabs.js, `import()`). Its wasm file sits
// beside it, as the package's own does.
import init, { BudgetAuthority as Authority } from "./saferetry_authority.js";
import { loadFailed } from "./load.js";

const wasm = new URL("./saferetry_authority_bg.wasm", import.meta.url);
try {
  await init({ module_or_path: wasm });
} catch (error) {
  throw loadFailed(wasm, error);
}

// A class of this file's own (not a re-export of the glue's), so that no
// bundler links the glue directly and drops the initialisation above.
export class BudgetAuthority extends Authority {}
