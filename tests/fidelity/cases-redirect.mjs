// Redirects, as the Fetch standard's HTTP-redirect fetch steps follow them:
// method and body per status, the hop limit, Location forms, redirect modes,
// mode "same-origin", Origin/Referer/Authorization across origins, and the
// final url/redirected. What each hop received is in the server's record.
import { ALL_MODES, fromOrigin as callFromOrigin } from './harness.mjs';
import { ownRedirectError, retriedNetworkFailure, standardStop } from './deliberate.mjs';

// workerd's own fetch keeps Content-Type on a redirect that drops the body
// and Authorization on a hop to another origin; saferetry follows hops by
// hand there, by the Fetch standard (README, The rules): the second hop's
// record lacks those headers (from the record `fromHop` on).
function standardHop(runtime, names, what, fromHop = 1) {
  if (runtime !== 'workerd') return {};
  return {
    deliberate: {
      why: `in workerd saferetry follows redirects itself, by the Fetch standard, and drops ${what} where workerd's fetch keeps it`,
      expect: (h) => ({ ...h, server: h.server.map((r, i) => (i < fromHop ? r : { ...r, headers: r.headers.filter(([k]) => !names.includes(k)) })) }),
    },
  };
}

export function redirectCases({ add, runtime }) {
  const body = { method: 'POST', body: '{"n":1}', headers: { 'Content-Type': 'application/json', 'X-Test': 'r' } };
  const bodyDropped = standardHop(runtime, ['content-type'], 'Content-Type when the body is dropped');

  for (const status of [301, 302, 303, 307, 308]) {
    add(`A POST with a JSON body answered ${status} is re-sent as fetch re-sends it (method, body, Content-Type)`,
      (t) => t.fetch(t.u({ loc: t.path({ final: 1 }), status }), body), status < 307 ? bodyDropped : {});
  }
  add('A POST through a chain of 307, 308 and 303 is re-sent hop by hop as fetch re-sends it', (t) =>
    t.fetch(t.u({ status: 307, loc: t.path({ status: 308, loc: t.path({ status: 303, loc: t.path({ final: 1 }) }) }) }), body),
  standardHop(runtime, ['content-type'], 'Content-Type when the body is dropped', 3));
  add('A PUT answered 303 becomes a GET without body', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }), status: 303 }), { ...body, method: 'PUT' }), bodyDropped);
  add('A HEAD answered 303 stays a HEAD', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }), status: 303 }), { method: 'HEAD' }));
  add('A GET answered 301 stays a GET and keeps its headers', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }), status: 301 }), { headers: { 'X-Test': 'kept' } }));
  add('A 308 re-sends a Blob body', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }), status: 308 }), { method: 'PUT', body: new Blob(['blob'], { type: 'text/x-blob' }) }));
  add('A 307 re-sends a URLSearchParams body', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }), status: 307 }), { method: 'POST', body: new URLSearchParams({ q: 'v' }) }));
  add('A 307 of a Request object re-sends its body', (t) => t.fetch(new Request(t.u({ loc: t.path({ final: 1 }), status: 307 }), body)));
  add('20 redirects are followed: final url and redirected as with fetch', (t) => t.fetch(t.u({ hops: 20 })), { modes: ALL_MODES });
  add('20 redirects of 307 keep a POST body on every hop', (t) => t.fetch(t.u({ hops: 20, hs: 307 }), body));
  add('A relative Location (no leading slash) resolves as with fetch', (t) => t.fetch(t.u({ loc: `${t.id}?final=1` })));
  add('An absolute Location on the same origin', (t) => t.fetch(t.u({ loc: t.u({ final: 1 }) })));
  add('A Location with a fragment', (t) => t.fetch(t.u({ loc: `${t.path({ final: 1 })}#frag` })));
  add('An input URL fragment survives a redirect without one', (t) => t.fetch(`${t.u({ loc: t.path({ final: 1 }) })}#keep`));
  add('A protocol-relative Location', (t) => t.fetch(t.u({ loc: `//${new URL(t.alt).host}${t.path({ final: 1 })}` })));
  // An empty Location is the request's own URL (the standard): a loop that ends after 20 redirects.
  const emptyLocationLoops = (rt) => rt !== 'bun' ? {} : {
    deliberate: {
      why: "saferetry follows redirects itself here, by the Fetch standard (README, Where policy.fetch differs: 3): an empty Location is the same URL again, a loop refused after 20 redirects, where Bun's fetch answers the 302",
      expect: (h, p) => ({
        server: Array.from({ length: 21 }, () => h.server).flat(),
        rejected: p.rejected?.constructorIsTypeError ? p.rejected : { constructorIsTypeError: true, note: 'a TypeError' },
      }),
    },
  };
  add('An empty Location gets what fetch gives, never retried', (t) => t.fetch(t.u({ loc: '' })),
    { shape: true, ...retriedNetworkFailure(runtime, { runtimes: ['firefox', 'webkit'] }),
      ...emptyLocationLoops(runtime),
      ...ownRedirectError(runtime, ['deno'], 'the 21st redirect of the loop') });
  // Deno's fetch drops the body of a redirect status without Location; the standard hands the response over as it is.
  const keepsBody = runtime !== 'deno' ? {} : {
    deliberate: {
      why: "saferetry follows redirects itself here (README, Where policy.fetch differs: 3): a 3xx without Location keeps its body, which Deno's fetch drops",
      expect: (h, p) => ({ ...h, bodyNull: false, body: 'nowhere', bodyUsedAfter: p.bodyUsedAfter }),
    },
  };
  add('A 302 without Location is the response', (t) => t.fetch(t.u({ status: 302, body: 'nowhere' })), { modes: ALL_MODES, ...keepsBody });
  add('A 300 with Location is the response', (t) => t.fetch(t.u({ status: 300, loc: t.path({ final: 1 }) })));
  add('A 201 with Location is the response', (t) => t.fetch(t.u({ status: 201, loc: t.path({ final: 1 }) })));
  add('redirect: "manual" gives the redirect as fetch gives it', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }) }), { redirect: 'manual' }), { modes: ALL_MODES });
  add('redirect: "manual" on a cross-origin redirect', (t) => t.fetch(t.u({ loc: t.u({ final: 1 }, 'alt'), status: 307 }), { ...body, redirect: 'manual' }));
  add('A cross-origin redirect: type, url, redirected, Origin and Referer at each hop',
    (t) => t.fetch(t.u({ loc: t.u({ final: 1 }, 'alt'), status: 307 }), { ...body, referrerPolicy: 'unsafe-url' }), { modes: ALL_MODES });
  add('A redirect to another origin and back: Origin at each hop', (t) =>
    t.fetch(t.u({ loc: t.u({ loc: t.u({ final: 1 }), status: 307 }, 'alt'), status: 307 }), body));
  add('A same-origin redirect keeps Authorization', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }) }), { headers: { Authorization: 'Bearer same' } }));
  add('A cross-origin redirect drops Authorization, Cookie and Proxy-Authorization as fetch does', (t) => t.fetch(t.u({ loc: t.u({ final: 1 }, 'alt') }), {
    headers: { Authorization: 'Bearer cross', Cookie: 'c=1', 'Proxy-Authorization': 'Basic eA==', 'X-Test': 'stays' },
  }), standardHop(runtime, ['authorization', 'cookie', 'proxy-authorization'], 'Authorization, Cookie and Proxy-Authorization on a hop to another origin'));
  add('A GET redirected cross-origin with a custom header: preflight and request as with fetch', (t) =>
    t.fetch(t.u({ loc: t.u({ final: 1 }, 'alt') }), { headers: { 'X-Test': 'custom' } }));
  add('mode: "same-origin" redirected within the origin resolves', (t) => t.fetch(t.u({ loc: t.path({ final: 1 }) }), { mode: 'same-origin' }));
  add('mode: "cors" redirected cross-origin resolves as with fetch', (t) => t.fetch(t.u({ loc: t.u({ final: 1 }, 'alt') }), { mode: 'cors' }));
  add('mode: "no-cors" redirected cross-origin gives what fetch gives', (t) => t.fetch(t.u({ loc: t.u({ final: 1 }, 'alt') }), { mode: 'no-cors' }),
    runtime === 'node' ? { skip: "Node's own fetch never settles this call (both hops reach the server, no answer within 3 s)" } : {});
  // The referrer of each hop (Fetch: main fetch determines it again on every
  // hop, from the last hop's; HTTP-redirect fetch applies the redirect's
  // Referrer-Policy first). Only Node's fetch sends a Referer outside browsers.
  const referred = (t, params, policy, request = false) => {
    const url = t.u(params);
    const init = { referrer: t.u({ page: 1 }), ...(policy ? { referrerPolicy: policy } : {}) };
    return request ? t.fetch(new Request(url, init)) : t.fetch(url, init);
  };
  // Node's undici treats a no-referrer policy as its default and sends the referrer's origin.
  const undiciNoReferrer = runtime !== 'node' ? {} : {
    deliberate: {
      why: "saferetry follows redirects itself here, by the standard (README, Where policy.fetch differs: 3): a redirect's Referrer-Policy: no-referrer sends no Referer on the next hop, where Node's fetch sends the referrer's origin",
      expect: (h) => ({ ...h, server: h.server.map((r, i) => (i < 1 ? r : { ...r, headers: r.headers.filter(([k]) => k !== 'referer') })) }),
    },
  };
  add('A redirect\'s Referrer-Policy: origin applies to the next hop', (t) => referred(t, { loc: t.path({ final: 1 }), h: 'Referrer-Policy:origin' }, 'unsafe-url'));
  add('A redirect\'s Referrer-Policy: no-referrer stops the Referer on the next hop', (t) => referred(t, { loc: t.path({ final: 1 }), h: 'Referrer-Policy:no-referrer' }, 'unsafe-url'), undiciNoReferrer);
  add('A redirect\'s Referrer-Policy: same-origin sends no Referer to another origin', (t) => referred(t, { loc: t.u({ final: 1 }, 'alt'), h: 'Referrer-Policy:same-origin' }, 'unsafe-url'));
  add('A redirect\'s Referrer-Policy list applies its last valid token', (t) => referred(t, { loc: t.path({ final: 1 }), h: 'Referrer-Policy:no-referrer, origin, bogus' }, 'unsafe-url'));
  add('A referrer cut to its origin stays cut after a redirect\'s Referrer-Policy: unsafe-url', (t) => referred(t, { loc: t.path({ final: 1 }), h: 'Referrer-Policy:unsafe-url' }, 'origin'));
  add('The default referrer policy across origins, hop by hop', (t) => referred(t, { loc: t.u({ loc: t.u({ final: 1 }), status: 307 }, 'alt') }));
  add('A Request\'s referrer is the Referer of every hop', (t) => referred(t, { loc: t.path({ final: 1 }) }, 'unsafe-url', true));
  add('A Request\'s referrer policy applies on every hop', (t) => referred(t, { loc: t.u({ final: 1 }, 'alt') }, 'same-origin', true));
  // The Origin of a hop: Node's fetch has a caller origin only when undici's
  // global origin is set (as WPT's runner sets it); set here for both sides,
  // one after the other (serial). Deno with --location and a page have one.
  const fromOrigin = (t, url, init) => callFromOrigin(t, () => t.fetch(url, init));
  add('From the caller\'s origin, a GET redirected to another origin carries Origin on that hop',
    (t) => fromOrigin(t, t.u({ loc: t.u({ final: 1 }, 'alt') })), { serial: true });
  add('From the caller\'s origin, a POST answered 301 to another origin carries Origin on the GET hop',
    (t) => fromOrigin(t, t.u({ loc: t.u({ final: 1 }, 'alt'), status: 301 }), { method: 'POST', body: 'p' }), { serial: true, ...bodyDropped });
  // Node's undici does not implement the tainted origin flag.
  const undiciTainted = runtime !== 'node' ? {} : {
    deliberate: {
      why: "saferetry follows redirects itself here, by the standard (README, Where policy.fetch differs: 3): back at the caller's origin after another, a GET carries Origin: null (a tainted origin), where Node's fetch sends the caller's origin",
      // (The server echoes the Origin in Access-Control-Allow-Origin.)
      expect: (h) => ({ ...h, headers: h.headers.map(([k, v]) => [k, k === 'access-control-allow-origin' ? 'null' : v]),
        server: h.server.map((r, i) => (i < 2 ? r : { ...r, headers: r.headers.map(([k, v]) => [k, k === 'origin' ? 'null' : v]) })) }),
    },
  };
  add('From the caller\'s origin, a GET to another origin and back carries Origin: null on the way back',
    (t) => fromOrigin(t, t.u({ loc: t.u({ loc: t.u({ final: 1 }), status: 302 }, 'alt') })), { serial: true, ...undiciTainted });
  // Deno's fetch reads the Location bytes as Latin-1; the standard parses them as UTF-8.
  const denoLatin1 = runtime !== 'deno' ? {} : {
    deliberate: {
      why: "saferetry follows redirects itself here, by the standard (README, Where policy.fetch differs: 3): a Location's bytes are UTF-8, where Deno's fetch reads them as Latin-1",
      expect: (h, p) => ({ ...h, url: p.url, server: h.server.map((r, i) => (i < 1 ? r : { ...r, target: p.server[i]?.target })),
        ...(p.url?.endsWith('%E2%98%83') && p.server[1]?.target.endsWith('%E2%98%83') ? {} : { note: 'the UTF-8 snowman, %E2%98%83' }) }),
    },
  };
  add('A Location of raw UTF-8 bytes is read as UTF-8', (t) => t.fetch(t.u({ uloc: `${t.path({ final: 1 })}&s=\u2603` })), denoLatin1);
  // seq counts every request of the id: the first hop is the 1st.
  add('A redirect to a 503 that recovers: the caller sees the final 200', (t) => t.fetch(t.u({ loc: t.u({ seq: '302,503,200' }, 'alt') })), {
    deliberate: {
      why: 'the 503 after the hop is retried (from the first hop again where fetch follows, from the failed hop where saferetry follows by hand); the caller gets 200',
      // The server's records: a 503 and a 200 at the second origin, however the retry re-sent.
      expect: (h, p) => ({ ...h, status: 200, statusText: 'OK', ok: true,
        server: p.server.filter((r) => r.origin === 'alt').length === 2 ? p.server : h.server }),
    },
  });
}
