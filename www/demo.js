// The demo page: one scenario at a time through `policy.run`, its state as
// text and a countdown, Try now / Cancel, a timeline, and the fault server's
// own request counter beside the client's view.
import { RetryPolicy, outbox } from 'saferetry';
import { LOAD_OPTIONS, POLICY_OPTIONS, SCENARIOS, codeFor } from './scenarios.js';
import { renderTabs, severalTabs } from './several.js';
import { Timeline, formatMs, formatStatus } from './timeline.js';

const $ = (id) => document.getElementById(id);
// A policy per scenario, made at its first run: each scenario is an
// upstream of its own, and a policy's adaptive throttle counts what its
// upstream answered. On one policy for all, scenarios run one after
// another (503 twice then 200, then always 503: five requests within
// 1.5 s, one accepted) could have the next scenario's first attempt
// throttled, with nothing sent (docs/rules.md, adaptive throttling).
const policies = new Map();
function policyFor(id) {
  if (!policies.has(id)) policies.set(id, new RetryPolicy(POLICY_OPTIONS));
  return policies.get(id);
}
const timeline = new Timeline($('timeline'));
const TICK_MS = 100;
const COUNT_MS = 300;

const BADGE = {
  idle: 'Idle', requesting: 'Requesting', waiting: 'Waiting', succeeded: 'Succeeded',
  'try-later': 'Try later', failed: 'Failed', cancelled: 'Cancelled',
};
const WAITING = {
  backoff: 'The request failed in a way that is safe to repeat; backing off before',
  throttle: 'The server is throttling us; backing off before',
  'retry-after': 'The server asked us to wait (Retry-After) before',
  'rate-limit': 'Keeping to the rate limit before',
  queue: 'Waiting for a free slot before',
  poll: 'Waiting to poll again:',
};

let current = null; // the run on screen: { runId, t0, op, gen, state, attempts, outcome, timers }

// ---------- scenario picker ----------
for (const [i, s] of SCENARIOS.entries()) {
  const label = document.createElement('label');
  label.className = 'choice';
  const input = Object.assign(document.createElement('input'), { type: 'radio', name: 'scenario', value: s.id, checked: i === 0 });
  label.append(input, ` ${s.title}`);
  $('scenarios').append(label);
}
const selected = () => SCENARIOS.find((s) => s.id === new FormData($('picker')).get('scenario')) ?? SCENARIOS[0];

function describe(scenario, request) {
  $('about-server').textContent = scenario.server;
  $('about-expect').textContent = scenario.expect;
  $('about-code').textContent = scenario.code ?? (request ? codeFor(request, scenario.load) : '');
}
$('picker').addEventListener('change', () => { if (!current || current.outcome) describe(selected()); });
describe(selected());

// ---------- one run ----------
$('picker').addEventListener('submit', async (event) => {
  event.preventDefault();
  stop(current);
  const scenario = selected();
  const runId = `${scenario.id}-${crypto.randomUUID()}`;
  const run = { runId, t0: 0, op: null, gen: 0, state: null, attempts: 0, outcome: null, timers: [] };
  current = run;
  renderStatus(run);
  const request = await scenario.request(runId);
  if (run !== current) return; // Start pressed again meanwhile
  describe(scenario, request);
  run.t0 = Date.now();
  timeline.reset(run.t0);
  $('client-count').textContent = '0';
  $('server-count').textContent = '0';
  $('server-note').textContent = '';
  $('status').dataset.run = runId;
  clearResult();
  if (scenario.outbox) return sendThroughOutbox(run, request);
  $('tabs').hidden = !scenario.tabs;
  $('timeline-figure').hidden = Boolean(scenario.tabs);
  if (!scenario.tabs) $('tabs').replaceChildren(); // the previous run's tabs leave
  if (scenario.tabs) return runTabs(run, scenario.tabs);
  if (scenario.load) return runLoad(run, scenario.load, request);
  run.op = policyFor(scenario.id).run(request.url, request.init);
  run.op.subscribe((s) => onState(run, s));
  onState(run, run.op.getSnapshot());
  follow(run, run.op.result);
  resume(run);
});

$('try-now').addEventListener('click', () => {
  const run = current;
  if (!run) return;
  timeline.mark('Try now');
  run.gen += 1;
  run.outcome = null;
  clearResult();
  follow(run, run.op.retryNow());
  resume(run);
});

$('cancel').addEventListener('click', () => {
  if (!current) return;
  timeline.mark('Cancel');
  current.op.cancel();
});

// ---------- the load scenario: adaptive throttling ----------
// Two policies side by side, each against an upstream of its own that is
// down, then back: the default (throttling) and `throttle: false`. Each
// call is a `policy.fetch`; the page counts how each one ended, and the
// server counts what reached it.

async function runLoad(run, { calls, everyMs, downMs }, request) {
  const sides = [
    { name: 'throttling', policy: new RetryPolicy(LOAD_OPTIONS), url: request.url },
    { name: 'control', policy: new RetryPolicy({ ...LOAD_OPTIONS, throttle: false }), url: request.url.replace(run.runId, `${run.runId}-control`) },
  ];
  for (const side of sides) Object.assign(side, { ok: 0, throttled: 0, throttledAfter: 0, failed: 0, backAt: null, pending: [] });
  run.load = { calls, done: 0 };
  run.state = { state: 'requesting', attempt: 1, maxAttempts: LOAD_OPTIONS.maxAttempts };
  renderStatus(run);
  resume(run);
  const t0 = Date.now();
  for (let i = 0; i < calls && run === current; i++) {
    for (const side of sides) {
      side.pending.push(side.policy.fetch(side.url).then(
        async (response) => {
          await response.arrayBuffer();
          side.ok += 1;
          const at = Date.now() - t0;
          if (at >= downMs && side.backAt === null) side.backAt = at;
        },
        (error) => {
          if (error.reason === 'throttled') {
            side.throttled += 1;
            if (Date.now() - t0 >= downMs) side.throttledAfter += 1;
          } else side.failed += 1;
        },
      ));
    }
    run.load.done = i + 1;
    renderStatus(run);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  await Promise.all(sides.flatMap((side) => side.pending));
  if (run !== current) return;
  const counts = await Promise.all(sides.map((side) => fetch(`/count/${side.url.split('/')[3].split('?')[0]}`, { cache: 'no-store' }).then((r) => r.json())));
  sides.forEach((side, i) => { side.sent = counts[i].requests; });
  for (const stopTimer of run.timers.splice(0)) stopTimer();
  $('server-count').textContent = `${sides[0].sent} (without throttling: ${sides[1].sent})`;
  $('client-count').textContent = `${calls} calls each way`;
  run.outcome = { kind: 'load' };
  run.state = { state: 'succeeded' };
  run.load.text = `Done — ${calls} calls each way: the upstream received ${sides[0].sent} requests with throttling, ${sides[1].sent} without; ${sides[0].throttled} calls ended at once, throttled, with nothing sent.`;
  renderStatus(run);
  renderLoad(sides, { calls, downMs });
}

function renderLoad(sides, { calls, downMs }) {
  const table = document.createElement('table');
  table.innerHTML = `<caption>${calls} calls each, one every 100 ms; the upstream down for ${downMs / 1000} s</caption><thead><tr><th scope="col"></th>`
    + '<th scope="col">Requests the server got</th><th scope="col">Succeeded</th><th scope="col">Throttled (nothing sent)</th><th scope="col">… of them after the upstream came back</th><th scope="col">Other failures</th><th scope="col">First success after the upstream came back</th></tr></thead>';
  const body = table.createTBody();
  for (const side of sides) {
    const row = body.insertRow();
    const label = side.name === 'throttling' ? 'Throttling (the default)' : 'throttle: false';
    const back = side.backAt === null ? '—' : `+${formatMs(side.backAt - downMs)}`;
    for (const v of [label, side.sent, side.ok, side.throttled, side.throttledAfter, side.failed, back]) row.insertCell().textContent = String(v);
  }
  const result = $('result');
  result.replaceChildren(table);
  result.dataset.outcome = 'load';
  result.dataset.sent = String(sides[0].sent);
  result.dataset.sentControl = String(sides[1].sent);
  result.dataset.throttled = String(sides[0].throttled);
  result.dataset.throttledAfter = String(sides[0].throttledAfter);
  result.dataset.ok = String(sides[0].ok);
  result.dataset.okControl = String(sides[1].ok);
  result.dataset.back = String(sides[0].backAt ?? '');
}

// ---------- the several-tabs scenario: adaptive throttling shared by tabs ----------
// Three frames of this page, each a tab with a policy of its own on one
// tabBudget, beside three on another with `throttle: false` (www/several.js,
// www/tab.js); the page shows how their calls ended and what the server got.
async function runTabs(run, spec) {
  run.tabs = { text: `Opening ${spec.tabs * 2} tabs…` };
  $('server-count').textContent = '…'; // counted per tab, read at the end
  run.state = { state: 'requesting', attempt: 1, maxAttempts: LOAD_OPTIONS.maxAttempts };
  renderStatus(run);
  const onProgress = (sides, t) => {
    if (run !== current || t === null) return;
    const [on, off] = sides.map((side) => side.tabs.reduce((n, tab) => ({
      calls: n.calls + (tab.progress?.calls ?? 0), throttled: n.throttled + (tab.progress?.throttled ?? 0),
    }), { calls: 0, throttled: 0 }));
    const at = Math.max(0, t) - spec.upMs;
    const phase = at < 0 ? 'upstream up' : at < spec.downMs ? 'upstream down' : 'upstream back';
    run.tabs.text = `${formatMs(Math.max(0, t))} in, ${phase} — with throttling: ${on.calls} calls, ${on.throttled} throttled; without: ${off.calls} calls.`;
    $('client-count').textContent = `${on.calls} calls each way`;
    renderStatus(run);
  };
  let f;
  try {
    f = await severalTabs({ runId: run.runId, spec, totalMs: LOAD_OPTIONS.totalMs, host: $('tabs'), alive: () => run === current, onProgress });
  } catch (err) {
    if (run !== current) return;
    run.tabs.text = `The tabs did not run: ${err.message}.`;
    run.state = { state: 'failed' };
    renderStatus(run);
    return;
  }
  if (!f) return;
  const [on, off] = f.sides.map((side) => side.total);
  const when = (ms) => (ms === null ? 'not within the run' : `+${formatMs(ms)}`);
  $('client-count').textContent = `${on.calls} calls each way`;
  $('server-count').textContent = `${on.sent} (without throttling: ${off.sent})`;
  run.outcome = { kind: 'tabs' };
  run.state = { state: 'succeeded' };
  run.tabs.text = `Done — ${spec.tabs} tabs each way, ${spec.calls} calls per tab: the upstream got ${on.sent} requests from the throttling tabs (${on.sentInOutage} while it was down), ${off.sent} without throttling (${off.sentInOutage} while down); ${on.statsThrottled} calls ended throttled with nothing sent. After the upstream came back: the first 200 at ${when(on.firstOk)}, every tab back to full rate at ${when(on.fullRate)}.`;
  renderStatus(run);
  const result = $('result');
  result.replaceChildren(...renderTabs(f));
  result.dataset.outcome = 'tabs';
  result.dataset.figures = JSON.stringify({
    upMs: f.upMs, downMs: f.downMs, totalMs: f.totalMs,
    sides: f.sides.map(({ key, rows, total }) => ({ key, total, rows: rows.map(({ starts, ...row }) => row) })),
  });
}

// ---------- the outbox scenario ----------
// The outbox (IndexedDB) of the page, opened at its first use: it also
// sends what an earlier visit left in it.
let demoOutbox = null;
function pageOutbox() {
  demoOutbox ??= outbox(policyFor('outbox'), 'demo').then((box) => {
    box.addEventListener('sent', (e) => {
      const note = $('outbox-note');
      note.dataset.outbox = 'sent';
      note.textContent = `Sent by the outbox at ${clock(Date.now())} — HTTP ${e.detail.response?.status}, with the same key ${e.detail.entry.key}.`;
      if (current) pollCount(current);
    });
    for (const type of ['expired', 'failed']) {
      box.addEventListener(type, (e) => {
        $('outbox-note').dataset.outbox = type;
        $('outbox-note').textContent = `The outbox's write ${e.detail.entry.key} ${type === 'expired' ? 'expired unsent' : 'was refused'}.`;
      });
    }
    return box;
  });
  return demoOutbox;
}

function setNote(state, text) {
  const note = $('outbox-note');
  if (state) note.dataset.outbox = state;
  else delete note.dataset.outbox;
  note.textContent = text;
}

async function sendThroughOutbox(run, request) {
  setNote(null, '');
  run.state = { state: 'requesting', attempt: 1, maxAttempts: POLICY_OPTIONS.maxAttempts };
  renderStatus(run);
  resume(run);
  const box = await pageOutbox();
  const outcome = await box.send(request.url, request.init);
  if (run !== current) return;
  run.attempts = outcome.report.attempts.length;
  $('client-count').textContent = String(run.attempts);
  run.state = { state: outcome.kind, message: outcome.message, retryAt: outcome.retryAt ?? null, kept: outcome.kept };
  if (outcome.kept) setNote('kept', `Kept in the outbox with its idempotency key ${outcome.id}: it will be sent at ${clock(outcome.retryAt)}, by this page or the next one to open.`);
  else if (outcome.notKept && outcome.kind !== 'succeeded') setNote('not-kept', `Not kept in the outbox (${outcome.notKept}).`);
  follow(run, Promise.resolve(outcome));
}

function onState(run, s) {
  if (run !== current || s === run.state) return;
  run.state = s;
  if (s.state === 'requesting') $('client-count').textContent = String((run.attempts += 1));
  timeline.state(s);
  renderStatus(run);
}

async function follow(run, promise) {
  const gen = run.gen;
  const outcome = await promise;
  if (run !== current || gen !== run.gen) return; // superseded by Try now or another run
  run.outcome = outcome;
  timeline.report(outcome.report);
  for (const stopTimer of run.timers.splice(0)) stopTimer();
  await pollCount(run); // lets a poll already in flight finish,
  await pollCount(run); // then counts once more after the end
  if (run !== current || gen !== run.gen) return;
  renderStatus(run);
  renderResult(outcome);
  timeline.render(false);
  if (outcome.retryAt != null) { // keep counting down to "try again at", then stop
    const tick = setInterval(() => {
      renderCountdown(run);
      if (Date.now() > outcome.retryAt) clearInterval(tick);
    }, 1000);
    run.timers.push(() => clearInterval(tick));
  }
}

/** Starts the countdown/timeline ticker and the server-counter poll. */
function resume(run) {
  for (const stopTimer of run.timers.splice(0)) stopTimer();
  const tick = setInterval(() => { renderCountdown(run); timeline.render(true); }, TICK_MS);
  const poll = setInterval(() => pollCount(run), COUNT_MS);
  run.timers.push(() => clearInterval(tick), () => clearInterval(poll));
  renderCountdown(run);
  timeline.render(true);
}

function stop(run) {
  if (!run) return;
  for (const stopTimer of run.timers.splice(0)) stopTimer();
  if (!run.outcome) run.op?.cancel();
  current = null;
}

let counting = null; // the counter request in flight, if any
function pollCount(run) {
  counting ??= (async () => {
    try {
      const res = await fetch(`/count/${run.runId}`, { cache: 'no-store', signal: AbortSignal.timeout(2000) });
      const count = await res.json();
      if (run !== current) return;
      $('server-count').textContent = String(count.requests);
      $('server-note').textContent = '';
      timeline.server(count.starts);
    } catch {
      if (run === current) $('server-note').textContent = 'The server’s counter is unreachable right now (offline?).';
    }
  })().finally(() => { counting = null; });
  return counting;
}

// ---------- rendering ----------
const pad = (n) => String(n).padStart(2, '0');
const clock = (ms) => { const d = new Date(ms); return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`; };
function inSeconds(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return s < 180 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function statusText(run) {
  if (run.tabs) return run.tabs.text;
  if (run.load) return run.load.text ?? `Calling the upstream — ${run.load.done} of ${run.load.calls} calls each way.`;
  const s = run.state ?? { state: 'idle' };
  const o = run.outcome;
  switch (s.state) {
    case 'requesting':
      return `Sending the request — attempt ${s.attempt} of ${s.maxAttempts}.`;
    case 'waiting':
      return s.why === 'offline'
        ? 'Offline — waiting for the network. No attempt is spent while offline.'
        : `${WAITING[s.why] ?? 'Waiting before'} attempt ${s.attempt}.`;
    case 'succeeded': {
      const n = o?.report.attempts.length;
      return o ? `Succeeded — HTTP ${o.response?.status} after ${n} attempt${n === 1 ? '' : 's'}.` : 'Succeeded.';
    }
    case 'try-later':
      return `Try later — ${s.message}`;
    case 'failed': {
      const res = o?.response;
      const status = !res ? '' : res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)
        ? ' at a redirect, not followed' : ` (HTTP ${res.status})`;
      return `Failed${status} — ${s.message}`;
    }
    case 'cancelled':
      return 'Cancelled — no further request will be sent.';
    default:
      return run === current ? 'Starting…' : 'Pick a scenario and press Start.';
  }
}

function renderStatus(run) {
  const name = run.state?.state ?? 'idle';
  $('status').dataset.state = name;
  $('state-badge').textContent = BADGE[name] ?? name;
  $('state-text').textContent = statusText(run);
  // (An outbox run has no operation of its own to retry or cancel: the outbox re-sends.)
  $('try-now').disabled = !run.op || !(name === 'waiting' || name === 'try-later');
  $('cancel').disabled = !run.op || !(name === 'requesting' || name === 'waiting');
  renderCountdown(run);
}

function renderCountdown(run) {
  const s = run.state;
  let text = '';
  if (s?.state === 'waiting' && Number.isFinite(s.until)) {
    const left = Math.max(0, s.until - Date.now());
    text = s.why === 'offline' ? `Gives up at ${clock(s.until)} — in ${inSeconds(left)}` : `Retrying in ${(left / 1000).toFixed(1)} s`;
  } else if (s?.state === 'try-later' && s.kept) {
    const left = s.retryAt - Date.now();
    text = left > 0 ? `The outbox sends it at ${clock(s.retryAt)} — in ${inSeconds(left)}` : '';
  } else if (s?.state === 'try-later') {
    const left = s.retryAt - Date.now();
    text = s.retryAt == null ? 'Try again later.'
      : left > 0 ? `Try again at ${clock(s.retryAt)} — in ${inSeconds(left)}` : 'You can try again now.';
  }
  if ($('countdown').textContent !== text) $('countdown').textContent = text;
}

function clearResult() {
  delete $('result').dataset.outcome;
  $('result').replaceChildren(Object.assign(document.createElement('p'), { className: 'muted', textContent: 'Running…' }));
}

function renderResult(outcome) {
  const { report } = outcome;
  const dl = document.createElement('dl');
  dl.className = 'facts';
  const fact = (k, v) => dl.append(Object.assign(document.createElement('dt'), { textContent: k }),
    Object.assign(document.createElement('dd'), { textContent: v }));
  fact('Outcome', outcome.kind);
  fact('Reason', outcome.reason);
  fact('Message', outcome.message);
  if (outcome.retryAt) fact('Retry at', `${clock(outcome.retryAt)} (${new Date(outcome.retryAt).toISOString()})`);
  if (outcome.notBefore) fact('Server’s wait until', clock(outcome.notBefore));
  fact('Elapsed', formatMs(report.elapsedMs));

  const table = document.createElement('table');
  table.innerHTML = '<caption>Attempts (from the report)</caption><thead><tr><th scope="col">#</th><th scope="col">Start</th>'
    + '<th scope="col">Duration</th><th scope="col">Result</th><th scope="col">Then waited</th></tr></thead>';
  const body = table.createTBody();
  report.attempts.forEach((a, i) => {
    const result = a.status != null ? formatStatus(a.status) : a.error ? `${a.error.stage} (${a.error.code})` : '—';
    const wait = a.plannedWaitMs != null ? `${formatMs(a.plannedWaitMs)} (${a.waitKind})` : '—';
    const row = body.insertRow();
    for (const v of [i + 1, formatMs(a.startMs), formatMs(a.durationMs), result, wait]) row.insertCell().textContent = String(v);
  });

  if (!report.attempts.length) {
    table.replaceChildren(Object.assign(document.createElement('caption'), { textContent: 'No request was sent.' }));
  }

  const details = document.createElement('details');
  details.append(Object.assign(document.createElement('summary'), { textContent: 'The full report (JSON)' }),
    Object.assign(document.createElement('pre'), { className: 'code', textContent: JSON.stringify(report, null, 2) }));
  $('result').replaceChildren(dl, table, details);
  $('result').dataset.outcome = outcome.kind;
}

// ---------- the browser's network state ----------
function renderNetwork(event) {
  const online = navigator.onLine;
  $('net-state').textContent = online ? 'online' : 'offline';
  $('net-state').parentElement.dataset.online = String(online);
  if (!event || !current) return;
  if (!current.outcome) timeline.mark(online ? 'Back online' : 'Went offline');
  if (online) pollCount(current).then(() => timeline.render(!current?.outcome));
}
addEventListener('online', renderNetwork);
addEventListener('offline', renderNetwork);
renderNetwork();
