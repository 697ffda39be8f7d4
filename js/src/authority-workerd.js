// Cloudflare workerd: the fleet's module (`BudgetAuthority` and the
// policies' leased clients), from a compiled module import (Wrangler's
// default rule for `.wasm`), instantiated at its first use
// (authority-lazy.js). A Worker that does not use `BudgetAuthority` (or
// `saferetry/cloudflare`) drops this file and the wasm with it (it is not
// in package.json `sideEffects`).
import wasm from "./saferetry_authority_bg.wasm";
import { lazily } from "./authority-lazy.js";

export const { BudgetAuthority } = lazily("./saferetry_authority_bg.wasm", () => wasm);
