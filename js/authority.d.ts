// saferetry/authority: the fleet's authority, `BudgetAuthority`, as a module
// of its own. A page imports it from here (the "saferetry" entry of a
// browser has no `BudgetAuthority`, so that a page that only retries never
// downloads the fleet's module); elsewhere "saferetry" exports the same class.
export { BudgetAuthority } from "./index.js";
export type { AuthorityStats, FleetConfig, LeaseGrant, LeaseRequest } from "./index.js";
