// One Chromium tab of the throttle tier (tests/fleet/throttle.mjs): for each
// variant it is given, a policy on `tabBudget(name)` (its tabs elect a
// leader that runs the authority) issuing the steady load of steady.mjs.
// The runner calls window.__steady.start(specs) and polls
// window.__steady.result(). Glue only: the policy decides.
import { RetryPolicy, reportOf, tabBudget } from 'saferetry';
import { policyOp, steadyLoad } from './steady.mjs';

let result = null;
window.__steady = {
  /** specs: [{ key, name, fleetSize, options, url, t0, durationMs, everyMs, totalMs }] */
  start(specs) {
    const runs = specs.map(async (spec) => {
      const shared = tabBudget(spec.name, { fleetSize: spec.fleetSize });
      const policy = new RetryPolicy({ totalMs: spec.totalMs, ...spec.options, shared });
      return [spec.key, await steadyLoad(policyOp(policy, reportOf, spec.url, { cache: 'no-store' }), spec)];
    });
    Promise.all(runs).then((r) => { result = Object.fromEntries(r); }, (e) => { result = { error: String(e?.stack ?? e) }; });
    return document.visibilityState;
  },
  result: () => result,
};
window.__ready = true;
