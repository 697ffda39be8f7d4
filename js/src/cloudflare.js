// Cloudflare Workers: everything of the workerd entry, plus a fleet budget
// kept by a Durable Object. Glue only: the authority (`BudgetAuthority`, in
// the same wasm) decides every grant; this file carries requests to it over
// RPC and keeps its state in the object's storage.
import { DurableObject, waitUntil } from "cloudflare:workers";
import { BudgetAuthority, RetryPolicy, outbox } from "./workerd.js";
import { durableStore } from "./outbox-stores/durable.js";
import { check } from "./options.js";

export * from "./workerd.js";

const noop = () => {};

// The storage key of the authority's snapshot.
const STATE = "saferetry:authority";

/** A fleet's retry quota and start rate: one object per budget name
 * (`durableBudget(env.RETRY_BUDGET, "api.example.com")`). Its state is
 * written to storage before each grant is answered and read back when the
 * object starts, so an evicted or restarted object keeps its level. */
export class RetryBudget extends DurableObject {
  #authority = new BudgetAuthority();

  constructor(ctx, env) {
    super(ctx, env);
    // No call is delivered before the snapshot is back.
    ctx.blockConcurrencyWhile(async () => {
      const saved = await ctx.storage.get(STATE);
      if (saved === undefined) return;
      try {
        this.#authority.restore(saved);
      } catch (error) {
        // A snapshot this version cannot read (written by another one):
        // start afresh rather than refuse every grant for good.
        console.warn(`saferetry: RetryBudget ignored a stored state it cannot read: ${error?.message ?? error}`);
      }
    });
  }

  /** One client's lease request → its grant (`LeaseGrant`). */
  async grant(request) {
    const grant = this.#authority.grant(request);
    await this.ctx.storage.put(STATE, this.#authority.state());
    return grant;
  }

  /** The authority's snapshot (what storage holds). */
  state() {
    return this.#authority.state();
  }

  /** Counters, the shared bucket's level and the config in force, for tests and operations. */
  stats() {
    return { ...this.#authority.stats(), quotaLevel: this.#authority.quotaLevel ?? null, config: this.#authority.config() ?? null };
  }
}

/** A `shared` budget for `new RetryPolicy({ shared })`, kept by the
 * `RetryBudget` object named `name` in `namespace` (a Durable Object
 * namespace binding, or a function returning it — for a policy made at
 * module scope, before `env` is known). One name per upstream. */
export function durableBudget(namespace, name, options) {
  const [fleetSize] = check("durableBudget", options);
  if (typeof name !== "string" || name === "") throw new TypeError("durableBudget: name must be a non-empty string (one budget per upstream)");
  if (typeof namespace !== "function" && typeof namespace?.idFromName !== "function") {
    throw new TypeError("durableBudget: namespace must be a Durable Object namespace binding or a function returning one");
  }
  const binding = typeof namespace === "function" ? namespace : () => namespace;
  const budget = {
    scope: "fleet",
    // A stub is bound to the request that made it: take a fresh one per
    // call. The policy exchanges in the background, inside whichever request
    // needed it; workerd drops an unfinished call (and its timers) when that
    // request ends, so keep the request alive until the answer is in.
    exchange(request) {
      const ns = binding();
      // The stub answers an RpcPromise (a thenable, not a Promise).
      const answer = Promise.resolve(ns.get(ns.idFromName(name)).grant(request));
      try {
        waitUntil(answer.then(noop, noop));
      } catch {
        // Outside a request (no context to extend): nothing to keep alive.
      }
      return answer;
    },
  };
  if (fleetSize !== undefined) budget.fleetSize = fleetSize;
  return budget;
}

/** A durable outbox kept by a Durable Object (docs/outbox.md "Outbox"): `send`
 * runs the write through the object's policy and keeps it in the object's
 * storage when it ends `try-later`; the object's alarm sends it when due,
 * after an eviction or a restart too. Subclass it to give the policy's
 * options (`policyOptions()`) or the outbox's (`outboxOptions()`). */
export class OutboxObject extends DurableObject {
  #outbox;

  /** The options of the policy every send and re-send goes through. */
  policyOptions() {
    return {};
  }

  /** The outbox's own options (`ttl`, `credentials`, `durable`). */
  outboxOptions() {
    return {};
  }

  #open() {
    this.#outbox ??= outbox(new RetryPolicy(this.policyOptions()), "durable", { ...this.outboxOptions(), store: durableStore(this.ctx.storage) });
    return this.#outbox;
  }

  /** `{ url, method?, headers?, body?, idempotencyKey?, durable? }` → the outcome's
   * data (`kind`, `reason`, `status`, `kept`, `notKept`, `id`, `retryAt`). */
  async send(request) {
    const [url, method, headers, body, idempotencyKey, durable] = check("OutboxObject.send", request);
    const box = await this.#open();
    const r = await box.send(url, { method, headers, body, durable, retry: idempotencyKey === undefined ? undefined : { idempotencyKey } });
    await r.response?.body?.cancel();
    // The alarm is set before the call answers (the object may be evicted right after).
    if (r.kept) await box.flush();
    const { kind, reason, kept, notKept = null, id = null, retryAt = null } = r;
    return { kind, reason, kept, notKept, id, retryAt, status: r.response?.status ?? null };
  }

  /** What waits (`outbox.pending()`). */
  async pending() {
    return (await this.#open()).pending();
  }

  /** Sends what is due; the outbox sets the next alarm if anything still waits. */
  async alarm() {
    await (await this.#open()).flush();
  }
}

export { durableStore };
