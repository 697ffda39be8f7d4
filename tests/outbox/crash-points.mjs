// The four crash points of a drain (docs/outbox.md, "Exactly once"), as
// test hooks a test wraps around a store's `put` and around the policy's
// `fetch` (its `fetch` option): nothing of the package knows of them.
// `stop(point)` is how the drainer dies there: a Node process kills itself
// (tests/outbox/crash-child.mjs); a page (page.mjs) or a Durable Object
// (worker.mjs) tells the server (`atPoint`) and hangs until the runner
// closes the page or kills workerd. Used by the page and the Worker too
// (served, bundled): plain JS, the host's `fetch` only.

export const POINTS = {
  'before-claim': 'before its claim',
  'after-claim': 'after its claim, before the send',
  'mid-send': 'mid-send (the server has the request)',
  'after-send': 'after the send, before the delete',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `put` stopping around its first call (a drain's first write is its claim). */
export function crashingPut(put, point, stop) {
  return async (...args) => {
    if (point === 'before-claim') await stop(point);
    await put(...args);
    if (point === 'after-claim') await stop(point);
  };
}

/** The host's `fetch`, stopping once the outbox server has counted the
 * request (`mid-send`, its answer not read) or once its answer is read
 * (`after-send`). */
export function crashingFetch(point, stop) {
  return async (input, init) => {
    const key = new Headers(init?.headers ?? input.headers).get('idempotency-key');
    const counts = new URL('/__counts', input.url ?? input);
    const seen = async () => (await (await fetch(counts)).json()).requests[key] ?? 0;
    const before = point === 'mid-send' ? await seen() : 0;
    const answer = fetch(input, init);
    if (point === 'mid-send') {
      for (let i = 0; i < 500; i++) {
        if ((await seen()) > before) await stop(point);
        await sleep(10);
      }
    }
    const response = await answer;
    if (point === 'after-send') await stop(point);
    return response;
  };
}

/** A `stop` for a page or a Durable Object: tells the outbox server
 * `server` that the drainer of `key` is at `point`, then never resolves. */
export const atPoint = (server, key) => async (point) => {
  await fetch(`${server}/__at?key=${encodeURIComponent(key)}&point=${point}`, { method: 'POST' });
  return new Promise(() => {});
};

/** A keyed write to `url` as the outbox keeps one, due now (a crash
 * case's store holds it before the drainer starts). */
export function dueWrite(url, key) {
  const now = Date.now();
  const body = new TextEncoder().encode(JSON.stringify({ order: key }));
  return { id: key, method: 'POST', url, headers: [['idempotency-key', key], ['content-type', 'application/json']], body, key, retryAt: now - 10, expiresAt: now + 600_000, sends: 1, keptAt: now - 3000 };
}
