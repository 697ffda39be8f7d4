// The Fetch standard's basic, request, response and body areas: what a
// caller sees of the Response and what the server receives, for ordinary
// calls. Response cases run with every responseBody mode.
import { ALL_MODES, sleep } from './harness.mjs';
import { describeError } from './observe.mjs';
import { retriedNetworkFailure } from './deliberate.mjs';

export function basicCases({ add, runtime }) {
  const modes = { modes: ALL_MODES };
  const text = (s) => new TextEncoder().encode(s);

  // ---- responses ----
  add('A GET answered 200 with a text body gives the same status, headers, url and body', (t) => t.fetch(t.u({ body: 'hello' })), modes);
  add('A JSON body reads the same', (t) => t.fetch(t.u({ ct: 'application/json', body: '{"a":[1,2]}' })), modes);
  add('A binary body (every byte value) reads the same', (t) => t.fetch(t.u({ ct: 'application/octet-stream', bin: 1 })), modes);
  add('A chunked body without Content-Length reads the same', (t) => t.fetch(t.u({ chunked: 1, body: 'first half, second half' })), modes);
  add('An empty 200 body reads the same', (t) => t.fetch(t.u({ body: '' })), modes);
  add('A response without Content-Type reads the same', (t) => t.fetch(t.u({ ct: 'none', body: 'untyped' })), modes);
  add('A 204 has a null body, as with fetch', (t) => t.fetch(t.u({ status: 204 })), modes);
  add('A HEAD answer has a null body, as with fetch', (t) => t.fetch(t.u({ body: 'unsent' }), { method: 'HEAD' }), modes);
  add('A 404 resolves with its status and body', (t) => t.fetch(t.u({ status: 404, body: 'no such thing' })), modes);
  add('A custom status text is kept', (t) => t.fetch(t.u({ status: 200, reason: 'Fine Thanks' })), modes);
  add('A 299 status with a custom reason is kept', (t) => t.fetch(t.u({ status: 299, reason: 'Odd But Fine' })));
  add('A 599 status is kept', (t) => t.fetch(t.u({ status: 599, reason: 'Weird' })));
  // A path no other request uses: a browser keeps the cookies and would send them.
  add('Two Set-Cookie headers are as visible as with fetch', (t) => t.fetch(t.u({ cookie: ['a=1; Path=/nowhere', 'b=2; Path=/nowhere'] })), modes);
  add('A header sent twice reads combined', (t) => t.fetch(t.u({ h: ['X-Test:one', 'X-Test:two'] })), modes);
  add('A cross-origin answer has the same type and headers as with fetch', (t) => t.fetch(t.u({ h: 'X-Test:cors', body: 'cross' }, 'alt')), modes);
  add('A URL fragment is not in response.url', (t) => t.fetch(`${t.u({ body: 'frag' })}#part`), modes);
  add('A URL object as input works as with fetch', (t) => t.fetch(new URL(t.u({ body: 'url object' }))));
  // WPT response-headers-guard.any.js: a Response fetch gives has immutable headers.
  const appendHeader = async (t, params) => {
    const res = await t.fetch(t.u(params));
    let appended;
    try {
      res.headers.append('x-added', 'by the caller');
      appended = 'appended';
    } catch (e) {
      appended = { threw: describeError(e) };
    }
    return { appended, has: res.headers.has('x-added'), body: await res.text() };
  };
  add('A response\'s headers cannot be appended to, as with fetch', (t) => appendHeader(t, { body: 'immutable' }), modes);
  add('A streamed text\'s headers cannot be appended to, as with fetch', (t) => appendHeader(t, { drip: 400 }));
  // WPT error-after-response.any.js: a text whose chunked encoding breaks
  // after its first chunk, 500 ms apart (handed over by auto before it
  // breaks): the caller's reader gets the chunk, then the error, and a
  // caller waiting on `closed` alone sees it too.
  const brokenAfter = (wait) => async (t) => {
    const res = await t.fetch(t.u({ badchunk: 500 }));
    const reader = res.body.getReader();
    const first = await reader.read();
    const out = { status: res.status, first: first.done ? 'done' : new TextDecoder().decode(first.value) };
    const settled = (p) => Promise.race([
      p.then((v) => ({ resolved: v?.done ?? String(v) }), (e) => ({ rejected: describeError(e) })),
      sleep(3000).then(() => 'still pending after 3 s'),
    ]);
    return { ...out, [wait]: await settled(wait === 'read' ? reader.read() : reader.closed) };
  };
  // ("buffer" reads the body inside the attempt: a broken one is a failed attempt, retried.)
  add('A body that breaks after its first chunk fails the next read as with fetch', brokenAfter('read'), { modes: ['default', 'stream'] });
  add('A body that breaks after its first chunk rejects reader.closed as with fetch', brokenAfter('closed'), { modes: ['default', 'stream'] });
  // Each once without a signal and once under a caller's (a buffered
  // response then answers its whole-body reads from its bytes:
  // js/src/attempts.js `SignalledResponse`).
  const signals = [['', () => undefined], [', under a caller\'s signal', () => ({ signal: new AbortController().signal })]];
  for (const [under, init] of signals) {
    add(`bodyUsed and a second read behave as with fetch${under}`, async (t) => {
      const res = await t.fetch(t.u({ body: 'once' }), init());
      const first = await res.text();
      let second;
      try { second = await res.text(); } catch (e) { second = { rejected: describeError(e) }; }
      return { first, second, bodyUsed: res.bodyUsed };
    }, modes);
  }
  const cloneTwice = async (t) => {
    const res = await t.fetch(t.u({ body: 'twice' }));
    const copy = res.clone();
    return { a: await res.text(), b: await copy.text(), type: copy.type, url: copy.url, status: copy.status };
  };
  add('clone() gives two readable copies', cloneTwice, { modes: ['stream'] });
  add('clone() gives two readable copies', cloneTwice, {
    modes: ['default', 'buffer'],
    deliberate: {
      why: 'the clone of a buffered response is a plain constructed Response (README, Where policy.fetch differs: 2)',
      expect: (h) => ({ ...h, type: 'default', url: '' }),
    },
  });
  for (const [under, init] of signals) {
    add(`json(), blob() and the body stream read as with fetch${under}`, async (t) => {
      const [a, b, c] = await Promise.all([0, 1, 2].map(() => t.fetch(t.u({ ct: 'application/json', body: '{"x":1}' }), init())));
      const blob = await b.blob();
      const reader = c.body.getReader();
      let bytes = 0;
      for (let i = 0; i < 1000; i++) { const { done, value } = await reader.read(); if (done) break; bytes += value.length; }
      return { json: await a.json(), blobType: blob.type, blobSize: blob.size, streamBytes: bytes };
    }, modes);
    // Dropped by text() in most hosts, kept by workerd's.
    add(`A UTF-8 byte order mark reads as with fetch, as text and as bytes${under}`, async (t) => {
      const res = await t.fetch(t.u({ body: '\uFEFFbom first' }), init());
      return { text: await res.text(), bytes: (await (await t.fetch(t.u({ body: '\uFEFFbom first' }), init())).arrayBuffer()).byteLength };
    }, modes);
    add(`A body that is not UTF-8 reads as text as with fetch${under}`, async (t) => {
      const res = await t.fetch(t.u({ ct: 'application/octet-stream', bin: 1 }), init());
      return { text: await res.text() };
    }, modes);
  }
  // Chromium words the parse error of a constructed Response's json() with a prefix.
  const chromiumJson = runtime !== 'chromium' ? {} : {
    deliberate: {
      why: "a buffered body is a new Response's (README, Where policy.fetch differs: 2): Chromium prefixes its json() parse error with \"Failed to execute 'json' on 'Response': \"",
      expect: (h) => ({ ...h, jsonRejected: { ...h.jsonRejected, message: `Failed to execute 'json' on 'Response': ${h.jsonRejected?.message}` } }),
    },
  };
  const jsonParseError = (init) => async (t) => {
    const res = await t.fetch(t.u({ ct: 'application/json', body: '{oops' }), init());
    try { return { value: await res.json() }; } catch (e) { return { jsonRejected: describeError(e) }; }
  };
  for (const [under, init] of signals) {
    add(`A JSON parse error rejects as with fetch${under}`, jsonParseError(init), { modes: ['stream'] });
    add(`A JSON parse error rejects as with fetch${under}`, jsonParseError(init), { modes: ['default', 'buffer'], ...chromiumJson });
  }
  add('A 500 is retried: the caller gets the final 500, the server three requests', (t) => t.fetch(t.u({ status: 500, body: 'down' })), {
    deliberate: {
      why: 'a 500 to an idempotent GET is retried (maxAttempts 3); the caller gets the last answer, the server counts three requests',
      expect: (h) => ({ ...h, server: [h.server[0], h.server[0], h.server[0]] }),
    },
  });
  add('A 503 then 200: fetch answers 503, policy.fetch 200 after a retry', (t) => t.fetch(t.u({ seq: '503,200' })), {
    deliberate: {
      why: 'a 503 to a GET is retried; the retry answers 200',
      expect: (h) => ({ ...h, status: 200, statusText: 'OK', ok: true, server: [h.server[0], h.server[0]] }),
    },
  });
  add('A POST answered 503 is not retried without an idempotency key', (t) => t.fetch(t.u({ status: 503 }), { method: 'POST', body: 'once' }));

  // ---- requests: what the server receives ----
  add('A POST with a string body sends the same method, headers and body', (t) => t.fetch(t.u(), { method: 'POST', body: 'a string' }));
  add('A lowercase method "post" is normalised, "patch" is not', async (t) => {
    const a = await t.fetch(t.u({ n: 1 }), { method: 'post', body: 'x' });
    const b = await t.fetch(t.u({ n: 2 }), { method: 'patch', body: 'y' });
    return { a: a.status, b: b.status };
  });
  add('PUT, DELETE and OPTIONS are sent as is', async (t) => {
    const out = [];
    for (const method of ['PUT', 'DELETE', 'OPTIONS']) out.push((await t.fetch(t.u({ m: method }), { method, body: method === 'PUT' ? 'put' : undefined })).status);
    return { out };
  });
  add('A URLSearchParams body is sent form-encoded', (t) => t.fetch(t.u(), { method: 'POST', body: new URLSearchParams({ a: '1', b: 'two words' }) }));
  add('A FormData body is sent as multipart', (t) => {
    const f = new FormData();
    f.append('field', 'value');
    f.append('file', new Blob(['contents'], { type: 'text/plain' }), 'a.txt');
    return t.fetch(t.u(), { method: 'POST', body: f });
  });
  add('A Blob body sends its type as Content-Type', (t) => t.fetch(t.u(), { method: 'POST', body: new Blob(['blob body'], { type: 'application/x-test' }) }));
  add('An ArrayBuffer and a Uint8Array body are sent as bytes', async (t) => {
    await t.fetch(t.u({ n: 1 }), { method: 'POST', body: text('array buffer').buffer });
    return t.fetch(t.u({ n: 2 }), { method: 'PUT', body: text('typed array') });
  });
  add('Request headers are sent as given', (t) => t.fetch(t.u({}, 'alt'), { headers: { 'X-Test': 'v', Accept: 'application/json', 'Content-Language': 'fr' } }));
  add('Headers given as a Headers object and as pairs are sent the same', async (t) => {
    await t.fetch(t.u({ n: 1 }), { headers: new Headers({ 'X-Test': 'object', Accept: 'text/plain' }) });
    return t.fetch(t.u({ n: 2 }), { headers: [['X-Test', 'one'], ['X-Test', 'two']] });
  });
  add('Headers the standard forbids (Accept-Charset, Date, Origin, Referer, Via, Host) are treated as fetch treats them', (t) =>
    t.fetch(t.u(), { headers: { 'Accept-Charset': 'utf-8', Date: 'Tue, 01 Dec 2026 00:00:00 GMT', Origin: 'http://elsewhere.test', Referer: 'http://elsewhere.test/', Via: '1.1 proxy', Host: 'elsewhere.test' } }));
  add('A Request object with method, headers and body is sent the same', (t) =>
    t.fetch(new Request(t.u(), { method: 'POST', body: 'from a Request', headers: { 'Content-Type': 'application/json', 'X-Test': 'req' } })));
  add('A Request object plus init: init wins', (t) =>
    t.fetch(new Request(t.u(), { method: 'POST', body: 'old', headers: { 'X-Test': 'old' } }), { method: 'PUT', body: 'new', headers: { 'X-Test': 'new' } }));
  add('A used Request body rejects as with fetch', async (t) => {
    const req = new Request(t.u(), { method: 'POST', body: 'spent' });
    await req.text();
    return t.fetch(req);
  });
  // Chromium refuses a streamed upload over HTTP/1.1 with its bare network TypeError.
  add('A ReadableStream body with duplex: "half" is sent (or refused) as with fetch', (t) => t.fetch(t.u(), {
    method: 'POST', duplex: 'half',
    body: new ReadableStream({ start(c) { c.enqueue(text('streamed ')); c.enqueue(text('body')); c.close(); } }),
  }), retriedNetworkFailure(runtime, { attempts: 1, runtimes: ['chromium'] }));
  add('cache: "no-store" and credentials: "omit" are accepted', (t) => t.fetch(t.u({ body: 'opts' }), { cache: 'no-store', credentials: 'omit' }));
  add('mode: "no-cors" to another origin gives what fetch gives', (t) => t.fetch(t.u({ body: 'opaque' }, 'alt'), { mode: 'no-cors' }));
  add('A cross-origin PUT with a custom header sends the same preflight and request', (t) =>
    t.fetch(t.u({}, 'alt'), { method: 'PUT', body: 'p', headers: { 'X-Test': 'preflight' } }));
  add('referrerPolicy "no-referrer" sends no Referer', (t) => t.fetch(t.u(), { referrerPolicy: 'no-referrer' }));
  add('keepalive: true with a small body is sent as with fetch', (t) => t.fetch(t.u(), { method: 'POST', body: 'k', keepalive: true }));
}
