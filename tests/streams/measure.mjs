// One side of a streams case: a call through `fetch` (the host's, or
// `policy.fetch`) whose body is read chunk by chunk, timed from the call;
// and what the server says it received for a record id. Web-standard APIs
// only (every runtime runs it).

const now = () => (globalThis.performance?.now ? performance.now() : Date.now());
const ms = (t) => Math.round(t);
const MAX_READS = 100_000;
const SETTLE_MS = 300; // lets a stray extra request (a retry) reach the server before it is counted
const sleep = (t) => new Promise((resolve) => setTimeout(resolve, t));

/** A fresh record id: unique per run and call. */
export const newId = (tag) => `${tag}-${Math.random().toString(36).slice(2, 10)}`;

/** The error as plain data. */
export function describe(err, reason) {
  return { isReason: reason !== undefined && err === reason, name: err?.name ?? typeof err, message: String(err?.message ?? err).slice(0, 200), reason: err?.reason };
}

/**
 * Calls `doFetch(url, init)` and reads the whole body. Resolves with
 * { headersMs, firstMs, firstAt (Date.now() then), allMs, status, text, res }
 * or { error, errorMs }.
 * `onChunk(n, reader)` is called after the n-th non-empty chunk (the abort case stops there).
 */
export async function readTimed(doFetch, url, init, { onChunk } = {}) {
  const t0 = now();
  let res;
  try {
    res = await doFetch(url, init);
  } catch (err) {
    return { error: describe(err, init?.signal?.reason), errorMs: ms(now() - t0) };
  }
  const out = { headersMs: ms(now() - t0), firstMs: null, allMs: null, status: res.status, text: '', res, chunks: 0 };
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  try {
    for (let i = 0; i < MAX_READS; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!value.byteLength) continue;
      out.chunks += 1;
      out.firstMs ??= ms(now() - t0);
      out.firstAt ??= Date.now();
      out.text += dec.decode(value, { stream: true });
      if (onChunk && (await onChunk(out.chunks, reader, out)) === 'stop') return out;
    }
    out.text += dec.decode();
    out.allMs = ms(now() - t0);
  } catch (err) {
    out.readError = describe(err, init?.signal?.reason);
    out.readErrorMs = ms(now() - t0);
  }
  return out;
}

/** What the server received for `id`: { requests, sent, ended, closedEarly }, after a short settle. */
export async function received(server, id, { settle = SETTLE_MS } = {}) {
  await sleep(settle);
  const res = await fetch(`${server.url}/rec/${id}`);
  return res.json();
}

/** Polls the record of `id` until `ok(rec)` or `withinMs` passed; resolves with the last record. */
export async function receivedUntil(server, id, ok, withinMs) {
  const until = now() + withinMs;
  for (let i = 0; i < 200; i++) { // bounded by `until` too
    const rec = await received(server, id, { settle: 0 });
    if (ok(rec) || now() > until) return rec;
    await sleep(100);
  }
  return received(server, id, { settle: 0 });
}

/** The stream ports' URLs, asked once per server. */
const portsOf = new Map();
export function streamPorts(server) {
  if (!portsOf.has(server.url)) portsOf.set(server.url, fetch(`${server.url}/ports`).then((r) => r.json()));
  return portsOf.get(server.url);
}
