// A policy's shared budget: the glue's lease helpers (src/host/operation/glue.rs),
// relayed to lease-relay.js once something that brings a fleet module
// loaded it (tabs.js, the authority's loaders). Until then — a build
// with no fleet module, which a page that never shares a budget is —
// every policy is told there is none (src/host/api/leased.rs), and this stand-in
// is all the page carries.

/** Where a carrier names its fleet module (lease-relay.js). */
export const LEASE = Symbol.for("saferetry.lease");

export { RELEASE };

export const NONE = 'saferetry: no fleet module for this shared budget (docs/fleet-budgets.md "Fleet budgets")';

const RELEASE = 1; // `leaseValue`'s op that releases (src/policy/budget/lease/link.rs)
const STATS = 0; // and the one that answers the client's stats

// `stats().shared.reason` while the client's module loads.
const LOADING = "saferetry: the lease client's module is loading";

let relay = {
  leaseOpen: () => 0,
  leaseCall: () => NaN,
  leaseValue: (handle, op, done) => (op === RELEASE ? done() : NONE),
};

/** Takes the stand-in's place (lease-relay.js). */
export function install(real) {
  relay = real;
}

export const lease = {
  leaseOpen: (exchange, attach, ...config) => relay.leaseOpen(exchange, attach, ...config),
  leaseCall: (handle, op, a, b) => relay.leaseCall(handle, op, a, b),
  leaseValue: (handle, op, done) => relay.leaseValue(handle, op, done),
};

/** `stats().shared` of the client the relay numbers `handle`: its stats
 * (a fresh object, parsed from the fleet's JSON text), or, while there is
 * none (loading, or failed: the relay answers why), mode `fallback` and
 * why; with the budget's `scope` when it has one. Shaping only: src/host/
 * api/exports.rs `Policy::stats` says whether there is a client. */
export function sharedStats(handle, scope) {
  const value = relay.leaseValue(handle, STATS);
  const stats = typeof value === "object" && value !== null ? value : { mode: "fallback", reason: typeof value === "string" ? value : LOADING };
  if (scope !== undefined) stats.scope = scope;
  return stats;
}
