// saferetry/sw in Chromium (docs/outbox.md, service worker): a page keeps
// a write (503 + Retry-After), which registers a Background Sync; every
// page of the origin is closed; once the write is due the sync event is
// dispatched through the DevTools protocol (ServiceWorker.dispatchSyncEvent,
// over playwright-core's CDP session of an about:blank tab, which is no page
// of the origin); the service worker sends it, once, with its key.
import { chromium } from 'playwright-core';
import { startPages } from './browsers.mjs';
import { startOutboxServer } from './server.mjs';
import { assert, until } from './node.mjs';

const EXECUTABLE = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TAG = 'saferetry-outbox:sync'; // the outbox "sync" of tests/outbox/sw.mjs

export function cases() {
  let browser, pages, server;
  const setup = async () => {
    pages = await startPages();
    server = await startOutboxServer();
    browser = await chromium.launch({ executablePath: EXECUTABLE, args: FLAGS, timeout: 30_000 });
  };
  const teardown = async () => {
    await browser?.close();
    await server?.close();
    await new Promise((r) => pages?.server.close(r));
  };
  const list = [
    ['with every page closed, the Background Sync event makes saferetry/sw send the kept write: once, with its key', async () => {
      await server.reset();
      const key = 'sync-chromium-1';
      const context = await browser.newContext();
      await context.grantPermissions(['background-sync'], { origin: pages.url });
      const blank = await context.newPage(); // about:blank: no page of the origin
      const cdp = await context.newCDPSession(blank);
      const registrations = new Map();
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations: list }) => {
        for (const r of list) registrations.set(r.scopeURL, r.registrationId);
      });
      await cdp.send('ServiceWorker.enable');
      const page = await context.newPage();
      await page.goto(`${pages.url}/outbox/page.html`, { timeout: 20_000 });
      await page.waitForFunction(() => window.__ready === true, null, { timeout: 10_000 });
      const worker = await page.evaluate(() => window.__ob.registerWorker());
      assert(worker.active === true && worker.sync === true, `service worker: ${JSON.stringify(worker)}`);
      assert(await page.evaluate(() => window.__ob.open('sync')), 'outbox opened');
      await server.open(Date.now() + 1500); // Retry-After: 2
      const r = await page.evaluate(([url, k]) => window.__ob.send(url, k), [`${server.url}/orders`, key]);
      assert(r.kind === 'try-later' && r.kept === true, `send: ${JSON.stringify(r)}`);
      // The outbox registers it from its drain after the send answered: wait for it (bounded).
      const tags = () => page.evaluate(async () => (await navigator.serviceWorker.ready).sync.getTags());
      await until('the page\'s sync registration', 5000, async () => (await tags()).includes(TAG));
      await page.close(); // no page of the origin is open from here on
      await sleep(Math.max(0, r.retryAt - Date.now()) + 300);
      assert((await server.counts()).requests[key] === 1, 'nothing sent before the sync event');
      const registrationId = await until('the registration', 5000, () => registrations.get(`${pages.url}/outbox/`));
      await cdp.send('ServiceWorker.dispatchSyncEvent', { origin: pages.url, registrationId, tag: TAG, lastChance: false });
      await until('the service worker\'s send', 10_000, async () => (await server.counts()).accepted[key] === 1);
      await sleep(500);
      const c = await server.counts();
      assert(c.requests[key] === 2 && c.accepted[key] === 1, `the first send and the worker's: ${JSON.stringify(c)}`);
      await context.close();
    }],
  ];
  return { setup, teardown, list };
}
