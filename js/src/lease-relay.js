// A policy's shared budget (docs/fleet-budgets.md "Fleet budgets"), between the page's
// wasm module, where the policy runs (src/host/api/leased.rs), and the fleet's,
// where its leased client does (src/host/lease/fleet.rs: the authority's module,
// or the Redis module). Glue only: this relays numbers between the two
// and performs the client's exchanges; every budget decision is the
// client's, or, while there is none, the policy's
// (src/policy/budget/lease/link.rs). Only what brings a fleet module
// imports this file (tabs.js, the authority's loaders); it then takes the
// place of lease.js's stand-in (listed in package.json `sideEffects`, so
// that no bundler drops that from a build that imports it).
//
// Which fleet module a policy's client lives in: the one its carrier
// names (`tabBudget`, `redisBudget`: a function under LEASE that answers
// the module, or a promise of it), else the one this realm provides
// (`provide`: whatever loads the authority's module — Node's, Deno's and
// Bun's entry, at first use; a build that uses `BudgetAuthority` or
// `saferetry/cloudflare`). None: the policy is told why, and keeps a
// budget of its own.
import { exchange } from "./executor.js";
import * as attempts from "./attempts.js";
import { install, LEASE, NONE, RELEASE } from "./lease.js";

let provided;

/** `load()` answers the fleet's module for carriers that name none. */
export function provide(load) {
  provided ??= load;
}

// What a client performs (src/host/lease/fleet.rs `LeaseGlue`): its exchanges, by
// the executor, and the carrier's `attach`, with a release that holds its
// `Lease` (whose reference to the client is weak).
const perform = { exchange, attach: (id, lease) => attempts.invoke(id, () => new Promise((resolve) => lease.release(resolve))) };

// By the relay's number: undefined while the module loads, then
// { fleet, id } (the client's number there), or why it could not load;
// null once closed. 0: a policy the stand-in told there is none.
const links = [NONE];
const CLOSE = 2; // `leaseValue`'s op that closes (src/policy/budget/lease/link.rs)

install({
  leaseOpen(exchangeId, attachId, ...config) {
    const handle = links.push(undefined) - 1;
    const open = (fleet) => {
      if (links[handle] === undefined) links[handle] = { fleet, id: fleet.leaseOpen(exchangeId, attachId, perform, ...config) };
    };
    const fail = (error) => {
      if (links[handle] === undefined) links[handle] = String(error?.message ?? error);
    };
    try {
      const carrier = attempts.callRecord(exchangeId).self;
      const named = carrier[LEASE];
      const fleet = typeof named === "function" ? named.call(carrier) : provided?.();
      if (!fleet) throw new Error(NONE);
      if (typeof fleet.then === "function") fleet.then(open).catch(fail);
      else open(fleet);
    } catch (error) {
      fail(error);
    }
    return handle;
  },
  /** A budget call: the client's answer, NaN while there is none. */
  leaseCall(handle, op, a, b) {
    const link = links[handle];
    return link?.id ? link.fleet.leaseCall(link.id, op, a, b) : NaN;
  },
  /** The client's value (its stats; a release, calling `done` once
   * reported; closing it), or without one why its module could not load
   * (undefined while it loads). The fleet's module answers stats as JSON
   * text (src/host/lease/fleet.rs `lease_value`: no export answers a lone JS
   * value). */
  leaseValue(handle, op, done) {
    const link = links[handle];
    if (op === CLOSE) links[handle] = null;
    if (op === RELEASE && !link?.id) return done();
    if (!link?.id) return link;
    const text = link.fleet.leaseValue(link.id, op, done);
    return text === undefined ? undefined : JSON.parse(text);
  },
});
