// openai: `new OpenAI({ fetch })`, retries off with maxRetries: 0; dangerouslyAllowBrowser for the Chromium run of hosts.mjs (the key is a fake).
import OpenAI from 'openai';
import { readChunks, readEvents } from '../support.mjs';

const chat = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };

export const client = (fetch, { base }) =>
  new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/v1`, fetch, maxRetries: 0, dangerouslyAllowBrowser: true });

/** POST /v1/chat/completions → the reply's text. */
export const call = async (c) => (await c.chat.completions.create(chat)).choices[0].message.content;

/** The same POST with stream: true; one unit per chunk event. */
export async function stream(c, { signal, onUnits }) {
  await readEvents(await c.chat.completions.create({ ...chat, stream: true }, { signal }), onUnits);
}

/** GET /v1/files/file-1/content: the SDK hands back the raw Response. */
export async function download(c, { onBytes }) {
  await readChunks((await c.files.content('file-1')).body, onBytes);
}

export const redirectedPost = call;
