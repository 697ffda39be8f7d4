// axios with its fetch adapter: `adapter: 'fetch', env: { fetch }`; axios has no retries.
import axios from 'axios';
import { readChunks } from '../support.mjs';

export const client = (fetch, { base }) => axios.create({ baseURL: `${base}/api`, adapter: 'fetch', env: { fetch } });

/** GET /api/items → the first item's name. */
export const call = async (c) => (await c.get('items')).data[0].name;

/** GET /api/download with responseType: 'stream', which resolves with the body stream. */
export async function stream(c, { signal, onUnits }) {
  await readChunks((await c.get('download', { responseType: 'stream', signal })).data, (n) => onUnits(n / 1024));
}
export async function download(c, { onBytes }) {
  await readChunks((await c.get('download', { responseType: 'stream' })).data, onBytes);
}

/** POST /api/items with a JSON body → the first item's name. */
export const redirectedPost = async (c) => (await c.post('items', { name: 'hello' })).data[0].name;
