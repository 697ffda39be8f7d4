// A call's request made ready to send (src/host/attempt/request.rs `prepare`): the
// steps `fetch(input, init)` itself takes before it sends — the headers it
// copies, the Request it builds, the body it takes — performed in one
// crossing. Whether to take each step, what is refused, the key, and what
// the facts read here mean are decided in Rust.

/** `object[key]`, `undefined` when it throws (a fake host object). */
export function read(object, key) {
  try {
    return object[key];
  } catch {
    return undefined;
  }
}

// Where Node's fetch keeps the caller's origin (undici's `setGlobalOrigin`,
// as the Web Platform Tests' runner sets it): a URL.
const UNDICI_ORIGIN = Symbol.for("undici.globalOrigin.1");

/** The caller's environment, a URL that relative URLs resolve against and
 * `fetch` calls from: undici's global origin in Node, `location` in a page,
 * a worker and Deno with `--location`; none elsewhere. */
export function callerLocation() {
  return [read(globalThis, UNDICI_ORIGIN), read(globalThis, "location")].find((v) => typeof read(v, "href") === "string");
}

/** The caller's Request, once a Request was built from it: a runtime whose
 * constructor copies the body (Bun) leaves it unused; `fetch` would not. */
function usedUp(request) {
  if (!request.bodyUsed) request.body?.cancel();
}

/** A Request sent with an `init` loses its referrer and referrer policy
 * (the constructor resets both when `init` is not empty): `init` carries
 * the Request's own unless it has its own. (workerd's Request has neither.) */
function keepReferrer(init, request) {
  const referrer = read(request, "referrer");
  if (typeof referrer === "string" && init.referrer === undefined) init.referrer = referrer;
  const policy = read(request, "referrerPolicy");
  if (typeof policy === "string" && init.referrerPolicy === undefined) init.referrerPolicy = policy;
}

/** A call (`c`, js/src/attempts.js) whose signal had aborted before it
 * (the Fetch standard's "abort the fetch() call"): its Request, built
 * first (an invalid `init` throws the constructor's `TypeError`, not the
 * abort), with its body cancelled at once with the abort's reason; a
 * Request input's body is taken. The call sends it, with no `init`. */
export function abortBefore(c, isRequest) {
  const built = new Request(c.input, c.init);
  built.body?.cancel(c.caller.reason);
  if (isRequest) usedUp(c.input);
  c.input = built;
  c.init = {};
}

/** A Request's `body` as the machine reads it: 0 none, 1 a stream, 2 not
 * shown (Firefox's Request has no `body` property). */
export function bodyOf(request) {
  const body = read(request, "body");
  return body === undefined ? 2 : body instanceof ReadableStream ? 1 : 0;
}

/** Each step of call `c` (js/src/attempts.js) as Rust asked: `headers`
 * (0: none, 1: a copy of `init.headers`, 2: a copy of the Request's, 3:
 * new ones), `key` (a string to set as `Idempotency-Key` on that copy,
 * which `init` then sends), `fate` (read what says whether the request
 * fails whatever the network does), `fold` (build the Request each attempt
 * clones, taking the caller's body). The call's `input` and `init` are
 * then what each attempt sends. Answers `[hasKey, integrity, crossOrigin,
 * refused, body]`: `refused` is the Request constructor's error (the call
 * is then what `fetch` is to be asked with); `body`, the Request's
 * (`bodyOf`). A key `Headers` refuses throws. */
export function prepare(c, isRequest, headers, key, fate, fold, url) {
  const answer = (...facts) => {
    c.input = input;
    c.init = own;
    return [...facts, isRequest ? bodyOf(input) : 0];
  };
  let { input, init: own } = c;
  let sent = isRequest ? input.headers : undefined;
  if (headers) {
    let copy;
    try {
      const source = headers === 1 ? own.headers : headers === 2 ? input.headers : undefined;
      copy = source === undefined ? new Headers() : new Headers(source);
    } catch {
      copy = undefined;
    }
    if (copy && key !== undefined) {
      copy.set("Idempotency-Key", key);
      own.headers = copy;
    }
    sent = copy;
  }
  let hasKey = false;
  try {
    hasKey = sent?.has("Idempotency-Key") ?? false;
  } catch {
    // A fake `Headers`: no key.
  }
  let integrity = false;
  let crossOrigin;
  if (fate) {
    const given = [own.integrity, isRequest ? read(input, "integrity") : undefined].find((v) => v !== undefined);
    integrity = typeof given === "string" && given !== "";
    const origin = read(callerLocation(), "origin");
    if (typeof origin === "string") {
      try {
        crossOrigin = new URL(url, origin).origin !== origin;
      } catch {
        crossOrigin = true;
      }
    }
  }
  if (fold) {
    keepReferrer(own, input);
    let built;
    try {
      built = new Request(input, own);
    } catch (refused) {
      return answer(hasKey, integrity, crossOrigin, refused);
    }
    usedUp(input);
    input = built;
    own = {};
  }
  if (isRequest) keepReferrer(own, input);
  return answer(hasKey, integrity, crossOrigin, undefined);
}
