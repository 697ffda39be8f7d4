// Deliberate differences whose exact shape is the policy's own (README,
// "Where policy.fetch differs from fetch"): each expectation takes the
// host's observation and pins everything else to it; only the fields the
// README gives to saferetry are taken from the policy's, and then checked.

const BROWSERS = ['chromium', 'firefox', 'webkit'];
const RETRY_MESSAGE = /^saferetry: .+ \((attempts-exhausted|maybe-delivered)\)$/;

const withoutCause = ({ hasCause: _h, cause: _c, isTheReason: _r, ...rest }) => rest;

/** README 1 and 4: a failure the runtime reports as a bare network error
 * (every browser failure; a refused connection) is retried when the method
 * allows it: the policy rejects with a RetryError whose cause is the host's
 * error, after `attempts` times the host's requests. */
export function retriedNetworkFailure(runtime, { attempts = 3, runtimes = BROWSERS } = {}) {
  if (!runtimes.includes(runtime)) return {};
  return {
    deliberate: {
      why: `the host reports this as a bare network failure (README, Where policy.fetch differs: 1 and 4): ${attempts > 1 ? `retried, ${attempts} attempts` : 'not retried'}, then a RetryError whose cause is the host's error`,
      expect: (h, p) => ({
        ...h,
        rejected: h.rejected && {
          ctor: 'RetryError', constructorIsTypeError: false, instanceOfTypeError: true, name: 'RetryError',
          message: RETRY_MESSAGE.test(p.rejected?.message ?? '') ? p.rejected.message : 'saferetry: … (attempts-exhausted or maybe-delivered)',
          code: null, hasCause: true, cause: withoutCause(h.rejected),
        },
        server: Array.from({ length: attempts }, () => h.server).flat(),
      }),
    },
  };
}

/** README 3: where saferetry follows redirects itself it stops where the
 * Fetch standard stops and the host's fetch does not: a TypeError of its own
 * after the first `sent` of the host's requests. */
export function standardStop(runtime, runtimes, sent, what) {
  if (!runtimes.includes(runtime)) return {};
  return {
    deliberate: {
      why: `saferetry follows redirects itself here, by the Fetch standard (README, Where policy.fetch differs: 3): ${what}`,
      expect: (h, p) => ({
        server: h.server.slice(0, sent),
        rejected: p.rejected?.constructorIsTypeError ? p.rejected : { constructorIsTypeError: true, note: 'a TypeError' },
      }),
    },
  };
}

/** README 3: where saferetry follows redirects itself, a redirect it
 * refuses (by the standard, as the host does) rejects with its own
 * `TypeError("fetch failed")` whose cause says why (undici's shape), not
 * in the runtime's words; the requests sent are the host's. Node's are
 * undici's own, so Node is never listed. */
export function ownRedirectError(runtime, runtimes, what) {
  if (!runtimes.includes(runtime)) return {};
  return {
    deliberate: {
      why: `saferetry follows redirects itself here (README, Where policy.fetch differs: 3): ${what}, a TypeError("fetch failed") whose cause says why, not in ${runtime}'s words`,
      expect: (h, p) => ({
        server: h.server,
        rejected: p.rejected?.constructorIsTypeError && p.rejected.message === 'fetch failed' && p.rejected.hasCause
          ? p.rejected : { constructorIsTypeError: true, message: 'fetch failed', note: 'with a cause' },
      }),
    },
  };
}
