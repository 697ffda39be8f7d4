// Cloudflare workerd: `BudgetAuthority` and `OutboxRules`, from a compiled
// module import (Wrangler's default rule for `.wasm`), instantiated at the
// first `new` of either (authority-lazy.js). A Worker that uses neither
// drops this file and the wasm with it (it is not in package.json
// `sideEffects`).
import wasm from "./saferetry_authority_bg.wasm";
import { lazily, Rules } from "./authority-lazy.js";

export const BudgetAuthority = lazily("./saferetry_authority_bg.wasm", () => wasm);
export const OutboxRules = lazily("./saferetry_authority_bg.wasm", () => wasm, Rules, "OutboxRules");
