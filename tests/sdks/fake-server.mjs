// A local fake of the nine APIs the SDK tier calls, on 127.0.0.1 only.
//
// Every request belongs to a run: the case and run id travel either as a
// path prefix `/run/<case>.<runId>/...` (SDKs that take a base URL) or, for
// Stripe (fixed paths), in the API key `Authorization: Bearer sk_test_<case>.<runId>`.
// The case decides the behaviour, the route decides the document:
//
//   json      the route's document
//   503       first request of the run: 503; later ones: the document
//   429       first request of the run: 429 + Retry-After: 1; later ones: the document
//   stream    SSE routes: 10 events, 100 ms apart; download routes: 10 chunks of 1 KiB, 100 ms apart;
//             the text stream route: 10 words ("c0 ", "c1 ", …) of text/plain, 100 ms apart
//   abort     as stream, with 20 events/chunks (the caller aborts after ~700 ms)
//   big       download routes: 40 MiB of octet-stream (Content-Length set), written with backpressure
//   redirect  a POST on its first hop: 308 to `/_moved<same path>`; `/_moved/...` answers the document
//
// CORS: any origin may call, preflights included (counted in `seen.preflights`,
// not as requests of a run).
//
// `runs.get(runId)` tells the runner what the server saw and when:
// { requests: [{ method, path, idempotencyKey }], firstChunkAt, lastChunkAt, chunksSent, clientGone }.
import http from 'node:http';

export const STREAM_CHUNKS = 10;
export const ABORT_CHUNKS = 20;
export const CHUNK_GAP_MS = 100;
export const BIG_BYTES = 40 * 1024 * 1024;
const TEXT_STREAM_TYPE = 'text/plain; charset=utf-8'; // toTextStreamResponse()'s only header (ai 6.0.325)

const now = () => Date.now();

// ---- documents, shaped like each real API's answer -------------------------

const chatCompletion = () => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-test',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const openaiEvent = (i, last) => ({
  id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test',
  choices: [{ index: 0, delta: last ? {} : { content: `c${i} ` }, finish_reason: last ? 'stop' : null }],
});
const anthropicMessage = () => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test',
  content: [{ type: 'text', text: 'hello' }], stop_reason: 'end_turn', stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});
const repo = () => ({ id: 1, name: 'r', full_name: 'o/r', owner: { login: 'o' }, private: false });
const issue = () => ({ id: 2, number: 1, title: 'hello', state: 'open' });
const customer = (form) => ({ id: 'cus_1', object: 'customer', email: form.get('email') ?? null, livemode: false });
const items = () => [{ id: 1, name: 'hello' }];

/** SSE framing per API: the events of a stream of `n`, `onLast` marks the end. */
const sse = {
  openai: (n) => [
    ...Array.from({ length: n - 1 }, (_, i) => `data: ${JSON.stringify(openaiEvent(i, false))}\n\n`),
    `data: ${JSON.stringify(openaiEvent(n - 1, true))}\n\ndata: [DONE]\n\n`,
  ],
  anthropic: (n) => {
    const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const deltas = Array.from({ length: n - 2 }, (_, i) =>
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `c${i} ` } }));
    return [
      ev('message_start', { message: { ...anthropicMessage(), content: [], stop_reason: null } })
        + ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ...deltas,
      ev('content_block_stop', { index: 0 })
        + ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: n } })
        + ev('message_stop', {}),
    ];
  },
};

// ---- routes: `METHOD /path` (after the run prefix) --------------------------
// doc(form|json) → the JSON document; sse → event framing; download → bytes;
// text → a whole text/plain answer, words(n) → its streamed words.

const routes = {
  'POST /v1/chat/completions': { doc: chatCompletion, sse: sse.openai },
  'GET /v1/files/file-1/content': { download: true },
  'POST /v1/messages': { doc: anthropicMessage, sse: sse.anthropic },
  'GET /v1/files/file_1/content': { download: true },
  'GET /repos/o/r': { doc: repo },
  'POST /repos/o/r/issues': { status: 201, doc: issue },
  'GET /repos/o/r/tarball/main': { download: true },
  'POST /v1/customers': { doc: customer, form: true },
  'GET /api/items': { doc: items },
  'POST /api/items': { status: 201, doc: items },
  'GET /api/download': { download: true },
  'GET /rest/v1/items': { doc: items },
  'POST /rest/v1/items': { status: 201, doc: items },
  'GET /storage/v1/object/files/data.bin': { download: true },
  // the AI SDK's text stream protocol: what `streamText(…).toTextStreamResponse()` answers
  'POST /api/chat': { text: () => 'hello', words: (n) => Array.from({ length: n }, (_, i) => `c${i} `) },
};

function parseRun(req, url) {
  let path = url.pathname;
  let moved = false;
  if (path.startsWith('/_moved/')) { moved = true; path = path.slice('/_moved'.length); }
  let token;
  const m = /^\/run\/([^/]+)(\/.*)$/.exec(path);
  if (m) { token = m[1]; path = m[2]; } else {
    token = /^Bearer sk_test_(.+)$/.exec(req.headers.authorization ?? '')?.[1];
  }
  const dot = token?.indexOf('.') ?? -1;
  if (dot < 0) return null;
  return { kase: token.slice(0, dot), runId: token.slice(dot + 1), path, moved };
}

function sendJson(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Writes `parts` one per CHUNK_GAP_MS, recording send times; stops if the client goes. */
async function writeSlowly(res, run, parts) {
  run.writing = true;
  for (const part of parts) {
    if (run.clientGone) break;
    res.write(part);
    run.chunksSent += 1;
    run.lastChunkAt = now();
    run.firstChunkAt ??= run.lastChunkAt;
    await sleep(CHUNK_GAP_MS);
  }
  run.writing = false;
  res.end();
}

function drainOrClose(res) {
  return new Promise((resolve) => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function writeBig(res, run) {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG_BYTES });
  for (let sent = 0; sent < BIG_BYTES && !run.clientGone; sent += chunk.length) {
    if (!res.write(chunk)) await drainOrClose(res);
  }
  run.lastChunkAt = now();
  res.end();
}

async function readBody(req) {
  const parts = [];
  for await (const p of req) parts.push(p);
  return Buffer.concat(parts).toString('utf8');
}

async function handle(req, res, runs, seen) {
  // The Chromium page of hosts.mjs calls from another origin: every answer
  // allows any origin, and a preflight is answered here without counting as a
  // request of its run.
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', '*');
  if (req.method === 'OPTIONS') {
    seen.preflights += 1;
    res.writeHead(204, {
      'access-control-allow-methods': req.headers['access-control-request-method'] ?? 'GET',
      'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '',
    });
    return res.end();
  }
  const url = new URL(req.url, 'http://127.0.0.1');
  const body = await readBody(req);
  const info = parseRun(req, url);
  if (!info) return sendJson(res, 400, { error: { message: `no run in ${url.pathname}` } });
  const { kase, runId, path, moved } = info;
  let run = runs.get(runId);
  if (!run) {
    run = { kase, requests: [], firstChunkAt: null, lastChunkAt: null, chunksSent: 0, clientGone: false };
    runs.set(runId, run);
  }
  run.requests.push({ method: req.method, path: url.pathname, moved, idempotencyKey: req.headers['idempotency-key'] ?? null });
  res.on('close', () => { if (!res.writableFinished) run.clientGone = true; });
  const first = run.requests.length === 1;

  const route = routes[`${req.method} ${path}`];
  if (!route) return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
  if (route.form && !/application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? '')) {
    return sendJson(res, 400, { error: { message: 'expected a form body' } });
  }

  if (kase === '503' && first) return sendJson(res, 503, { error: { message: 'unavailable', type: 'overloaded_error' } });
  if (kase === '429' && first) {
    return sendJson(res, 429, { error: { message: 'slow down', type: 'rate_limit_error' } }, { 'retry-after': '1' });
  }
  if (kase === 'redirect' && !moved && req.method === 'POST') {
    res.writeHead(308, { location: `/_moved${url.pathname}${url.search}`, 'content-length': 0 });
    return res.end();
  }
  if ((kase === 'stream' || kase === 'abort') && (route.sse || route.download || route.words)) {
    const n = kase === 'stream' ? STREAM_CHUNKS : ABORT_CHUNKS;
    if (route.words) {
      res.writeHead(200, { 'content-type': TEXT_STREAM_TYPE });
      return writeSlowly(res, run, route.words(n));
    }
    if (route.sse) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      return writeSlowly(res, run, route.sse(n));
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    return writeSlowly(res, run, Array.from({ length: n }, () => Buffer.alloc(1024, 0x62)));
  }
  if (kase === 'big' && route.download) return writeBig(res, run);
  if (route.download) return sendJson(res, 400, { error: { message: `case ${kase} has no download` } });

  if (route.text) {
    const text = route.text();
    res.writeHead(route.status ?? 200, { 'content-type': TEXT_STREAM_TYPE, 'content-length': Buffer.byteLength(text) });
    return res.end(text);
  }
  const input = route.form ? new URLSearchParams(body) : body ? JSON.parse(body) : null;
  return sendJson(res, route.status ?? 200, route.doc(input));
}

/** Starts the fake on an ephemeral loopback port. */
export async function startFake() {
  const runs = new Map();
  const seen = { preflights: 0 };
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    handle(req, res, runs, seen).catch((err) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err) } });
      else res.destroy();
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    runs,
    seen,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
