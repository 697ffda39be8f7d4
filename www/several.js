// The several-tabs scenario: three "tabs" (frames of this page running
// tab.js, each a same-origin browsing context with a policy of its own on
// one `tabBudget`) call one upstream that goes down and comes back; beside
// them three more on another budget with `throttle: false`. The page only
// starts them, gathers how each call ended and what the fault server
// counted, and draws it. Glue only: every decision is the tabs' policies'.
import { formatMs } from './timeline.js';

const SIDES = [
  { key: 'throttling', label: 'Throttling (the default)', throttle: true },
  { key: 'control', label: 'throttle: false', throttle: false },
];
const READY_MS = 20_000; // bound on the frames' loading and election
const SLACK_MS = 100; // a deadline timer may fire this late, beyond the tab's own timers' lag (lagDuring)
const BUCKET_MS = 500; // the chart's bars

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}

function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Opens the tabs in `host`, runs the scenario `spec` ({ tabs, calls,
 * everyMs, upMs, downMs }) on run `runId`, calls `onProgress(sides, t)`
 * as the tabs report; resolves with the figures (see `figures`), or
 * `null` if `alive()` turned false meanwhile. */
export async function severalTabs({ runId, spec, totalMs, host, alive, onProgress }) {
  const { tabs, calls, everyMs, upMs, downMs } = spec;
  const sides = SIDES.map((side) => ({ ...side, tabs: [] }));
  host.replaceChildren();
  for (const side of sides) {
    const row = el('div', 'tab-row');
    row.append(el('p', 'tab-side', side.label));
    for (let n = 1; n <= tabs; n++) {
      const t = { n, id: `${runId}-${side.key}-t${n}`, progress: null };
      t.ready = new Promise((resolve) => { t.onReady = resolve; });
      t.done = new Promise((resolve) => { t.onDone = resolve; });
      t.frame = Object.assign(document.createElement('iframe'), {
        title: `${side.label}: tab ${n}`,
        src: `tab.html?tab=${n}&budget=${encodeURIComponent(`${runId}-${side.key}`)}&throttle=${side.throttle ? 1 : 0}`,
      });
      side.tabs.push(t);
      row.append(t.frame);
    }
    host.append(row);
  }
  const all = sides.flatMap((side) => side.tabs);
  let t0 = 0;
  const onMessage = (event) => {
    const t = all.find((x) => x.frame.contentWindow === event.source);
    if (!t || event.origin !== location.origin) return;
    if (event.data.ready) t.onReady();
    if (event.data.progress) {
      t.progress = event.data.progress;
      onProgress(sides, t0 ? Date.now() - t0 : null);
    }
    if (event.data.done) t.onDone(event.data.done);
  };
  addEventListener('message', onMessage);
  try {
    await within(Promise.all(all.map((t) => t.ready)), READY_MS, 'the tabs did not load');
    if (!alive()) return null;
    t0 = Date.now() + 200;
    const from = t0 + upMs;
    for (const t of all) {
      const url = `/s/outage/${t.id}?ms=${downMs}&from=${from}`;
      t.frame.contentWindow.postMessage({ go: { t0, url, calls, everyMs } }, location.origin);
    }
    const runMs = calls * everyMs + totalMs + 10_000;
    const done = await within(Promise.all(all.map((t) => t.done)), runMs, 'the tabs did not finish');
    if (!alive()) return null;
    const counts = await Promise.all(all.map((t) => fetch(`/count/${t.id}`, { cache: 'no-store' }).then((r) => r.json())));
    all.forEach((t, i) => Object.assign(t, done[i], { server: counts[i] }));
    return figures(sides, { ...spec, t0, from, back: from + downMs, totalMs });
  } finally {
    removeEventListener('message', onMessage);
  }
}

/** How late a load's own timers fired while operation `o` of `ops` ran
 * (each `[start ms, duration ms, …, ms its start was late]`, one start
 * every `everyMs`): the latest start among those begun during it or up to
 * two starts after it ended, which a stall that delayed its end delayed
 * too. A deadline's timer is no more punctual than they are, so an
 * operation is past its deadline only beyond that lag: the tabs' here,
 * and the throttle tier's (tests/fleet/throttle.mjs imports it). */
export function lagDuring(ops, o, everyMs) {
  return Math.max(0, ...ops.filter((p) => p[0] >= o[0] && p[0] <= o[0] + o[1] + 2 * everyMs).map((p) => p[4]));
}

/** Per tab and per side: calls made, requests the server counted (in all
 * and during the outage), calls throttled (the policy's
 * `stats().throttled`, and as the calls ended), successes, operations
 * past their deadline, the first 200 after the upstream came back, and
 * when the tab was back to full rate: the start of its first call after
 * which none was throttled (null if it never was within the run). Times
 * are ms after the upstream came back. */
function figures(sides, run) {
  const { from, back, everyMs, totalMs } = run;
  const ofTab = (t) => {
    const ended = (o) => o[0] + o[1];
    const oks = t.ops.filter((o) => o[2] === 'ok' && ended(o) >= back).map(ended);
    const after = t.ops.filter((o) => o[0] >= back).sort((a, b) => a[0] - b[0]);
    const last = after.findLastIndex((o) => o[2] === 'throttled');
    const full = last + 1 < after.length ? after[last + 1][0] - back : null;
    return {
      tab: t.n,
      calls: t.ops.length,
      sent: t.server.requests,
      sentInOutage: t.server.starts.filter((at) => at >= from && at < back).length,
      throttled: t.ops.filter((o) => o[2] === 'throttled').length,
      statsThrottled: t.stats.throttled,
      ok: t.ops.filter((o) => o[2] === 'ok').length,
      late: t.ops.filter((o) => o[1] > totalMs + SLACK_MS + lagDuring(t.ops, o, everyMs)).length,
      firstOk: oks.length ? Math.min(...oks) - back : null,
      fullRate: full,
      starts: t.server.starts,
    };
  };
  return {
    ...run,
    sides: sides.map((side) => {
      const rows = side.tabs.map(ofTab);
      const sum = (k) => rows.reduce((n, r) => n + r[k], 0);
      const firsts = rows.map((r) => r.firstOk).filter((v) => v !== null);
      const total = {
        tab: 'all', calls: sum('calls'), sent: sum('sent'), sentInOutage: sum('sentInOutage'), throttled: sum('throttled'),
        statsThrottled: sum('statsThrottled'), ok: sum('ok'), late: sum('late'),
        firstOk: firsts.length ? Math.min(...firsts) : null,
        fullRate: rows.some((r) => r.fullRate === null) ? null : Math.max(...rows.map((r) => r.fullRate)),
      };
      return { key: side.key, label: side.label, rows, total, everyMs };
    }),
  };
}

const after = (ms) => (ms === null ? 'not within the run' : `+${formatMs(Math.max(0, ms))}`);

/** The figures as a table per tab and in all, and a chart of the
 * requests reaching the upstream over time. */
export function renderTabs(f) {
  const table = el('table', 'tabs-table');
  table.innerHTML = `<caption>${f.tabs} tabs each way, a call every ${f.everyMs} ms each (${f.calls} per tab); the upstream down for ${f.downMs / 1000} s from ${f.upMs / 1000} s in</caption>`
    + '<thead><tr><th scope="col">Tab</th><th scope="col">Calls made</th><th scope="col">Requests the upstream got</th>'
    + '<th scope="col">… while down</th><th scope="col">Throttled: nothing sent (stats().throttled)</th><th scope="col">Succeeded</th>'
    + '<th scope="col">First 200 after it came back</th><th scope="col">Back to full rate</th><th scope="col">Past deadline</th></tr></thead>';
  for (const side of f.sides) {
    const body = table.createTBody();
    const head = body.insertRow();
    const th = Object.assign(document.createElement('th'), { scope: 'rowgroup', colSpan: 9, textContent: side.label });
    head.append(th);
    for (const r of [...side.rows, side.total]) {
      const row = body.insertRow();
      if (r.tab === 'all') row.className = 'total';
      const cells = [r.tab === 'all' ? 'All tabs' : `Tab ${r.tab}`, r.calls, r.sent, r.sentInOutage, r.statsThrottled, r.ok,
        after(r.firstOk), after(r.fullRate), r.late];
      for (const v of cells) row.insertCell().textContent = String(v);
    }
  }
  return [table, chart(f)];
}

/** Requests reaching the upstream per half second, each side, the
 * outage shaded. */
function chart(f) {
  const endMs = f.calls * f.everyMs + f.totalMs;
  const n = Math.ceil(endMs / BUCKET_MS);
  const bins = f.sides.map((side) => {
    const b = new Array(n).fill(0);
    for (const at of side.rows.flatMap((r) => r.starts)) {
      const i = Math.floor((at - f.t0) / BUCKET_MS);
      if (i >= 0 && i < n) b[i] += 1;
    }
    return b;
  });
  const max = Math.max(1, ...bins.flat());
  const figure = el('figure', 'tabs-chart');
  f.sides.forEach((side, s) => {
    const row = el('div', 'bars');
    row.setAttribute('role', 'img');
    row.setAttribute('aria-label', `${side.label}: requests reaching the upstream per half second: ${bins[s].join(', ')}`);
    bins[s].forEach((count, i) => {
      const bar = el('span', 'bar');
      const at = f.t0 + i * BUCKET_MS;
      if (at + BUCKET_MS > f.from && at < f.back) bar.classList.add('down');
      bar.style.setProperty('--h', `${(count / max) * 100}%`);
      bar.title = `${formatMs(i * BUCKET_MS)}: ${count}`;
      row.append(bar);
    });
    figure.append(el('p', 'bars-label', side.label), row);
  });
  figure.append(el('figcaption', null, `Requests reaching the upstream per ${BUCKET_MS} ms, all tabs of each side, over the ${formatMs(endMs)} of the run; the shaded bars are the outage.`));
  return figure;
}
