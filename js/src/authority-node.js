// Node, Deno and Bun: `BudgetAuthority`, read from disk and compiled at its
// first `new` (authority-lazy.js).
import { readFileSync } from "node:fs";
import { lazily } from "./authority-lazy.js";

const wasm = new URL("./saferetry_authority_bg.wasm", import.meta.url);
export const BudgetAuthority = lazily(wasm, () => readFileSync(wasm));
