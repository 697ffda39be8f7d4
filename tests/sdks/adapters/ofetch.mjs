// ofetch: `ofetch.create(defaults, { fetch })`, retries off with retry: 0.
import { ofetch } from 'ofetch';
import { readChunks } from '../support.mjs';

export const client = (fetch, { base }) => ofetch.create({ baseURL: `${base}/api`, retry: 0 }, { fetch });

/** GET /api/items → the first item's name. */
export const call = async (c) => (await c('items'))[0].name;

/** GET /api/download with responseType: 'stream', which resolves with the body stream. */
export async function stream(c, { signal, onUnits }) {
  await readChunks(await c('download', { responseType: 'stream', signal }), (n) => onUnits(n / 1024));
}
export async function download(c, { onBytes }) {
  await readChunks(await c('download', { responseType: 'stream' }), onBytes);
}

/** POST /api/items with a JSON body → "<status> <name>" (ofetch resolves a 3xx: raw shows it). */
export async function redirectedPost(c) {
  const res = await c.raw('items', { method: 'POST', body: { name: 'hello' } });
  return `${res.status} ${res._data?.[0]?.name}`;
}
