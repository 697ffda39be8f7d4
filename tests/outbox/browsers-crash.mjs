// IndexedDB + Web Locks under crashes (docs/outbox.md, "Exactly once"),
// in each browser. Each round, a page holds four outboxes, each with one
// due write (written to its IndexedDB store as a kept write is), and opens
// them with drains that stop for good at the four crash points
// (tests/outbox/crash-points.mjs): it holds their Web Locks there. The page
// is closed; two tabs then open all four outboxes at the same instant (a
// time both are told). For each crash point, the kept write must then be
// sent by exactly one tab, once, with its key, and leave the store. And a
// tab waiting for the Web Lock another tab holds closes its outbox at once.
import { assert, until } from './node.mjs';
import { helpers } from './browsers.mjs';
import { crashCases as roundCases, points, stopped } from './crash-rounds.mjs';

// A round (the four points) took 2.7 s in Chromium, 3.7 s in Firefox, 2.8 s
// in WebKit on this shared 2-core machine; the tier runs 8 in each.
const ROUNDS = Number(process.env.OUTBOX_TAB_ROUNDS ?? 8);
const CONTENDERS = 2;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The cases, on the browser `get()` gives (`{ h, pages, server }`, as
 * tests/outbox/browsers.mjs launched it). */
export function crashCases(browser, get) {
  const { js, call, page, load, events } = helpers(get);
  let home;
  const windows = new Set();
  const session = () => get().h.session;
  const use = (handle) => session().cmd('POST', '/window', { handle });
  const open = async () => {
    home ??= await session().cmd('GET', '/window');
    const handle = (await session().cmd('POST', '/window/new', { type: 'window' })).handle;
    windows.add(handle);
    await use(handle);
    return handle;
  };
  const close = async (handle) => {
    await use(handle);
    await session().cmd('DELETE', '/window');
    windows.delete(handle);
    await use(home);
  };

  /** One round: what went wrong at each crash point (a list per point). */
  const round = async (r, problems) => {
    const { server } = get();
    const name = (p) => `crash-${p}-${r}`;
    const key = (p) => `${browser}-${p}-${r}`;
    const crashed = await open();
    await page();
    for (const p of points) assert((await call('seed', name(p), `${server.url}/orders`, key(p))) === true, `seed ${p}`);
    for (const p of points) assert((await call('open', name(p), 0, { at: p, server: server.url, key: key(p) })) === true, `open ${p}`);
    const before = await stopped(server, key, r, problems);
    await close(crashed);
    const tabs = [];
    for (let i = 0; i < CONTENDERS; i++) {
      tabs.push(await open());
      await page();
    }
    const names = points.map(name);
    const at = Date.now() + 800;
    for (const t of tabs) {
      await use(t);
      await call('openAt', names, at);
    }
    const seen = [];
    for (const t of tabs) {
      await use(t);
      await until('both tabs\' first drains', 15_000, async () => (await js('return window.__drained.length')) === names.length).catch(async (error) => {
        throw new Error(`round ${r}, tab ${tabs.indexOf(t)}: ${error.message}: drained ${JSON.stringify(await js('return window.__drained'))}, events ${JSON.stringify(await events())}`);
      });
    }
    for (const t of tabs) {
      await use(t);
      const left = {};
      for (const p of points) left[p] = await call('pendingOf', name(p));
      seen.push({ events: await events(), left });
    }
    const after = (await server.counts()).requests;
    for (const p of points) {
      const sends = (after[key(p)] ?? 0) - (before[key(p)] ?? 0);
      const sent = seen.flatMap((s) => s.events.filter((e) => e.name === name(p) && e.type === 'sent'));
      const errors = seen.flatMap((s) => s.events.filter((e) => e.name === name(p) && e.type === 'error'));
      const left = seen.map((s) => s.left[p]);
      if (sends !== 1 || sent.length !== 1 || sent[0].key !== key(p) || left.some((n) => n !== 0) || errors.length > 0) {
        problems[p].push(`round ${r}: ${sends} sends after the crash, sent events ${JSON.stringify(sent)}, left per tab ${left}, errors ${JSON.stringify(errors)}`);
      }
    }
    for (const t of tabs) await close(t);
  };

  return [
    ...roundCases({
      server: () => get().server,
      rounds: ROUNDS,
      round,
      recover: async () => {
        for (const t of [...windows]) await close(t).catch(() => {});
      },
      sentence: (point) => `a page closed ${point}: of ${CONTENDERS} tabs that then open the outbox at once, exactly one sends the write, once, with its key, and it leaves the store`,
    }),
    ['a tab waiting for the Web Lock another tab holds closes its outbox at once', async () => {
      const name = 'held';
      const a = await open();
      await page();
      await call('hold', name); // another tab holds the outbox's lock, for good
      const b = await open();
      await load(name);
      await sleep(300); // its first drain waits for the lock
      const ms = await call('close', 5_000);
      assert(ms !== null, 'close() still waiting after 5 s');
      await close(b);
      await close(a);
    }],
  ];
}
