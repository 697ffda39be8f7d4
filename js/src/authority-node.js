// Node, Deno and Bun: the fleet's module (`BudgetAuthority` and the
// policies' leased clients), read from disk and compiled at its first use
// (authority-lazy.js). In package.json `sideEffects`: a Node bundle keeps
// it, so that a policy with a carrier of its own finds its client's
// module (js/src/lease-relay.js) whether or not it uses `BudgetAuthority`.
import { readFileSync } from "node:fs";
import { lazily } from "./authority-lazy.js";

const wasm = new URL("./saferetry_authority_bg.wasm", import.meta.url);
const { BudgetAuthority, fleet } = lazily(wasm, () => readFileSync(wasm));
export { BudgetAuthority };

/** The fleet's module for a `tabBudget` (js/src/load.js `fleets`): its class and instantiated glue. */
export const fleetModule = () => ({ BudgetAuthority, fleet: fleet() });
