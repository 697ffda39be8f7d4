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
