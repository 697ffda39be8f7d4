// One tab of the fleet-browsers tier (tests/fleet/browsers.mjs): a policy
// whose budget is `tabBudget(name)` (or a per-tab one, to compare), driven
// by the runner through window.__tab. Everything here is the test's; the
// budget decisions are the package's.
// Named imports: a bundle of this page (check (f)) then leaves the
// authority out until a tab leads, as an app's bundle does.
import { RetryPolicy, tabBudget } from 'saferetry';

const log = (line) => window.__log.push(String(line));
let budget = null;
let policy = null;
const budgetErrors = []; // the messages of the budget's `error` events
const runs = new Map(); // id -> { done, result }

function summary() {
  const stats = policy?.stats();
  return { status: budget?.status?.() ?? null, stats, budgetErrors, visibility: document.visibilityState, locks: !!navigator.locks };
}

async function one(url, reasons) {
  try {
    const res = await policy.fetch(url, { cache: 'no-store' });
    await res.arrayBuffer();
    reasons.ok = (reasons.ok ?? 0) + 1;
  } catch (e) {
    const r = e?.reason ?? e?.name ?? 'error';
    reasons[r] = (reasons[r] ?? 0) + 1;
  }
}

window.__tab = {
  /** kind: "tabs" (tabBudget) | "own" (no shared budget: this tab's own) */
  setup({ name, kind, options }) {
    if (policy) throw new Error('set up twice');
    if (kind === 'tabs') {
      budget = tabBudget(name, options.tabs ?? {});
      budget.addEventListener?.('error', (e) => budgetErrors.push(e.message));
    }
    const { tabs: _t, ...rest } = options;
    policy = new RetryPolicy(kind === 'tabs' ? { ...rest, shared: budget } : rest);
    log(`setup ${kind} ${name}: ${JSON.stringify(budget?.status?.() ?? null)}`);
    return summary();
  },
  /** Starts `ops` operations against `url` in `workers` parallel loops (or
   * until `forMs` passes); the result is read with `result(id)`. */
  start(id, { url, ops = Infinity, workers = 1, forMs = 60_000 }) {
    const reasons = {};
    const until = Date.now() + forMs;
    let left = ops;
    const t0 = Date.now();
    const loop = async () => {
      while (left > 0 && Date.now() < until) { // bounded: ops and time
        left -= 1;
        await one(url, reasons);
      }
    };
    const run = { done: false, result: null };
    runs.set(id, run);
    Promise.all(Array.from({ length: workers }, loop)).then(() => {
      run.result = { reasons, ms: Date.now() - t0, ...summary() };
      run.done = true;
    });
    return true;
  },
  result(id) {
    const run = runs.get(id);
    return run?.done ? run.result : null;
  },
  summary,
  /** Stops this tab's messages both ways (the page's BroadcastChannel
   * wrapper): to the other tabs it is a frozen tab that holds the lock. */
  mute(on) {
    window.__muted = on;
    return summary();
  },
};
window.__ready = true;
log(`ready ${location.href}`);
