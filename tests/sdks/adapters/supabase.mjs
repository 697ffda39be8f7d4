// @supabase/supabase-js: `createClient(url, key, { global: { fetch } })`.
// postgrest-js retries a GET on 503 by itself: `.retry(false)` turns that off.
// Node 20 has no global WebSocket and createClient refuses to build the realtime
// client without one, so `ws` is its transport (realtime is never connected here).
import { createClient } from '@supabase/supabase-js';
import ws from 'ws';
import { readChunks, unwrap } from '../support.mjs';

export const client = (fetch, { base }) => createClient(base, 'anon-key', {
  global: { fetch },
  realtime: { transport: ws },
  auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
});

/** GET /rest/v1/items → the first row's name. */
export const call = async (c) => unwrap(await c.from('items').select('*').retry(false)).data[0].name;

/** Storage download as a stream: GET /storage/v1/object/files/data.bin. */
async function file(c, signal, onBytes) {
  const { data } = unwrap(await c.storage.from('files').download('data.bin', {}, { signal }).asStream());
  await readChunks(data, onBytes);
}

export const stream = (c, { signal, onUnits }) => file(c, signal, (n) => onUnits(n / 1024));
export const download = (c, { onBytes }) => file(c, undefined, onBytes);

/** POST /rest/v1/items (insert … select) → "<status> <name>". */
export async function redirectedPost(c) {
  const { data, status } = unwrap(await c.from('items').insert({ name: 'hello' }).select().retry(false));
  return `${status} ${data[0].name}`;
}
