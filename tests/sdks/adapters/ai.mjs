// ai (the Vercel AI SDK): its chat client for the text stream protocol,
// `new TextStreamChatTransport({ api, fetch })` — what `useChat({ transport })`
// runs — reading a `toTextStreamResponse()` answer (text/plain; charset=utf-8,
// chunked). The transport has no retries of its own.
import { TextStreamChatTransport } from 'ai';

const MAX_PARTS = 1_000;
const messages = [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }];

export const client = (fetch, { base }) => new TextStreamChatTransport({ api: `${base}/api/chat`, fetch });

/** One chat turn (POST /api/chat): the UI message chunks the transport
 * makes of the text stream; `onDelta(text)` for each text delta. */
async function turn(c, { signal, onDelta = () => {} } = {}) {
  const stream = await c.sendMessages({ trigger: 'submit-message', chatId: 'chat-1', messageId: undefined, messages, abortSignal: signal });
  let text = '';
  let parts = 0;
  for await (const part of stream) {
    if (part.type === 'text-delta') { text += part.delta; onDelta(part.delta); }
    if (++parts > MAX_PARTS) throw new Error(`the chat stream did not end within ${MAX_PARTS} parts`);
  }
  return text;
}

/** A whole answer → its text. */
export const call = (c) => turn(c);

/** A streamed answer → its text; one unit per word the fake sent ("c0 ",
 * "c1 ", …), however the deltas were cut. */
export async function stream(c, { signal, onUnits }) {
  return turn(c, { signal, onDelta: (d) => { const words = d.split(' ').length - 1; if (words) onUnits(words); } });
}

export const notApplicable = {
  big: 'a chat transport reads text deltas, not a raw download',
};
