// saferetry/cloudflare: everything of `saferetry`, plus a fleet budget kept
// by a Durable Object. Self-contained: no dependency on
// @cloudflare/workers-types (the class extends `DurableObject` from
// "cloudflare:workers" at run time).
import type { AuthorityStats, FleetConfig, LeaseGrant, LeaseRequest, SharedBudget } from "./index.js";

export * from "./index.js";

/** The Durable Object's storage, as much of it as RetryBudget uses. */
export interface RetryBudgetStorage {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
}

/** The Durable Object's state (`ctx`), as much of it as RetryBudget uses. */
export interface RetryBudgetState {
  readonly storage: RetryBudgetStorage;
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
}

/** What `stats()` of the object answers. */
export interface RetryBudgetStats extends AuthorityStats {
  /** Tokens in the shared bucket; `null` when no client has configured a quota. */
  quotaLevel: number | null;
  /** The quota and rate in force; `null` before the first request. */
  config: FleetConfig | null;
}

/** A fleet's retry quota and start rate: export it from the Worker's main
 * module and bind it (wrangler `durable_objects` + a migration). Its state
 * is in Durable Object storage, so an evicted or restarted object keeps its
 * level. Call it through `durableBudget`, one object per upstream. */
export declare class RetryBudget {
  constructor(ctx: RetryBudgetState, env: unknown);
  /** One client's lease request → its grant (RPC). */
  grant(request: LeaseRequest): Promise<LeaseGrant>;
  /** The authority's snapshot, as stored. */
  state(): object;
  stats(): RetryBudgetStats;
}

/** A Durable Object namespace binding of `RetryBudget`, as much of it as
 * durableBudget uses (workers-types' `DurableObjectNamespace` fits). */
export interface RetryBudgetNamespace {
  idFromName(name: string): unknown;
  get(id: any): unknown;
}

/** The `shared` option of a policy, kept by the `RetryBudget` object named
 * `name` of `namespace` (the binding, or a function returning it, for a
 * policy made before `env` is at hand). Use one name per upstream. */
export declare function durableBudget(
  namespace: RetryBudgetNamespace | (() => RetryBudgetNamespace),
  name: string,
  /** `fleetSize`: 1..=10000; any other key, or a value out of range, is a `TypeError`/`RangeError` naming it. */
  options?: { fleetSize?: number },
): SharedBudget;

/** A Durable Object's storage, as much of it as the outbox uses. */
export interface OutboxStorage {
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  setAlarm(at: number): Promise<void>;
}

/** The outbox's store in a Durable Object's storage; `wake` sets its alarm. */
export declare function durableStore(storage: OutboxStorage): import("./index.js").OutboxStore;

/** What `OutboxObject.send` answers (RPC: plain data). */
export interface OutboxSendAnswer {
  kind: import("./index.js").Outcome["kind"];
  reason: import("./index.js").Reason;
  kept: boolean;
  notKept: import("./index.js").NotKept | null;
  id: string | null;
  retryAt: number | null;
  status: number | null;
}

/** A durable outbox kept by a Durable Object: its storage keeps what ends
 * try-later, its alarm sends it when due (after an eviction or a restart
 * too). Subclass it for the policy's and the outbox's options. */
export declare class OutboxObject {
  constructor(ctx: { readonly storage: OutboxStorage }, env: unknown);
  policyOptions(): import("./index.js").RetryOptions;
  outboxOptions(): Omit<import("./index.js").OutboxOptions, "store">;
  /** Any other key, or a bad value (`OutboxObject.send.idempotencyKey`), rejects with the `TypeError`/`RangeError` naming it. */
  send(request: { url: string; method?: string; headers?: HeadersInit; body?: BodyInit | null; idempotencyKey?: string | boolean; durable?: import("./index.js").OutboxDurable }): Promise<OutboxSendAnswer>;
  pending(): Promise<import("./index.js").OutboxEntry[]>;
  alarm(): Promise<void>;
}
