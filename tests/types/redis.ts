// Compiled by `tsc --strict --noEmit`: the saferetry/redis declarations
// accept the README's recipe with the real clients' own types (node-redis v5,
// ioredis) and reject wrong usage.
import { RetryPolicy } from "saferetry";
import { redisBudget } from "saferetry/redis";
import type { SharedBudget } from "saferetry";
import { createClient } from "redis";
import { Redis } from "ioredis";

export async function withNodeRedis(): Promise<RetryPolicy> {
  const client = await createClient({ url: "redis://127.0.0.1:6379" }).connect();
  const shared: SharedBudget = redisBudget(client, "api.example.com", { fleetSize: 8 });
  return new RetryPolicy({ maxAttempts: 3, rate: { requests: 100 }, shared });
}

export function withIoredis(): RetryPolicy {
  const client = new Redis("redis://127.0.0.1:6379");
  return new RetryPolicy({ shared: redisBudget(client, "api.example.com", { key: "budgets:api", commandMs: 100 }) });
}

export function wrong(client: Redis): void {
  // @ts-expect-error a budget needs a name (one per upstream)
  redisBudget(client);
  // @ts-expect-error not a Redis client
  redisBudget({ get: () => null }, "api");
  // @ts-expect-error commandMs is a number of milliseconds
  redisBudget(client, "api", { commandMs: "100" });
}
