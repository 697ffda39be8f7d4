// Abort: an already-aborted signal, an abort while waiting for headers or
// while reading the body, custom reasons, AbortSignal.timeout, and body reads
// after the caller's signal aborted. The rejection must be the caller's
// reason itself (`isTheReason`), as with fetch, and come within
// TIMING_SLACK_MS of fetch's (`ms`: from the abort to the rejection).
import { ALL_MODES, sleep } from './harness.mjs';
import { describeError } from './observe.mjs';

const READERS = ['text', 'arrayBuffer', 'json', 'blob'];
// Hosts whose fetch leaves the body stream of an already-aborted call
// uncancelled (measured by this suite; the standard cancels it).
const NOT_CANCELLED = ['workerd', 'chromium', 'webkit'];
// Hosts whose fetch does not reject an in-flight abort with the caller's
// reason itself (measured by this suite).
const REASON_NOT_ITSELF = {
  workerd: "workerd's fetch rejects with a copy of the caller's reason",
  webkit: "WebKit's fetch rejects with its own AbortError (a TimeoutError too)",
};

// Settles `promise` as data: what it resolved with, or its rejection
// (checked against the caller's reason, `t.reason`, whose own shape is
// `reason`), with `ms` since `from`.
async function settle(t, promise, from, onValue = (v) => t.describe(v, { read: 'none' })) {
  try {
    const v = await promise;
    return { resolved: await onValue(v) };
  } catch (e) {
    return { rejected: describeError(e, t.reason), reason: describeError(t.reason, t.reason), ...(from ? { ms: Date.now() - from } : {}) };
  }
}

// Starts `call(signal, headersIn)`, aborts with `reason` after `afterMs`,
// and settles it; `headersIn()` marks that the fetch call had resolved.
async function abortLater(t, call, afterMs, reason, onValue) {
  const ctl = new AbortController();
  let resolved = false;
  const p = call(ctl.signal, () => { resolved = true; });
  p.catch(() => {}); // settled below; no unhandled rejection meanwhile
  await sleep(afterMs);
  const from = Date.now();
  const fetchResolvedBeforeAbort = resolved;
  ctl.abort(reason);
  t.reason = ctl.signal.reason;
  return { fetchResolvedBeforeAbort, ...(await settle(t, p, from, onValue)) };
}

// fetch, then read the whole body: the abort cases' call.
const fetchThenRead = (t, url, read) => (signal, headersIn) => t.fetch(url, { signal })
  .then((res) => { headersIn(); return res[read](); })
  .then(() => 'read to the end');

function aborted(t, reason) {
  const ctl = new AbortController();
  ctl.abort(...reason);
  t.reason = ctl.signal.reason;
  return ctl.signal;
}

export function abortCases({ add, runtime }) {
  // An in-flight abort where the host does not reject with the reason itself:
  // the policy does (README: "rejects … with the caller's abort reason").
  const reasonItself = () => (REASON_NOT_ITSELF[runtime] ? {
    deliberate: {
      why: `policy.fetch rejects with the caller's abort reason itself (README, Where policy.fetch differs: 5), where ${REASON_NOT_ITSELF[runtime]}`,
      expect: (h) => ({ ...h, rejected: h.reason }),
    },
  } : {});
  const reasons = [
    ['no reason (an AbortError)', []],
    ['a string reason', ['stop here']],
    ['an Error reason', [new Error('custom reason')]],
    ['undefined as reason', [undefined]],
  ];
  for (const [label, reason] of reasons) {
    add(`An already-aborted signal with ${label} rejects with that reason and sends nothing`, (t) => settle(t, t.fetch(t.u(), { signal: aborted(t, reason) })));
  }
  add('An already-aborted signal rejects before the next microtask, as with fetch', async (t) => {
    const log = [];
    const p = t.fetch(t.u(), { signal: aborted(t, []) }).then(() => log.push('resolved'), () => log.push('rejected'));
    await Promise.all([p, Promise.resolve().then(() => log.push('next microtask'))]);
    return { log };
  });
  add('An already-aborted signal on a Request object rejects with its reason', (t) => settle(t, t.fetch(new Request(t.u(), { signal: aborted(t, []) }))));
  // fetch builds the Request first: its TypeError wins over the abort (WPT
  // abort/general.any.js "TypeError from request constructor takes priority").
  const invalid = [
    ['an invalid URL', () => 'http://[bad/', {}],
    ['a URL with credentials', (t) => t.u().replace('http://', 'http://user:pass@'), {}],
    ['mode "navigate"', (t) => t.u(), { mode: 'navigate' }],
    ['an invalid referrer', (t) => t.u(), { referrer: 'http://:not-valid' }],
    ['a method that is not a token', (t) => t.u(), { method: 'BAD METHOD' }],
    ['a forbidden method', (t) => t.u(), { method: 'TRACE' }],
    ['mode "no-cors" with a PUT', (t) => t.u(), { mode: 'no-cors', method: 'PUT' }],
    ['cache "only-if-cached" with mode "cors"', (t) => t.u(), { cache: 'only-if-cached', mode: 'cors' }],
    ['cache "only-if-cached" with mode "no-cors"', (t) => t.u(), { cache: 'only-if-cached', mode: 'no-cors' }],
    ['a bad referrerPolicy', (t) => t.u(), { referrerPolicy: 'bogus' }],
    ['a bad mode', (t) => t.u(), { mode: 'bogus' }],
    ['a bad credentials', (t) => t.u(), { credentials: 'bogus' }],
    ['a bad cache', (t) => t.u(), { cache: 'bogus' }],
    ['a bad redirect', (t) => t.u(), { redirect: 'bogus' }],
    ['a header value with a NUL byte', (t) => t.u(), { headers: { 'X-Test': 'a\u0000b' } }],
  ];
  for (const [label, url, init] of invalid) {
    add(`An already-aborted signal with ${label} rejects as fetch does (the Request constructor's TypeError first)`,
      (t) => settle(t, t.fetch(url(t), { ...init, signal: aborted(t, []) })));
  }
  add('signal: null drops an aborted signal of the Request input, as with fetch',
    (t) => t.fetch(new Request(t.u(), { signal: aborted(t, []) }), { signal: null }));
  add('A Request\'s body is taken at the call: bodyUsed at once, a later read rejects, as with fetch', async (t) => {
    const request = new Request(t.u(), { method: 'POST', body: 'taken' });
    const p = t.fetch(request);
    const usedAtCall = request.bodyUsed;
    const later = await request.text().then(() => 'read', (e) => e.constructor.name);
    return { usedAtCall, later, response: await t.describe(await p) };
  });
  add('A Request\'s body is taken at the call even with an aborted signal', async (t) => {
    const request = new Request(t.u(), { method: 'POST', body: 'taken', signal: aborted(t, []) });
    const p = t.fetch(request);
    const usedAtCall = request.bodyUsed;
    return { usedAtCall, ...(await settle(t, p)) };
  });
  add('A body stream of an already-aborted call is cancelled at once with the reason, as with fetch', async (t) => {
    let cancelled = 'not cancelled';
    const body = new ReadableStream({
      pull(c) { c.enqueue(new TextEncoder().encode('x')); },
      cancel(reason) { cancelled = reason; },
    });
    const p = t.fetch(t.u(), { method: 'POST', body, duplex: 'half', signal: aborted(t, []) });
    const atCall = cancelled === t.reason ? 'the reason' : typeof cancelled === 'string' ? cancelled : describeError(cancelled, t.reason);
    return { atCall, ...(await settle(t, p)) };
  }, NOT_CANCELLED.includes(runtime) ? {
    deliberate: {
      why: "policy.fetch cancels the body as the Fetch standard's \"abort the fetch() call\" says (README, Where policy.fetch differs: 5), where this runtime's fetch leaves it uncancelled",
      expect: (h) => ({ ...h, atCall: 'the reason' }),
    },
  } : {});
  add('An already-aborted POST with a body sends nothing', (t) => settle(t, t.fetch(t.u(), { method: 'POST', body: 'never', signal: aborted(t, []) })));
  add('An abort while waiting for headers rejects as fetch rejects, as soon as fetch does',
    (t) => abortLater(t, (signal) => t.fetch(t.u({ delay: 1500 }), { signal }), 150), reasonItself());
  add('An abort with an Error reason while waiting for headers rejects as fetch rejects',
    (t) => abortLater(t, (signal) => t.fetch(t.u({ delay: 1500 }), { signal }), 150, new Error('mine')), reasonItself());
  add('An abort while a POST waits for headers rejects as fetch rejects, the POST sent once',
    (t) => abortLater(t, (signal) => t.fetch(t.u({ delay: 1500 }), { method: 'POST', body: 'p', signal }), 150), reasonItself());
  add('An abort during a redirect chain rejects as fetch rejects',
    (t) => abortLater(t, (signal) => t.fetch(t.u({ loc: t.path({ delay: 1500 }) }), { signal }), 150), reasonItself());
  add('AbortSignal.timeout while waiting for headers rejects as fetch rejects', async (t) => {
    const signal = AbortSignal.timeout(150);
    const from = Date.now();
    const r = await settle(t, t.fetch(t.u({ delay: 1500 }), { signal }).catch((e) => { t.reason = signal.reason; throw e; }));
    return { ...r, ms: Math.max(0, Date.now() - from - 150) };
  }, reasonItself());
  // The host's own streamed Response: its read rejects as fetch's own does
  // (in WebKit, with its AbortError: its body stream is not asked for, see
  // src/policy/runtime.rs `body_known`).
  add('An abort during a streamed (octet-stream) body read rejects the read with the reason',
    (t) => abortLater(t, fetchThenRead(t, t.u({ ct: 'application/octet-stream', drip: 3000 }), 'arrayBuffer'), 300, undefined, (v) => v),
    { modes: ['default', 'stream'] });
  add('An abort during a text body read rejects the read with the reason',
    (t) => abortLater(t, fetchThenRead(t, t.u({ ct: 'text/plain', drip: 3000 }), 'text'), 300, undefined, (v) => v), { modes: ['stream'] });
  // In auto a text body still arriving 250 ms after its headers is handed
  // over (README, Response bodies): the abort at 1 s finds it streaming, in
  // a Response around what auto read plus the rest.
  const handedOver = {
    chromium: {
      why: "a text body auto handed over is a Response built around a stream (README, Where policy.fetch differs: 2): Chromium's text() rejects a stream that errors with TypeError \"Failed to fetch\", not the abort reason (a reader gets the reason)",
      expect: (h) => ({ ...h, rejected: { ctor: 'TypeError', constructorIsTypeError: true, instanceOfTypeError: true, name: 'TypeError', message: 'Failed to fetch', code: null, isTheReason: false, hasCause: false } }),
    },
    webkit: {
      why: "a text body auto handed over is a Response built around a stream of ours over the host's body stream (README, Where policy.fetch differs: 2): WebKit then rejects the read with TypeError \"AbortError: Fetch is aborted\" instead of its AbortError",
      expect: (h) => ({ ...h, rejected: { ...h.rejected, ctor: 'TypeError', constructorIsTypeError: true, instanceOfTypeError: true, name: 'TypeError', message: `AbortError: ${h.rejected?.message}`, code: null } }),
    },
  }[runtime];
  add('An abort during a text body read that auto handed over rejects the read with the reason',
    (t) => abortLater(t, fetchThenRead(t, t.u({ ct: 'text/plain', drip: 3000 }), 'text'), 1000, undefined, (v) => v), { modes: ['default'], ...(handedOver && { deliberate: handedOver }) });
  // The same with the abort landing between two reads (no read pending, a
  // chunk just in): the next read still fails as the host's own read does.
  add('An abort between two reads of a body that auto handed over fails the next read as fetch does', async (t) => {
    const ctl = new AbortController();
    const res = await t.fetch(t.u({ ct: 'text/plain', drip: 3000 }), { signal: ctl.signal });
    const reader = res.body.getReader();
    const from = Date.now();
    while (Date.now() - from < 400) if ((await reader.read()).done) return 'ended';
    ctl.abort();
    t.reason = ctl.signal.reason;
    return settle(t, reader.read(), null, (v) => ({ done: v.done }));
  }, { modes: ['default'] });
  // The policy's rejection is then that of an in-flight call: the reason itself
  // (the host's body-read rejection is a copy in Firefox, workerd and WebKit).
  add('An abort during a text body that the policy buffers rejects the fetch call itself, with the reason',
    (t) => abortLater(t, fetchThenRead(t, t.u({ ct: 'text/plain', drip: 3000 }), 'text'), 300, undefined, (v) => v), {
      modes: ['buffer'],
      deliberate: {
        why: 'a buffered document is read inside the attempt (README, Response bodies): the abort comes before policy.fetch resolved, which rejects with the caller\'s reason',
        expect: (h) => ({ ...h, fetchResolvedBeforeAbort: false, rejected: h.reason }),
      },
    });
  add('An abort during a body read through a reader: read() rejects with the reason', (t) => abortLater(t, async (signal, headersIn) => {
    const res = await t.fetch(t.u({ ct: 'application/octet-stream', drip: 3000 }), { signal });
    headersIn();
    const reader = res.body.getReader();
    for (let i = 0; i < 1000; i++) if ((await reader.read()).done) return 'ended';
    return 'still reading';
  }, 200, undefined, (v) => v), { modes: ['default', 'stream'] });
  // A buffered body read after the abort rejects with the reason itself
  // (README, Where policy.fetch differs: 2), where workerd and WebKit's own
  // reads reject with a copy or their own AbortError; streamed, it is the host's.
  const bufferedRead = { modes: ['default', 'buffer'], ...reasonItself() };
  for (const read of READERS) {
    const readAfterAbort = async (t) => {
      const ctl = new AbortController();
      const res = await t.fetch(t.u({ ct: 'application/json', body: '{"done":true}' }), { signal: ctl.signal });
      ctl.abort();
      t.reason = ctl.signal.reason;
      return settle(t, res[read](), null, (v) => (v instanceof Blob ? { size: v.size } : v instanceof ArrayBuffer ? { bytes: v.byteLength } : v));
    };
    add(`response.${read}() after the caller's signal aborted rejects with the reason`, readAfterAbort, { modes: ['stream'] });
    add(`response.${read}() after the caller's signal aborted rejects with the reason`, readAfterAbort, bufferedRead);
  }
  add('An abort after the body was read changes nothing', async (t) => {
    const ctl = new AbortController();
    const res = await t.fetch(t.u({ body: 'complete' }), { signal: ctl.signal });
    const text = await res.text();
    ctl.abort();
    return { text, bodyUsed: res.bodyUsed };
  }, { modes: ALL_MODES });
  const emptyAfterAbort = async (t) => {
    const ctl = new AbortController();
    const res = await t.fetch(t.u({ body: '' }), { signal: ctl.signal });
    const reader = res.body?.getReader();
    await sleep(50); // the empty body has surely ended (WebKit races otherwise)
    ctl.abort();
    t.reason = ctl.signal.reason;
    return reader ? settle(t, reader.read(), null, (r) => ({ done: r.done })) : { body: null };
  };
  // An empty body (Content-Length: 0) is the host's own in auto: nothing to read inside the attempt.
  add('A read of an empty body whose signal aborted settles as with fetch', emptyAfterAbort, { modes: ['default', 'stream'] });
  // WPT abort/general.any.js "Stream will not error if body is empty": the
  // reader taken, the abort at once, then the read.
  const emptyAbortAtOnce = async (t) => {
    const ctl = new AbortController();
    const res = await t.fetch(t.u({ body: '' }), { signal: ctl.signal });
    const reader = res.body?.getReader();
    ctl.abort();
    t.reason = ctl.signal.reason;
    return reader ? settle(t, reader.read(), null, (r) => ({ done: r.done })) : { body: null };
  };
  add('A reader of an empty body taken before the abort reads as with fetch', emptyAbortAtOnce, {
    modes: ['default', 'stream'],
    // Measured on plain fetch, run after run: done or WebKit's AbortError, as its empty body ended first or not.
    ...(runtime === 'webkit' ? { skip: "WebKit's own empty body races the abort (done or its AbortError, plain fetch against itself)" } : {}),
  });
  // workerd's own read rejects with a copy of the reason (the only host here that rejects with neither it nor done);
  // Chromium's and WebKit's empty body has ended, so their read is done, where the buffered one fails as Firefox's does.
  const endedEmpty = { chromium: 'Chromium', webkit: 'WebKit' }[runtime];
  const emptyBuffered = runtime === 'workerd' ? reasonItself() : !endedEmpty ? {} : {
    deliberate: {
      why: `a buffered body is a new Response's (README, Where policy.fetch differs: 2): read after the abort it fails with the reason, where ${endedEmpty}'s own empty body has already ended`,
      expect: (h, p) => ({ ...h, resolved: undefined, rejected: p.rejected?.isTheReason ? p.rejected : 'the reason itself', reason: p.reason }),
    },
  };
  add('A read of an empty body whose signal aborted settles as with fetch', emptyAfterAbort,
    { modes: ['buffer'], ...emptyBuffered });
}
