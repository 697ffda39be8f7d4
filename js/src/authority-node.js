// Node, Deno and Bun: `BudgetAuthority` and `OutboxRules`, read from disk
// and compiled at the first `new` of either (authority-lazy.js).
import { readFileSync } from "node:fs";
import { lazily, Rules } from "./authority-lazy.js";

const wasm = new URL("./saferetry_authority_bg.wasm", import.meta.url);
export const BudgetAuthority = lazily(wasm, () => readFileSync(wasm));
export const OutboxRules = lazily(wasm, () => readFileSync(wasm), Rules, "OutboxRules");
