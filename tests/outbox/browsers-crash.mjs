// IndexedDB + Web Locks under crashes (README "Outbox", "Exactly once"):
// a page whose drain stops at a crash point (tests/outbox/page.mjs) is
// closed there; two tabs then open the outbox at the same instant, and the
// kept write must be sent by exactly one of them, with its key. And a tab
// waiting for the Web Lock another tab holds closes its outbox at once.
import { assert, until } from './node.mjs';
import { helpers } from './browsers.mjs';

const POINTS = { 'before-claim': 'before its claim', 'after-claim': 'after its claim, before the send', 'mid-send': 'mid-send (the server has the request)', 'after-send': 'after the send, before the delete' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The cases, on the browser `get()` gives (`{ h, pages, server }`, as
 * tests/outbox/browsers.mjs launched it); `points`: the four crash points too. */
export function crashCases(browser, get, { points = true } = {}) {
  const { js, call, page, load, events } = helpers(get);
  let home;
  const session = () => get().h.session;
  const open = async () => {
    home ??= await session().cmd('GET', '/window');
    const handle = (await session().cmd('POST', '/window/new', { type: 'window' })).handle;
    await session().cmd('POST', '/window', { handle });
    return handle;
  };
  const use = (handle) => session().cmd('POST', '/window', { handle });
  const close = async (handle) => {
    await use(handle);
    await session().cmd('DELETE', '/window');
    await use(home);
  };
  /** A tab whose outbox keeps the write `key` and whose drain stops at `at`. */
  const stopped = async (name, key, at) => {
    const { server } = get();
    const tab = await open();
    await load(name, 0, { at, server: server.url });
    await server.open(Date.now() + 1500); // Retry-After: 2
    const r = await call('send', `${server.url}/orders`, key);
    assert(r.kind === 'try-later' && r.kept === true, `send: ${JSON.stringify(r)}`);
    await until(`the page at ${at}`, 15_000, () => js('return window.__at'));
    return tab;
  };
  const crashCase = (point) => [`a page closed ${POINTS[point]}: of two tabs that then open the outbox at once, exactly one sends the write, with its key`, async () => {
    const name = `crash-${point}`;
    const key = `${browser}-${point}`;
    const a = await stopped(name, key, point);
    const { server } = get();
    const before = (await server.counts()).requests[key];
    assert(before === (point.includes('send') ? 2 : 1), `the closed page sent ${before} times`);
    await close(a);
    const tabs = [await open(), await open()];
    for (const t of tabs) {
      await use(t);
      await page();
    }
    const at = Date.now() + 800;
    for (const t of tabs) {
      await use(t);
      await call('openAt', name, at);
    }
    await until('the re-send', 15_000, async () => (await server.counts()).requests[key] > before);
    await sleep(500); // the other tab has drained too by now
    const sent = [];
    for (const t of tabs) {
      await use(t);
      sent.push(...(await events()).filter((e) => e.type === 'sent'));
      assert((await call('pending')) === 0, 'nothing pending');
    }
    const after = (await server.counts()).requests[key] - before;
    assert(after === 1 && sent.length === 1 && sent[0].key === key, `sends after the crash: ${after}, sent events: ${JSON.stringify(sent)}`);
    for (const t of tabs) await close(t);
  }];
  const list = [
    ...(points ? Object.keys(POINTS).map(crashCase) : []),
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
  return list;
}
