// saferetry/authority's types: the fleet's authority as a module of its own
// (a page's way to it), the same class "saferetry" exports elsewhere.
import { BudgetAuthority } from "saferetry/authority";
import type { AuthorityStats, LeaseGrant, LeaseRequest } from "saferetry/authority";
import { BudgetAuthority as FromEntry, RetryPolicy } from "saferetry";

const authority: FromEntry = new BudgetAuthority();
export const grantOf = (request: LeaseRequest): LeaseGrant => authority.grant(request);
export const stats: AuthorityStats = authority.stats();
export const policy = new RetryPolicy({ shared: { exchange: (r: LeaseRequest) => authority.grant(r) } });
// @ts-expect-error the module exports the authority, not the policy
export { RetryPolicy as NotHere } from "saferetry/authority";
