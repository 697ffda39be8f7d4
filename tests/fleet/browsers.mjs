// fleet-browsers: three tabs of one origin share one retry quota and one
// start rate through `tabBudget` (Web Locks + BroadcastChannel), in
// Chromium, Firefox and WebKit; the leader's tab closes (or goes silent)
// and another takes over within the documented bound, keeping the level.
//
//   node tests/fleet/browsers.mjs [chromium] [firefox] [webkit]
//
// The pages come from a small static server started here (no
// Cache-Control: no-store, so the back/forward cache may keep them); the
// requests go to the fault server (another 127.0.0.1 origin, CORS), which
// counts what it received. Prints one figure line per check and a final
// "N passed, M failed". Every wait is bounded; every process is killed.
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startFaultServer } from '../../www/server/fault-server.mjs';
import { launch, BROWSERS } from '../browsers/webdriver.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const PKG = path.join(REPO, 'js/src');
const RUN_BUDGET_MS = Number(process.env.FLEET_BROWSERS_BUDGET_MS) || 360_000; // all browsers, a hang guard: 143 s alone, 210-250 s at a load average of 20
const t0 = Date.now();
const note = (line) => process.stderr.write(`[fleet ${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);

// The documented figures (docs/fleet-budgets.md "Browser tabs"; js/src/tabs.js).
const STALE_MS = 2500; // tabBudget's default staleMs
const FROZEN_BOUND_MS = STALE_MS + 2500; // a silent leader is replaced within staleMs + 2.5 s (probe 500 ms, two timer checks of up to 1 s in a hidden tab)
const CLOSED_BOUND_MS = 1000; // a closed leader's lock goes to the next tab at once
const K = 3; // tabs
// Checks (a), (c) run in tabs of one window (all but one hidden, as a
// user's are); (b), (d) and bfcache in windows of their own: Firefox slows a
// hidden tab's requests so much that its tabs could not even ask for 3 R.
const TAB_TYPE = 'tab';
const CAPACITY = 50, RETRY_COST = 5; // the quota of checks (a), (d)
const RATE = 100, BURST = 1; // the start rate of check (b)
const CLIENT_BURST = 32 + 4; // a leased client's slots + borrow (src/policy/budget/lease/mod.rs)
const RATE_BOUND = RATE + (BURST - 1) + K * CLIENT_BURST;

// ---------------- the pages' server ----------------
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>saferetry tab</title>
<script>
  window.__log = []; window.__muted = false; window.__shows = [];
  addEventListener('pageshow', (e) => window.__shows.push({ persisted: e.persisted, at: Date.now() }));
  addEventListener('error', (e) => window.__log.push('page error: ' + (e.error?.stack ?? e.message)));
  addEventListener('unhandledrejection', (e) => window.__log.push('unhandled: ' + (e.reason?.stack ?? e.reason)));
  // ?nolocks: a browser without Web Locks (before the package is imported).
  if (new URLSearchParams(location.search).has('nolocks')) delete Navigator.prototype.locks;
  // window.__muted stops this tab's channel messages both ways: to the other
  // tabs it is then a frozen tab that still holds the lock.
  // While localStorage "trace" is set (check (e)), every tab appends what
  // it sends and hears of the release (and its page events) to it: the
  // closing tab's part survives it.
  // Each page writes a key of its own (tabs in other processes would race
  // on one).
  const me = 'trace:' + performance.timeOrigin.toFixed(0).slice(-5) + ':' + Math.random().toString(36).slice(2, 6);
  const trace = (what) => {
    if (localStorage.getItem('trace') === null) return;
    const line = (performance.timeOrigin + performance.now()).toFixed(0) + ' ' + me.slice(6) + ' ' + what + '\\n';
    localStorage.setItem(me, (localStorage.getItem(me) ?? '') + line);
  };
  const brief = (m) => m?.t === 'req' ? 'req ' + m.request?.client + ':' + m.request?.seq + ' returned ' + m.request?.returnedTotal
    : m?.t + ' term ' + m?.term + ' level ' + m?.state?.level + (m?.grant ? ' grant ' + m.grant.client + ':' + m.grant.seq : '');
  for (const type of ['beforeunload', 'pagehide', 'pageshow']) addEventListener(type, () => trace(type));
  const request = window.LockManager?.prototype.request;
  if (request) {
    LockManager.prototype.request = function (name, options, callback) {
      return request.call(this, name, options, async (lock) => {
        trace('lock granted');
        try { return await callback(lock); } finally { trace('lock released'); }
      });
    };
  }
  const Channel = window.BroadcastChannel;
  if (Channel) {
    window.BroadcastChannel = class extends Channel {
      postMessage(m) { if (m?.t !== 'hb') trace('sends ' + brief(m)); if (!window.__muted) super.postMessage(m); }
      set onmessage(f) { super.onmessage = f && ((e) => { if (e.data?.t !== 'hb') trace('hears ' + brief(e.data)); if (!window.__muted) f(e); }); }
      get onmessage() { return super.onmessage; }
    };
  }
</script>
<script type="importmap">{ "imports": { "saferetry": "/pkg/web.js" } }</script>
<script type="module" src="/tabs/tab-page.mjs"></script>
`;
// ?bundle: the page bundled by esbuild with the README's recipe of before the
// authority had a module of its own: only the page's module (saferetry_web_bg.wasm) copied beside
// the bundle, so no tab can load the authority (check (f)).
const IMPORTS = '<script type="importmap">{ "imports": { "saferetry": "/pkg/web.js" } }</script>\n<script type="module" src="/tabs/tab-page.mjs"></script>';
const BUNDLED = PAGE.replace(IMPORTS, '<script type="module" src="/bundle/tab-page.js"></script>');
if (BUNDLED === PAGE) throw new Error('the bundled page lost its script');

/** The tab page bundled (esbuild, browser conditions), with the package's
 * wasm beside it and not the authority's. */
function bundlePage() {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bundle-'));
  execFileSync(path.join(REPO, 'node_modules/.bin/esbuild'), [path.join(HERE, 'tab-page.mjs'), '--bundle', '--format=esm',
    '--platform=browser', `--alias:saferetry=${path.join(PKG, 'web.js')}`, `--outdir=${dir}`, '--log-level=warning']);
  copyFileSync(path.join(PKG, 'saferetry_web_bg.wasm'), path.join(dir, 'saferetry_web_bg.wasm'));
  return dir;
}
const AWAY = '<!doctype html><meta charset="utf-8"><title>away</title><p>away</p>';
// The control: a page with nothing that could keep it out of the cache.
const PLAIN = `<!doctype html><meta charset="utf-8"><title>plain</title>
<script>window.__shows = []; addEventListener('pageshow', (e) => window.__shows.push({ persisted: e.persisted }));</script><p>plain</p>`;
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };

function startPages(bundle) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const p = url.pathname;
    const send = (status, type, body) => { res.writeHead(status, { 'content-type': type }); res.end(body); };
    if (p === '/tabs/page.html') return send(200, 'text/html; charset=utf-8', url.searchParams.has('bundle') ? BUNDLED : PAGE);
    const b = /^\/bundle\/([a-z_-]+\.(js|wasm))$/.exec(p);
    if (b && existsSync(path.join(bundle, b[1]))) return send(200, TYPES[path.extname(b[1])], readFileSync(path.join(bundle, b[1])));
    if (p === '/tabs/plain.html') return send(200, 'text/html; charset=utf-8', PLAIN);
    if (p === '/tabs/away.html') return send(200, 'text/html; charset=utf-8', AWAY);
    if (p === '/tabs/tab-page.mjs') return send(200, TYPES['.mjs'], readFileSync(path.join(HERE, 'tab-page.mjs')));
    const m = /^\/pkg\/((?:outbox-stores\/)?[a-z_-]+\.(js|wasm))$/.exec(p); // the outbox's glue has hyphens and a folder
    if (m && existsSync(path.join(PKG, m[1]))) return send(200, TYPES[path.extname(m[1])], readFileSync(path.join(PKG, m[1])));
    send(404, 'text/plain', 'not found');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

/** Every page's trace lines (check (e)), in time order. */
const READ_TRACE = `return Object.keys(localStorage).filter((k) => k.startsWith('trace:'))
  .flatMap((k) => localStorage.getItem(k).split('\\n')).filter(Boolean).sort().join('\\n')`;

// ---------------- results ----------------
let passed = 0, failed = 0;
function check(ok, line) {
  if (ok) passed += 1; else failed += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
  return ok;
}

async function until(what, ms, fn, everyMs = 100) {
  const end = Date.now() + ms;
  for (;;) { // bounded by `end`
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) return null;
    await sleep(everyMs);
  }
}

/** Largest number of starts in any window [t, t + 1000). */
function maxPerSecond(starts) {
  const s = [...starts].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[j] < s[i] - 999) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

// ---------------- one browser ----------------
class Tabs {
  constructor(browser, session, pages, fault) {
    Object.assign(this, { browser, session: session, pages, fault, current: null });
  }
  async switchTo(handle) {
    if (this.current !== handle) await this.session.cmd('POST', '/window', { handle });
    this.current = handle;
  }
  async call(handle, fn, ...args) {
    await this.switchTo(handle);
    return this.session.executeScript(`return window.__tab.${fn}(...arguments)`, args, 15_000);
  }
  async js(handle, script, args = []) {
    await this.switchTo(handle);
    return this.session.executeScript(script, args, 15_000);
  }
  async open(n) {
    const handles = [await this.session.cmd('GET', '/window')];
    this.current = handles[0];
    while (handles.length < n) handles.push((await this.session.cmd('POST', '/window/new', { type: TAB_TYPE })).handle);
    return handles;
  }
  async load(handle, query = '') {
    await this.switchTo(handle);
    await this.session.navigate(`${this.pages}/tabs/page.html${query}`, 20_000);
    const ok = await until('ready', 10_000, () => this.session.executeScript('return window.__ready === true || window.__log.join("\\n")'));
    if (ok !== true) throw new Error(`tab page not ready: ${ok}`);
  }
  async logs(handle) {
    return this.js(handle, 'return window.__log.splice(0)');
  }
  /** Runs `spec` in every tab at once; resolves with each tab's result. */
  async runAll(handles, spec, timeoutMs) {
    const id = `r${Math.random().toString(36).slice(2)}`;
    for (const h of handles) await this.call(h, 'start', id, spec);
    const results = [];
    for (const h of handles) {
      const r = await until('run', timeoutMs, () => this.call(h, 'result', id), 200);
      if (!r) throw new Error(`a tab did not finish its run within ${timeoutMs} ms`);
      results.push(r);
    }
    return results;
  }
  async count(runId) {
    const res = await fetch(`${this.fault.url}/count/${runId}`, { signal: AbortSignal.timeout(5000) });
    return res.json();
  }
  async setup(handles, kind, name, options) {
    const out = [];
    for (const h of handles) out.push(await this.call(h, 'setup', { name, kind, options }));
    return out;
  }
  async allLeased(handles, ms = 5000) {
    let last;
    const ok = await until('leased', ms, async () => {
      const modes = [];
      last = [];
      for (const h of handles) last.push(await this.call(h, 'summary'));
      for (const s of last) modes.push(s.stats.shared?.mode);
      return modes.every((m) => m === 'leased') && modes;
    }, 100);
    if (!ok) note(`not all leased: ${JSON.stringify(last.map((s) => [s.status, s.stats.shared]))}`);
    return ok;
  }
  async leaderOf(handles) {
    for (const h of handles) if ((await this.call(h, 'summary')).status?.leader) return h;
    return null;
  }
}

async function quota(t, browser, handles, kind, label, more = {}) {
  const runId = `quota-${kind}-${browser}-${Date.now()}`;
  // Without adaptive throttling (docs/rules.md "The rules"): it would stop first
  // attempts to the always-failing path, and this case counts the retries
  // a quota allows.
  const options = { maxAttempts: 4, baseMs: 1, capMs: 4, totalMs: 8000, quota: { capacity: CAPACITY, retryCost: RETRY_COST }, throttle: false, ...more };
  await t.setup(handles, kind, `quota-${browser}`, options);
  const ops = 10;
  const results = await t.runAll(handles, { url: `${t.fault.url}/s/seq/${runId}?steps=503`, ops }, 20_000);
  const c = await t.count(runId);
  const retries = c.requests - ops * handles.length;
  const perTab = results.map((r) => r.stats.retries);
  note(`${browser} ${label}: requests ${c.requests}, retries per tab ${perTab.join('+')}; reasons ${results.map((r) => JSON.stringify(r.reasons)).join(' ')}`);
  return { retries, perTab, results };
}

async function rate(t, browser, handles, kind) {
  const runId = `rate-${kind}-${browser}-${Date.now()}`;
  const options = { maxAttempts: 1, totalMs: 3000, quota: false, rate: { requests: RATE, perMs: 1000, burst: BURST } };
  await t.setup(handles, kind, `rate-${browser}`, options);
  const results = await t.runAll(handles, { url: `${t.fault.url}/s/seq/${runId}?steps=200`, workers: 6, forMs: 2500 }, 20_000);
  const c = await t.count(runId);
  const max = maxPerSecond(c.starts);
  note(`${browser} rate ${kind}: ${c.requests} starts in ${Math.max(...results.map((r) => r.ms))} ms, max ${max} in 1 s; reasons ${results.map((r) => JSON.stringify(r.reasons)).join(' ')}; visibility ${results.map((r) => r.visibility).join(',')}`);
  return { max, total: c.requests, results };
}

async function runBrowser(browser, pages, fault, deadline) {
  const h = await launch(browser);
  note(`${browser} ${h.browserVersion}: launched in ${h.timings.driverReadyMs + h.timings.sessionMs} ms`);
  const t = new Tabs(browser, h.session, pages, fault);
  const B = browser.padEnd(8);
  try {
    await h.session.setTimeouts({ script: 15_000, pageLoad: 20_000 });
    let handles = await t.open(K);

    // (a) one quota shared by three tabs, against per-tab quotas.
    for (const x of handles) await t.load(x);
    const shared = await quota(t, browser, handles, 'tabs', 'quota shared');
    const quotaBound = CAPACITY / RETRY_COST;
    const leaderBefore = await t.leaderOf(handles);
    const before = await t.call(leaderBefore, 'summary');
    const held = [];
    for (const x of handles) held.push((await t.call(x, 'summary')).stats.shared.tokensHeld);

    // (c) the leader's tab closes: another takes over, keeping the level.
    const rest = handles.filter((x) => x !== leaderBefore);
    const levelBefore = before.status.quotaLevel;
    await t.switchTo(leaderBefore);
    const tClose = Date.now();
    await h.session.cmd('DELETE', '/window');
    t.current = null;
    const rt0 = [];
    for (const x of rest) rt0.push((await t.call(x, 'summary')).stats.shared.roundTrips);
    const newLeader = await until('leader', CLOSED_BOUND_MS + 4000, async () => {
      for (const x of rest) {
        const s = await t.call(x, 'summary');
        if (s.status.leader) return { handle: x, s };
      }
      return null;
    }, 50);
    const since = newLeader?.s.status.leaderSince;
    const handoverMs = typeof since === 'number' && since >= tClose ? since - tClose : Infinity;
    // The remaining tabs get answers again: leased, with more round trips.
    const probeRun = `after-close-${browser}-${Date.now()}`;
    let afterClose, afterCloseOps = 0;
    const answered = await until('answers', 6000, async () => {
      await t.runAll(rest, { url: `${fault.url}/s/seq/${probeRun}?steps=503`, ops: 2 }, 10_000);
      afterCloseOps += 2 * rest.length;
      afterClose = [];
      for (const x of rest) afterClose.push((await t.call(x, 'summary')).stats.shared);
      return afterClose.every((s, i) => s.mode === 'leased' && s.roundTrips > rt0[i]) && afterClose;
    }, 100);
    if (!answered) note(`${browser} after close: round trips before ${rt0.join(', ')}; now ${JSON.stringify(afterClose)}`);
    // The level the new leader started from, and the retries the remaining
    // tabs made since (a fresh bucket would give them some: all are 503s).
    const levelAfter = newLeader?.s.status.quotaLevel;
    const probe = await t.count(probeRun);
    const retriesAfter = probe.requests - afterCloseOps;
    const heldByRest = held.filter((_, i) => handles[i] !== leaderBefore).reduce((a, b) => a + b, 0);

    // (c') a leader that goes silent but keeps its lock: stolen within the bound.
    let stealMs = Infinity, exLeaderFollows = false, levelStolen;
    if (newLeader) {
      const silent = newLeader.handle;
      const other = rest.find((x) => x !== silent);
      const termBefore = newLeader.s.status.term;
      await t.call(silent, 'mute', true);
      const tMute = Date.now();
      const stolen = await until('steal', FROZEN_BOUND_MS + 4000, async () => {
        const s = await t.call(other, 'summary');
        return s.status.leader && s.status.term > termBefore && s;
      }, 100);
      if (stolen) {
        stealMs = stolen.status.leaderSince - tMute;
        levelStolen = stolen.status.quotaLevel;
      }
      await t.call(silent, 'mute', false);
      exLeaderFollows = !!await until('steps down', 3000, async () => !(await t.call(silent, 'summary')).status.leader);
    }

    // (c'') Chromium only: a leader frozen by the browser
    // (Page.setWebLifecycleState through chromedriver's CDP endpoint). That
    // freeze stops its timers but still delivers its channel messages, so
    // it may go on answering (then no steal is due); either way the
    // follower must be served again within the bound.
    let frozen = null;
    if (browser === 'chromium' && newLeader) {
      const [a, b] = rest;
      const leaderNow = (await t.call(a, 'summary')).status.leader ? a : b;
      const follower = leaderNow === a ? b : a;
      const before = await t.call(follower, 'summary');
      await t.switchTo(leaderNow);
      const cdp = (state) => h.session.cmd('POST', '/goog/cdp/execute', { cmd: 'Page.setWebLifecycleState', params: { state } });
      await cdp('frozen');
      const tFreeze = Date.now();
      const run = `frozen-${browser}-${Date.now()}`;
      let s;
      for (let i = 0; i < 200 && Date.now() - tFreeze < FROZEN_BOUND_MS + 1000; i++) { // bounded
        await t.runAll([follower], { url: `${fault.url}/s/seq/${run}?steps=503`, ops: 1 }, 5000);
        s = await t.call(follower, 'summary');
        if (s.stats.shared.roundTrips > before.stats.shared.roundTrips + 2 && s.stats.shared.mode === 'leased') break;
        await sleep(200);
      }
      const servedMs = Date.now() - tFreeze;
      await t.switchTo(leaderNow);
      await cdp('active');
      const one = !!await until('one leader', 3000, async () =>
        (await t.call(leaderNow, 'summary')).status.leader !== (await t.call(follower, 'summary')).status.leader);
      frozen = { ms: servedMs, stole: s.status.leader, roundTrips: [before.stats.shared.roundTrips, s.stats.shared.roundTrips], mode: s.stats.shared.mode, one };
    }
    if (frozen) {
      check(frozen.ms <= FROZEN_BOUND_MS && frozen.mode === 'leased' && frozen.one,
        `${B} (c) leader frozen (CDP): the follower leased again after ${frozen.ms} ms (bound ${FROZEN_BOUND_MS}), round trips ${frozen.roundTrips.join(' -> ')}, ${frozen.stole ? 'by stealing the lock' : 'answered by the frozen leader (its channel still delivers)'}; one leader after the thaw: ${frozen.one}`);
    }
    note(`${browser} handover checks done`);
    const own = await (async () => {
      handles = [...rest, (await h.session.cmd('POST', '/window/new', { type: TAB_TYPE })).handle];
      for (const x of handles) await t.load(x);
      note(`${browser} pages loaded`);
      return quota(t, browser, handles, 'own', 'quota per tab');
    })();
    check(shared.retries <= quotaBound && own.retries > quotaBound,
      `${B} (a) quota: retries across ${K} tabs shared ${shared.retries} (${shared.perTab.join('+')}) <= ${quotaBound} = capacity ${CAPACITY} / retryCost ${RETRY_COST}; per-tab budgets ${own.retries} (${own.perTab.join('+')})`);
    check(handoverMs <= CLOSED_BOUND_MS && answered,
      `${B} (c) leader tab closed: new leader after ${handoverMs} ms (bound ${CLOSED_BOUND_MS}); the other tabs leased again with more round trips: ${answered ? answered.map((s) => `${s.mode}/${s.roundTrips}`).join(', ') : 'NO'}`);
    check(typeof levelAfter === 'number' && levelAfter <= levelBefore + heldByRest && retriesAfter <= heldByRest / RETRY_COST,
      `${B} (c) level kept: authority ${levelBefore} before close, ${levelAfter} at the new leader (the others held ${heldByRest}; a fresh bucket is ${CAPACITY}); retries after the close ${retriesAfter}`);
    check(stealMs <= FROZEN_BOUND_MS && exLeaderFollows && typeof levelStolen === 'number' && levelStolen < CAPACITY,
      `${B} (c) silent leader: lock stolen after ${stealMs} ms (bound ${FROZEN_BOUND_MS}), level ${levelStolen}, ex-leader follows: ${exLeaderFollows}`);

    // (b) one start rate shared by three tabs, against per-tab rates.
    const windows = [];
    while (windows.length < K) windows.push((await h.session.cmd('POST', '/window/new', { type: 'window' })).handle);
    for (const x of handles) { await t.switchTo(x); await h.session.cmd('DELETE', '/window'); t.current = null; }
    handles = windows;
    // The per-tab control must show more than the bound; when a loaded
    // machine cannot start that many (the control proves nothing then), the
    // pair is measured once more. The shared figure kept is
    // the worst of the rounds, and it is always held to the bound. A
    // machine that cannot exceed the bound even without sharing (measured:
    // Firefox under two busy loops, 53-134 starts in 1 s across three
    // per-tab budgets) cannot show that sharing is what kept it there: the
    // line says so, and only the bound is asserted (a slow machine must not
    // fail a test).
    let rs, ro;
    for (let round = 0; round < 2 && !(ro?.max > RATE_BOUND); round++) {
      if (round) note(`${B} (b) the per-tab control reached only ${ro.max} starts in 1 s (bound ${RATE_BOUND}): measuring the pair again`);
      for (const x of handles) await t.load(x);
      const r = await rate(t, browser, handles, 'tabs');
      if (!rs || r.max > rs.max) rs = r;
      for (const x of handles) await t.load(x);
      ro = await rate(t, browser, handles, 'own');
    }
    const controlled = ro.max > RATE_BOUND;
    check(rs.max <= RATE_BOUND,
      `${B} (b) rate ${RATE}/s: max starts in 1 s across ${K} tabs shared ${rs.max} (of ${rs.total}) <= ${RATE_BOUND} = R + (B-1) + K x ${CLIENT_BURST}; per-tab rates ${ro.max}${controlled ? '' : ' (not above the bound: this machine could not start that many even without sharing; the comparison is not asserted)'}`);

    // (d) without Web Locks: a budget of the tab alone, and stats() says so.
    for (const x of handles) await t.load(x, x === handles[2] ? '?nolocks' : '');
    const setups = await t.setup(handles, 'tabs', `scope-${browser}`, { maxAttempts: 2, quota: { capacity: 100 } });
    await t.runAll(handles, { url: `${fault.url}/s/seq/scope-${browser}-${Date.now()}?steps=200`, ops: 2 }, 10_000);
    const leased = await t.allLeased(handles);
    const scopes = [];
    for (const x of handles) scopes.push((await t.call(x, 'summary')).stats.shared?.scope);
    check(scopes.join() === 'origin,origin,tab' && !setups[2].locks && !!leased,
      `${B} (d) scopes with Web Locks, with, without: ${scopes.join(', ')}; modes ${leased ? leased.join(', ') : 'not all leased'}`);

    // bfcache: leave a page whose tab leads, come back. The control is a
    // plain page: where even that is not restored, the engine keeps no
    // back/forward cache here, and nothing can be said of ours.
    const leader = await t.leaderOf(handles.slice(0, 2));
    const other = handles.find((x) => x !== leader && x !== handles[2]);
    const roundTrip = async (handle) => {
      await t.switchTo(handle);
      await sleep(300); // a page left at once after loading may not be cached
      await h.session.navigate(`${pages}/tabs/away.html`, 20_000);
      const during = await until('takeover', 3000, async () => (await t.call(other, 'summary')).status.leader, 50);
      await t.switchTo(handle);
      await h.session.cmd('POST', '/back', {}, 20_000);
      const back = await until('back', 10_000, () => h.session.executeScript(
        'return window.__shows?.length ? { persisted: window.__shows.at(-1).persisted, nrr: performance.getEntriesByType("navigation")[0]?.notRestoredReasons ?? null } : null'));
      return { persisted: back?.persisted === true, nrr: back?.nrr ? JSON.stringify(back.nrr).slice(0, 300) : 'n/a', during: !!during };
    };
    const ours = await roundTrip(leader);
    const rejoined = ours.persisted && await until('rejoin', 5000, async () => {
      const s = await t.js(leader, 'return window.__tab.summary()');
      return s.status.term > 0 && !s.status.leader && s;
    });
    await t.switchTo(handles[2]);
    await h.session.navigate(`${pages}/tabs/plain.html`, 20_000);
    const control = await roundTrip(handles[2]);
    const line = `${B} bfcache: the leader's page restored (pageshow.persisted) ${ours.persisted}, another tab led while it was away ${ours.during}, rejoined as follower ${!!rejoined}; a plain page restored ${control.persisted}; notRestoredReasons ${ours.nrr}`;
    if (control.persisted) check(ours.persisted && ours.during && rejoined, line);
    else console.log(`info ${line} (not asserted: this engine restored not even the plain page)`);
    // (e) the leader's window closes (the page does nothing on pagehide):
    // its policy's held tokens come back with the state it hands over (the
    // tab gives them back as it leaves), and the next leader has them.
    const last = await t.leaderOf(handles.slice(0, 2));
    const heir = handles.find((x) => x !== last && x !== handles[2]);
    const gone = await t.call(last, 'summary');
    const want = Math.min(100, gone.status.quotaLevel + gone.stats.shared.tokensHeld);
    await t.js(heir, 'localStorage.clear(); localStorage.setItem("trace", "")');
    await t.switchTo(last);
    await h.session.cmd('DELETE', '/window');
    t.current = null;
    const heirLed = await until('heir', 3000, async () => {
      const s = await t.call(heir, 'summary');
      return s.status?.leader && s.status.quotaLevel >= want && s;
    }, 100) || await t.call(heir, 'summary');
    check(want > gone.status.quotaLevel && heirLed.status.leader && heirLed.status.quotaLevel >= want,
      `${B} (e) release as the tab leaves: the closing leader held ${gone.stats.shared.tokensHeld} tokens, bucket ${gone.status.quotaLevel}; the next leader's bucket ${heirLed.status.quotaLevel}`)
      || note(`${browser} (e) trace:\n${await t.js(heir, READ_TRACE)}${JSON.stringify(heirLed)}`);
    if (process.env.FLEET_TRACE) note(`${browser} (e) trace:\n${await t.js(heir, READ_TRACE)}`);
    await t.js(heir, 'localStorage.clear()');
    handles = handles.filter((x) => x !== last);
    for (const x of handles) for (const l of await t.logs(x).catch(() => [])) if (/error|unhandled/.test(l)) note(`${browser} page: ${l}`);

    // (f) a bundle without the authority's wasm: no tab can lead; each
    // policy retries on a budget of its own (capacity / fleetSize), and
    // the budget says why (an `error` event, status(), stats().shared).
    for (const x of handles) await t.load(x, '?bundle');
    const alone = await quota(t, browser, handles, 'tabs', 'no authority', { tabs: { fleetSize: 2 } });
    const ownBound = CAPACITY / 2 / RETRY_COST;
    const said = alone.results.map((r) => [r.status?.mode, r.stats.shared?.mode, r.status?.reason, r.stats.shared?.reason, ...r.budgetErrors]);
    const named = said.every(([mode, shared, ...reasons]) => mode === 'fallback' && shared === 'fallback' && reasons.length === 3
      && reasons.every((m) => typeof m === 'string' && m.includes('saferetry_authority_bg.wasm')));
    check(alone.perTab.every((n) => n > 0 && n <= ownBound) && named,
      `${B} (f) without the authority's wasm: retries per tab ${alone.perTab.join('+')} (each in 1..=${ownBound} = capacity ${CAPACITY} / fleetSize 2 / retryCost ${RETRY_COST}); status().mode, stats().shared.mode ${said.map((s) => s.slice(0, 2).join('/')).join(', ')}; reason, in status(), stats().shared and one error event each: ${named ? 'named the wasm' : JSON.stringify(said)}`);
  } finally {
    await h.close();
  }
  if (Date.now() > deadline) throw new Error('the run budget is spent');
}

async function main() {
  const asked = process.argv.slice(2);
  const browsers = asked.length ? asked : BROWSERS;
  for (const b of browsers) if (!BROWSERS.includes(b)) { console.error(`unknown browser ${b}`); return 2; }
  if (!existsSync(path.join(PKG, 'saferetry_web_bg.wasm'))) { console.error('js/src has no build: run scripts/build.sh'); return 2; }
  const deadline = t0 + RUN_BUDGET_MS;
  const fault = await startFaultServer({ port: 0, host: '127.0.0.1' });
  const bundle = bundlePage();
  const pages = await startPages(bundle);
  const hard = setTimeout(() => { console.log(`FAIL the tier's budget of ${RUN_BUDGET_MS} ms is spent`); process.exit(1); }, RUN_BUDGET_MS);
  try {
    for (const b of browsers) {
      try {
        await runBrowser(b, pages.url, fault, deadline);
      } catch (e) {
        check(false, `${b}: ${e.stack ?? e}`);
      }
    }
  } finally {
    clearTimeout(hard);
    await fault.close();
    pages.server.close();
    pages.server.closeAllConnections?.();
    rmSync(bundle, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

process.exitCode = await main();
