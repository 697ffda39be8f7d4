// ky: `ky.create({ fetch })`, retries off with retry: 0.
import ky from 'ky';
import { readChunks } from '../support.mjs';

export const client = (fetch, { base }) => ky.create({ prefixUrl: `${base}/api`, fetch, retry: 0 });

/** GET /api/items → the first item's name. */
export const call = async (c) => (await c.get('items').json())[0].name;

/** GET /api/download: ky resolves with the Response; the caller reads its body. */
export async function stream(c, { signal, onUnits }) {
  await readChunks((await c.get('download', { signal })).body, (n) => onUnits(n / 1024));
}
export async function download(c, { onBytes }) {
  await readChunks((await c.get('download')).body, onBytes);
}

/** POST /api/items with a JSON body → the first item's name. */
export const redirectedPost = async (c) => (await c.post('items', { json: { name: 'hello' } }).json())[0].name;
