// The demo page in Debian's Chromium (playwright-core, no downloaded browser):
// every scenario, the visible state and countdown, the server's own counter,
// Cancel and Try now. One screenshot per case in test-output/screenshots/.
//   node --test tests/demo/page.test.mjs     (after `make build`)
//   CHROMIUM=/path/to/chromium              another Chromium binary
//   SAFERETRY_README_SCREENSHOT=1           also rewrites www/screenshot.png
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startDemo } from '../../www/demo.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(REPO, 'test-output/screenshots');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const END_MS = 20_000; // generous bound for any one operation to end

let demo, browser, context, page;
const pageErrors = [];

before(async () => {
  demo = await startDemo();
  await mkdir(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: FLAGS, timeout: 30_000 });
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(END_MS);
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(demo.url);
  await page.locator('#scenarios input').first().waitFor();
});

after(async () => {
  await browser?.close();
  await demo?.close();
});

// ---------- helpers ----------
const text = (sel) => page.locator(sel).innerText();
const stateText = () => text('#state-text');
const serverCount = async () => Number(await text('#server-count'));
const clientCount = async () => Number(await text('#client-count'));
const state = () => page.locator('#status').getAttribute('data-state');

/** Picks a scenario by its label, presses Start, returns the run id. */
async function start(label) {
  await page.getByLabel(label, { exact: true }).check();
  const before = await page.locator('#status').getAttribute('data-run');
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForFunction((old) => {
    const run = document.getElementById('status').dataset.run;
    return run && run !== old;
  }, before);
  return page.locator('#status').getAttribute('data-run');
}

/** Waits for the page to show a final outcome (after its last counter poll). */
async function settled() {
  await page.locator('#result[data-outcome]').waitFor({ timeout: END_MS });
  return page.locator('#result').getAttribute('data-outcome');
}

/** Waits for the status to show state `name`; failing, says what the page shows instead. */
async function waitState(name) {
  try {
    await page.locator(`#status[data-state="${name}"]`).waitFor({ timeout: END_MS });
  } catch (error) {
    const shown = await page.evaluate(() => ({
      state: document.getElementById('status').dataset.state,
      text: document.getElementById('state-text')?.innerText,
      outcome: document.getElementById('result')?.dataset.outcome,
      result: document.getElementById('result')?.innerText,
      timeline: document.getElementById('timeline')?.innerText,
    }));
    throw new Error(`no "${name}" state within ${END_MS} ms; the page shows ${JSON.stringify(shown)}`, { cause: error });
  }
}

async function serverSaw(runId) {
  const res = await fetch(`${demo.server.url}/count/${runId}`, { signal: AbortSignal.timeout(5_000) });
  return res.json();
}

const shot = (name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

// ---------- scenarios ----------
test('503 twice, then 200: succeeds after 3 attempts; the server counted 3', async () => {
  const run = await start('503 twice, then 200');
  assert.equal(await settled(), 'succeeded');
  assert.match(await stateText(), /^Succeeded — HTTP 200 after 3 attempts\.$/);
  assert.equal(await page.locator('#state-badge').innerText(), 'SUCCEEDED'); // text-transform: uppercase
  assert.equal(await serverCount(), 3);
  assert.equal(await clientCount(), 3);
  assert.equal((await serverSaw(run)).requests, 3);
  assert.equal(await page.locator('.tl-row-request').count(), 3);
  assert.equal(await page.locator('.tl-row-wait').count(), 2);
  await shot('retry-503');
});

test('always 503: three attempts, then try later; the server counted 3', async () => {
  const run = await start('Always 503');
  assert.equal(await settled(), 'try-later');
  assert.match(await stateText(), /^Try later — /);
  assert.equal(await text('#countdown'), 'Try again later.');
  assert.equal(await serverCount(), 3);
  assert.equal((await serverSaw(run)).requests, 3);
  assert.ok(await page.getByRole('button', { name: 'Try now' }).isEnabled());
  assert.ok(await page.getByRole('button', { name: 'Cancel' }).isDisabled());
  await shot('always-503');
});

test('429 with Retry-After 3: waits at least 3 s, shows the countdown, then succeeds; server counted 2', async () => {
  const run = await start('429 with Retry-After: 3');
  await waitState('waiting');
  assert.match(await stateText(), /Retry-After/);
  assert.match(await text('#countdown'), /^Retrying in \d+\.\d s$/);
  await page.waitForTimeout(1200);
  if (process.env.SAFERETRY_README_SCREENSHOT) {
    await page.screenshot({ path: path.join(REPO, 'www/screenshot.png'), clip: { x: 0, y: 0, width: 1200, height: 640 } });
  }
  await shot('throttle-429-waiting');
  assert.equal(await settled(), 'succeeded');
  assert.match(await stateText(), /after 2 attempts/);
  assert.equal(await serverCount(), 2);
  const { requests, starts } = await serverSaw(run);
  assert.equal(requests, 2);
  assert.ok(starts[1] - starts[0] >= 3000, `second request ${starts[1] - starts[0]} ms after the first`);
  await shot('throttle-429');
});

test('Retry-After 120 s against a 10 s budget: "Try again at HH:MM:SS — in ~120 s"; the server counted 1', async () => {
  const run = await start('Retry-After: 120 against a 10 s budget');
  assert.equal(await settled(), 'try-later');
  assert.match(await stateText(), /^Try later — The server asked us to wait longer/);
  const countdown = await text('#countdown');
  const m = /^Try again at (\d\d):(\d\d):(\d\d) — in (\d+) s$/.exec(countdown);
  assert.ok(m, `countdown: ${JSON.stringify(countdown)}`);
  const inS = Number(m[4]);
  assert.ok(inS >= 110 && inS <= 121, `in ${inS} s`);
  const expected = new Date(Date.now() + inS * 1000); // the test and the browser share the clock and zone
  const shown = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  const want = expected.getHours() * 3600 + expected.getMinutes() * 60 + expected.getSeconds();
  const diff = Math.abs(shown - want);
  assert.ok(Math.min(diff, 86_400 - diff) <= 5, `shown ${m.slice(1, 4).join(':')}, expected about ${expected.toTimeString()}`);
  assert.equal(await serverCount(), 1);
  assert.equal((await serverSaw(run)).requests, 1);
  await shot('retry-after-120');
  await page.waitForTimeout(2100); // the countdown keeps counting
  const later = Number(/in (\d+) s$/.exec(await text('#countdown'))?.[1]);
  assert.ok(later <= inS - 1 && later >= inS - 4, `in ${later} s, 2 s after in ${inS} s`);

  // Try now starts a fresh operation, but never before the server's Retry-After:
  // it cannot fit in the budget either, so it ends at once without a request.
  await page.getByRole('button', { name: 'Try now' }).click();
  assert.equal(await settled(), 'try-later');
  assert.match(await text('#countdown'), /^Try again at \d\d:\d\d:\d\d — in (1[01]\d|120) s$/);
  assert.equal(await page.locator('.tl-row-mark').count(), 1);
  await page.waitForTimeout(500);
  assert.equal(await serverCount(), 1);
  assert.equal((await serverSaw(run)).requests, 1);
  await shot('retry-after-120-try-now');
});

test('stalled body: each attempt times out, three attempts, try later; the server counted 3', async () => {
  const run = await start('Stalled body');
  assert.equal(await settled(), 'try-later');
  assert.match(await stateText(), /^Try later — /);
  assert.equal(await serverCount(), 3);
  assert.equal((await serverSaw(run)).requests, 3);
  assert.match(await text('#result'), /attempt-timeout/);
  await shot('slow-body');
});

test('POST whose response is lost: failed, "may have been received"; the server counted exactly 1', async () => {
  const run = await start('POST whose response is lost');
  assert.equal(await settled(), 'failed');
  assert.match(await stateText(), /^Failed — .*may have been received/);
  await page.waitForTimeout(1000); // nothing more may arrive
  const c = await serverSaw(run);
  assert.equal(c.requests, 1);
  assert.equal(c.bodiesRead, 1);
  assert.equal(await serverCount(), 1);
  assert.equal(await clientCount(), 1);
  assert.ok(await page.getByRole('button', { name: 'Try now' }).isDisabled());
  await shot('post-lost');
});

test('POST redirected (307) to a closed port: the refused second hop stops it as maybe delivered; the server counted 1', async () => {
  const run = await start('POST redirected (307) to a closed port');
  assert.equal(await settled(), 'failed');
  assert.match(await stateText(), /^Failed — .*may have been received, so it was not sent again/);
  assert.equal(await serverCount(), 1);
  assert.equal((await serverSaw(run)).requests, 1);
  await shot('post-redirect');
});

test('offline: no attempt while offline, waits for the network, sends once when back online', async () => {
  await context.setOffline(true);
  try {
    assert.equal(await text('#net-state'), 'offline');
    const run = await start('Offline');
    await waitState('waiting');
    await page.waitForTimeout(1500);
    assert.equal(await state(), 'waiting');
    assert.match(await stateText(), /^Offline — waiting for the network/);
    assert.equal(await clientCount(), 0);
    assert.equal((await serverSaw(run)).requests, 0);
    await shot('offline-waiting');
    await context.setOffline(false);
    assert.equal(await settled(), 'succeeded');
    assert.match(await stateText(), /after 1 attempt\.$/);
    assert.equal(await serverCount(), 1);
    assert.equal((await serverSaw(run)).requests, 1);
    await shot('offline');
  } finally {
    await context.setOffline(false);
  }
});

test('upstream down 3 s, then back: the throttling policy sends far fewer requests than throttle: false, ends calls throttled with nothing sent, and traffic returns', async () => {
  const run = await start('Upstream down 3 s, then back (many calls)');
  assert.equal(await settled(), 'load');
  const data = async (key) => Number(await page.locator('#result').getAttribute(`data-${key}`));
  const [sent, sentControl, throttled, ok, okControl] = [await data('sent'), await data('sent-control'), await data('throttled'), await data('ok'), await data('ok-control')];
  // The server's own counts, for both upstreams.
  assert.equal((await serverSaw(run)).requests, sent);
  assert.equal((await serverSaw(`${run}-control`)).requests, sentControl);
  assert.ok(throttled > 0, `some calls were throttled (${throttled})`);
  assert.ok(sent < sentControl, `fewer requests with throttling: ${sent} < ${sentControl}`);
  assert.ok(ok > 0 && okControl > 0, `both sides succeed once the upstream is back (${ok}, ${okControl})`);
  assert.ok(await data('back') >= 3000, 'the first success after the outage is after it ended');
  assert.match(await stateText(), /^Done — 60 calls each way: the upstream received \d+ requests with throttling, \d+ without; \d+ calls ended at once, throttled, with nothing sent\.$/);
  await shot('outage-load');
});

test('three tabs on one upstream down 5 s, then back: with throttling at most half the outage\'s requests reach it, every tab sees traffic return, no call ends past its deadline', async () => {
  const run = await start('Three tabs, upstream down 5 s, then back');
  // Loading six frames, electing two leaders, 15 s of calls: a generous bound.
  await page.locator('#result[data-outcome]').waitFor({ timeout: 90_000 });
  assert.equal(await page.locator('#result').getAttribute('data-outcome'), 'tabs', await stateText());
  const f = JSON.parse(await page.locator('#result').getAttribute('data-figures'));
  const [on, off] = ['throttling', 'control'].map((key) => f.sides.find((s) => s.key === key));
  const rows = (side) => side.rows.map((r) => JSON.stringify(r)).join('\n');
  for (const side of [on, off]) {
    assert.equal(side.rows.length, 3, `three tabs (${side.key})`);
    for (const r of side.rows) {
      // The server's own count, per tab.
      assert.equal((await serverSaw(`${run}-${side.key}-t${r.tab}`)).requests, r.sent, `${side.key} tab ${r.tab}: the server's count`);
      assert.equal(r.calls, 300, `${side.key} tab ${r.tab}: every call made`);
      assert.equal(r.late, 0, `${side.key} tab ${r.tab}: no call ended past its deadline`);
      assert.equal(r.statsThrottled, r.throttled, `${side.key} tab ${r.tab}: stats().throttled counts the calls that ended throttled`);
      // Traffic returns in every tab within the 9 s the run leaves after
      // the upstream is back. How soon it is back at full rate is printed,
      // not asserted (as in the throttle tier). Three tabs at 20 calls a
      // second share one window at 60 a second: on virtual time each got
      // its first 200 within 4.9 s in every one of 2000 runs
      // (tests/fleet_throttle.rs, this load). At 10 a second each, with a
      // draw per call at the cap (before its probes were evenly spaced),
      // 0.5 % of those runs had a tab with none within 9 s, and so did one
      // fresh-clone run of this tier.
      assert.ok(r.firstOk !== null, `${side.key} tab ${r.tab}: a 200 after the return (${r.firstOk})\n${rows(side)}`);
    }
  }
  // The saving: the throttling tabs keep at least half of the outage's requests away, and send fewer in all.
  assert.ok(on.total.sentInOutage * 2 <= off.total.sentInOutage,
    `while down: ${on.total.sentInOutage} requests with throttling, ${off.total.sentInOutage} without`);
  assert.ok(on.total.sent < off.total.sent, `in all: ${on.total.sent} < ${off.total.sent}`);
  assert.ok(on.rows.every((r) => r.throttled > 0), `every throttling tab ended calls throttled\n${rows(on)}`);
  assert.equal(off.total.throttled, 0, 'throttle: false throttles nothing');
  // The full-rate time as the figures have it: a time, or, when a tab was
  // not back to full rate before the run ended (printed, not asserted,
  // above), that it was not.
  const fullRate = on.total.fullRate === null ? 'not within the run' : '\\+[\\d.]+ m?s';
  assert.match(await stateText(), new RegExp(`^Done — 3 tabs each way, 300 calls per tab: the upstream got \\d+ requests from the throttling tabs \\(\\d+ while it was down\\), \\d+ without throttling \\(\\d+ while down\\); \\d+ calls ended throttled with nothing sent\\. After the upstream came back: the first 200 at \\+[\\d.]+ m?s, every tab back to full rate at ${fullRate}\\.$`));
  assert.equal(await page.locator('#tabs iframe').count(), 6);
  assert.equal(await page.locator('.tabs-chart .bars').count(), 2);
  console.log(`several tabs: ${await stateText()}\n${rows(on)}`);
  await shot('tabs-outage');
});

test('outbox: try later, the write kept with its key, then sent once by the outbox with the same key; the server counted 2', async () => {
  const run = await start('Outbox: 503 with Retry-After: 3 against a 2 s budget');
  assert.equal(await settled(), 'try-later');
  await page.locator('#outbox-note[data-outbox="kept"]').waitFor();
  assert.match(await text('#outbox-note'), /^Kept in the outbox with its idempotency key \S+: it will be sent at \d\d:\d\d:\d\d/);
  assert.match(await text('#countdown'), /^The outbox sends it at \d\d:\d\d:\d\d — in \d s$/);
  assert.equal((await serverSaw(run)).requests, 1);
  await page.locator('#outbox-note[data-outbox="sent"]').waitFor({ timeout: 10_000 });
  assert.match(await text('#outbox-note'), /^Sent by the outbox at .* HTTP 201, with the same key/);
  const saw = await serverSaw(run);
  assert.equal(saw.requests, 2);
  assert.equal(new Set(saw.idempotencyKeys).size, 1);
  assert.ok(saw.idempotencyKeys[0]);
  assert.ok(await page.getByRole('button', { name: 'Try now' }).isDisabled());
  await shot('outbox');
});

test('Cancel while waiting: state cancelled and no further request', async () => {
  const run = await start('429 with Retry-After: 3');
  await waitState('waiting');
  await page.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await settled(), 'cancelled');
  assert.match(await stateText(), /^Cancelled/);
  await page.waitForTimeout(3500); // past the 3 s Retry-After
  assert.equal((await serverSaw(run)).requests, 1);
  assert.equal(await serverCount(), 1);
  assert.ok(await page.getByRole('button', { name: 'Cancel' }).isDisabled());
  await shot('cancel');
});

test('Try now during a Retry-After wait: a fresh operation that still keeps the server\'s 3 s', async () => {
  const run = await start('429 with Retry-After: 3');
  await waitState('waiting');
  await page.getByRole('button', { name: 'Try now' }).click();
  await page.waitForTimeout(300);
  assert.equal(await state(), 'waiting');
  assert.match(await stateText(), /Retry-After\) before attempt 1\.$/); // the fresh operation's first attempt
  assert.equal(await settled(), 'succeeded');
  assert.match(await stateText(), /after 1 attempt\.$/);
  const { requests, starts } = await serverSaw(run);
  assert.equal(requests, 2);
  assert.ok(starts[1] - starts[0] >= 3000, `second request ${starts[1] - starts[0]} ms after the first`);
  assert.equal(await serverCount(), 2);
  assert.equal(await clientCount(), 2);
  await shot('try-now');
});

test('keyboard: the scenario, Start and the state are reachable without a mouse', async () => {
  await page.locator('#scenarios input').first().focus();
  await page.keyboard.press('ArrowDown'); // radios: arrows move the choice
  assert.equal(await page.locator('#scenarios input:checked').getAttribute('value'), 'always-503');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'start');
  assert.equal(await page.locator('#status').getAttribute('aria-live'), 'polite');
  assert.deepEqual(pageErrors, []);
});
