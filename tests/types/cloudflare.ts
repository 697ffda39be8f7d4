// Compiled by `tsc --strict --noEmit`: the saferetry/cloudflare declarations
// accept the README's Worker and reject wrong usage.
import { RetryBudget, RetryPolicy, durableBudget } from "saferetry/cloudflare";
import type { LeaseGrant, LeaseRequest, RetryBudgetNamespace, RetryBudgetStats, SharedBudget } from "saferetry/cloudflare";

export { RetryBudget };

interface Env {
  RETRY_BUDGET: RetryBudgetNamespace;
}

export function policyFor(env: Env): RetryPolicy {
  const shared: SharedBudget = durableBudget(env.RETRY_BUDGET, "api.example.com", { fleetSize: 8 });
  return new RetryPolicy({ maxAttempts: 3, rate: { requests: 100 }, shared });
}

let current: Env | undefined;
export const lazy = new RetryPolicy({
  shared: durableBudget(() => current!.RETRY_BUDGET, "api.example.com"),
});

export async function viaObject(budget: RetryBudget, request: LeaseRequest): Promise<number> {
  const grant: LeaseGrant = await budget.grant(request);
  const stats: RetryBudgetStats = budget.stats();
  return grant.tokens + (stats.quotaLevel ?? 0) + (stats.config?.rate?.requests ?? 0) + stats.configChanges;
}

export function wrong(env: Env): void {
  // @ts-expect-error a budget needs a name (one per upstream)
  durableBudget(env.RETRY_BUDGET);
  // @ts-expect-error fleetSize is a number
  durableBudget(env.RETRY_BUDGET, "x", { fleetSize: "8" });
  // @ts-expect-error a namespace, not a name
  durableBudget("RETRY_BUDGET", "x");
}

// ---- the outbox in a Durable Object ----
import { OutboxObject, durableStore } from "saferetry/cloudflare";

export class Orders extends OutboxObject {
  policyOptions() {
    return { totalMs: 2000 };
  }
}

export async function viaOutboxObject(o: Orders): Promise<boolean> {
  const a = await o.send({ url: "https://api.example/orders", method: "POST", body: "{}", idempotencyKey: "k-1" });
  return a.kept && a.notKept === null;
}
export const store = durableStore;
