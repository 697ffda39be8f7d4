// saferetry/redis: a fleet budget kept in Redis (or Valkey), for Node, Deno
// and Bun. Self-contained: no dependency on the `redis` or `ioredis` types.
import type { SharedBudget } from "./index.js";

/** As much of a node-redis (`redis` v5) client as redisBudget uses. */
export interface NodeRedisClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/** As much of an ioredis client as redisBudget uses. */
export interface IoRedisClient {
  pipeline(): { get(key: string): any; time(): any; exec(): Promise<unknown> };
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
}

/** Any other key, or a value of the wrong type or out of its range, is a `TypeError`/`RangeError` naming it (`redisBudget.fleetSize`). */
export interface RedisBudgetOptions {
  /** Processes expected to share the budget: the fallback start rate is `rate` divided among them. 1..=10000, default 4. */
  fleetSize?: number;
  /** The Redis key that holds the budget's state, a non-empty string. Default "saferetry:budget:<name>". */
  key?: string;
  /** Each Redis command's time limit, ms (1..=60000, default 250): a later answer fails the exchange and the policy falls back. */
  commandMs?: number;
}

/** The `shared` option of a policy, kept in Redis through `client` (a connected
 * node-redis or ioredis client): every process naming the same budget on the
 * same Redis shares one retry quota and one start rate. One name per upstream. */
export declare function redisBudget(client: NodeRedisClient | IoRedisClient, name: string, options?: RedisBudgetOptions): SharedBudget;
