// @anthropic-ai/sdk: `new Anthropic({ fetch })`, retries off with maxRetries: 0; dangerouslyAllowBrowser for the Chromium run of hosts.mjs (the key is a fake).
import Anthropic from '@anthropic-ai/sdk';
import { readChunks, readEvents } from '../support.mjs';

const message = { model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

export const client = (fetch, { base }) => new Anthropic({ apiKey: 'sk-ant-test', baseURL: base, fetch, maxRetries: 0, dangerouslyAllowBrowser: true });

/** POST /v1/messages → the reply's text. */
export const call = async (c) => (await c.messages.create(message)).content[0].text;

/** The same POST with stream: true; one unit per SSE event. */
export async function stream(c, { signal, onUnits }) {
  await readEvents(await c.messages.create({ ...message, stream: true }, { signal }), onUnits);
}

/** GET /v1/files/file_1/content (beta Files API): the SDK hands back the raw Response. */
export async function download(c, { onBytes }) {
  await readChunks((await c.beta.files.download('file_1')).body, onBytes);
}

export const redirectedPost = call;
