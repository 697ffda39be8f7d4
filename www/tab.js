// One "tab" of the demo's several-tabs scenario (www/several.js opens it in
// a frame of the demo page: a same-origin frame shares Web Locks and
// BroadcastChannel, and so a `tabBudget`, exactly as a tab does). Its one
// policy takes `tabBudget(budget)`: the tabs elect a leader that runs the
// budget's authority, so they share one retry quota and one throttling
// window. It calls the URL it is given every `everyMs` from `t0`, and
// tells the page how each call ended. Glue only: the policy decides.
//
//   tab.html?tab=2&budget=<name>&throttle=0   (throttle=0: `throttle: false`)
//   page → frame: { go: { t0, url, calls, everyMs } }
//   frame → page: { tab, ready: true } once its policy has its leased client,
//                 { tab, progress: { calls, ok, throttled, leader } } while it runs,
//                 { tab, done: { ops, stats } }: ops as [start (epoch ms),
//                 duration ms, "ok" | a status | the stop reason, requests sent]
import { RetryPolicy, reportOf, tabBudget } from 'saferetry';
import { LOAD_OPTIONS } from './scenarios.js';

const params = new URLSearchParams(location.search);
const tab = Number(params.get('tab'));
const budget = tabBudget(params.get('budget'), { fleetSize: 3 });
const policy = new RetryPolicy({ ...LOAD_OPTIONS, ...(params.get('throttle') === '0' && { throttle: false }), shared: budget });
const tell = (message) => parent.postMessage({ tab, ...message }, location.origin);
const show = (text) => { document.getElementById('tab-state').textContent = text; };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One call: how it ended and the requests it sent (from its report). */
async function call(url) {
  try {
    const res = await policy.fetch(url, { cache: 'no-store' });
    await res.arrayBuffer();
    return [res.ok ? 'ok' : String(res.status), reportOf(res).attempts.length];
  } catch (e) {
    if (e?.name !== 'RetryError') return [`threw ${e?.message ?? e}`, 0];
    return [e.reason, e.report.attempts.length];
  }
}

async function run({ t0, url, calls, everyMs }) {
  const ops = [];
  const running = [];
  const counts = { calls: 0, ok: 0, throttled: 0 };
  const progress = () => {
    const leader = budget.status().leader;
    show(`Tab ${tab}${leader ? ' (leader)' : ''}: ${counts.calls} calls, ${counts.ok} ok, ${counts.throttled} throttled`);
    tell({ progress: { ...counts, leader } });
  };
  const ticker = setInterval(progress, 250);
  for (let i = 0; i < calls; i++) { // one call every everyMs, each on time whatever the others do
    await sleep(Math.max(0, t0 + i * everyMs - Date.now()));
    const start = Date.now();
    const lag = start - (t0 + i * everyMs); // how late this tab's own timer fired
    counts.calls += 1;
    running.push(call(url).then(([outcome, sent]) => {
      if (outcome === 'ok') counts.ok += 1;
      if (outcome === 'throttled') counts.throttled += 1;
      ops.push([start, Date.now() - start, outcome, sent, lag]);
    }));
  }
  await Promise.all(running);
  clearInterval(ticker);
  progress();
  tell({ done: { ops, stats: policy.stats() } });
}

addEventListener('message', (event) => {
  if (event.origin === location.origin && event.data?.go) run(event.data.go);
});

// Ready once the fleet's module has loaded and the policy has its leased
// client (before that it would decide on a budget of its own).
for (let i = 0; i < 200 && typeof policy.stats().shared?.requests !== 'number'; i++) await sleep(25);
show(`Tab ${tab}: ready`);
tell({ ready: true });
