// Calls with a caller's origin (the main server's), as the Web Platform
// Tests make them: relative URLs, and requests whose mode or integrity the
// standard judges against that origin. Node has one when undici's global
// origin is set (as WPT's runner sets it; `fromOrigin` sets it per call,
// so these cases run their sides one after the other), Deno with
// `--location` (tests/runtimes/run.mjs runs the fidelity suite so), a
// browser page always; Bun and workerd have none: skipped there.
import { fromOrigin, hasCallerOrigin } from './harness.mjs';
import { retriedNetworkFailure } from './deliberate.mjs';

export function originCases({ add, runtime }) {
  const none = hasCallerOrigin(runtime) ? {} : { skip: `${runtime} has no caller's origin for relative URLs` };
  const add2 = (name, scenario, opts = {}) => add(`From a caller's origin, ${name}`, (t) => fromOrigin(t, () => scenario(t)), { serial: true, ...none, ...opts });
  const shape = { shape: true };
  // What a browser reports as a bare network failure is retried (README 4).
  const bare = { ...shape, ...retriedNetworkFailure(runtime) };
  // https: to the alt origin's plain-HTTP port: a TLS handshake that fails
  // (WPT's HTTPS origin where no TLS server answers as the test expects).
  const tlsAlt = (t, params) => t.u(params, 'alt').replace('http:', 'https:');

  add2('a relative URL gets what fetch gives', (t) => t.fetch(t.path({ body: 'relative' })));
  add2('a Request of a relative URL gets what fetch gives', (t) => t.fetch(new Request(t.path({ body: 'relative' }))));
  add2('a relative URL with a NUL byte in a header value fails as fetch fails, nothing sent',
    (t) => t.fetch(t.path(), { headers: { 'X-Test': 'a\u0000b' } }), shape);
  add2('a relative URL answered with a NUL byte in a header value fails as fetch fails, never retried',
    (t) => t.fetch(t.path({ nul: 1 })), bare);
  add2('a relative URL whose body does not match its integrity fails as fetch fails, never retried',
    (t) => t.fetch(t.path({ body: 'hello' }), { integrity: 'sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }), bare);
  add2('mode: "same-origin" to the same origin gets what fetch gives', (t) => t.fetch(t.path({ body: 'same' }), { mode: 'same-origin' }));
  add2('mode: "same-origin" to another origin gets what fetch gives, sent as often', (t) => t.fetch(t.u({}, 'alt'), { mode: 'same-origin' }), shape);
  // WPT mode-same-origin.any.js: the HTTPS origin. Refused by the standard
  // before anything is sent; outside browsers the host sends it and its TLS
  // handshake fails: not retried either way.
  add2('mode: "same-origin" to another scheme and port fails as fetch fails, never retried',
    (t) => t.fetch(tlsAlt(t, {}), { mode: 'same-origin' }), shape);
  add2('integrity with mode: "no-cors" to another origin gets what fetch gives, never retried',
    (t) => t.fetch(t.u({ body: 'ok' }, 'alt'), { mode: 'no-cors', integrity: 'sha256-Jok2eyBcFs4y7UIAlCuLix4mLfxw2byfvHfElpmk8d8=' }), shape);
  // WPT integrity.sub.any.js "SHA-* integrity for opaque response".
  add2('integrity with mode: "no-cors" to another scheme and port fails as fetch fails, never retried',
    (t) => t.fetch(tlsAlt(t, { body: 'ok' }), { mode: 'no-cors', integrity: 'sha512-D6yns0qxG0E7+TwkevZ4Jt5t7Iy3ugmAajG/dlf6Pado1JqTyneKXICDiqFIkLMRExgtvg8PlxbKTkYfRejSOg==' }), shape);
}
