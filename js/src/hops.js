// The redirect hops saferetry follows itself (Node, Deno, Bun, workerd with
// `redirect` unset or "follow": src/policy/redirect.rs `follower`), hop by
// hop, so a failure knows which hop it happened on. This file performs each
// hop; the chain (src/host/operation/chain.rs over src/policy/chain.rs) decides what a
// response means and what the next hop sends. It branches on nothing but
// the chain's answers.
import { packed } from "./packed.js";
import { callerLocation } from "./request.js";

// `chain.marks()`: the final response's.
const REDIRECTED = 1;
const CORS = 2;
// `chain.follow`'s answers, and the next hop's body.
const REFUSED = 1;
const UNREPLAYABLE = 2;
const DROP = 1;
const AGAIN = 2;
// What failed, for `chain.failed`: the `fetch` call threw or rejected,
// reading its response threw, reading the body again failed.
const THREW = 0;
const REJECTED = 1;
const READ = 2;
const READ_AGAIN = 3;

/** Every redirect the chain follows from `response`, the first request's
 * answer (a redirect: the machine's chain saw it, and sees it again here),
 * each hop sent with `send(input, init)` (a `fetch` with `redirect:
 * "manual"`); resolves with the final response. `again`: the `Request` a
 * 307/308 reads the body again from. */
export async function follow(chain, send, input, init, again, response) {
  let at;
  // The first request's referrer, read at the first redirect.
  let first;
  try {
    for (;;) {
      if (!response) {
        at = THREW;
        const sent = send(input, init);
        at = REJECTED;
        response = await sent;
      }
      at = READ;
      const headers = response.headers;
      const location = chain.seen(response.status, headers.get("location"));
      if (location === undefined) return marked(response, chain.marks());
      response.body?.cancel().catch(() => {});
      first ??= referrerOf(input, init);
      let here;
      let there;
      let invalid;
      try {
        here = new URL(response.url);
        there = new URL(location, here.href);
      } catch (error) {
        // Only the Location's own parse error is the refusal's cause.
        if (here) invalid = error;
      }
      const bodied = input instanceof Request && input.body !== null;
      const policy = headers.get("referrer-policy");
      const facts = [here?.origin, there?.protocol, there?.origin, policy, ...first];
      const [action, ...step] = chain.follow(facts.map(packed).join(""), bodied);
      if (action === REFUSED) throw new TypeError("fetch failed", { cause: invalid ?? new Error(step[0]) });
      if (action === UNREPLAYABLE) throw unreplayable();
      at = THREW;
      const [method, body, referrer, referrerPolicy, origin, ...dropped] = step;
      const next = { ...init, method, referrer, referrerPolicy };
      next.headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
      for (const name of dropped) next.headers.delete(name);
      if (origin !== undefined) next.headers.set("Origin", origin);
      if (body === DROP) next.body = undefined;
      if (body === AGAIN) {
        at = READ_AGAIN;
        next.body = await bodyAgain(again);
      }
      input = there.href;
      init = next;
      response = undefined;
    }
  } catch (error) {
    chain.failed(at);
    throw error;
  } finally {
    chain.free();
  }
}

/** The final response, marked as the chain says. */
function marked(response, marks) {
  if (marks & REDIRECTED) Object.defineProperty(response, "redirected", { value: true });
  if (marks & CORS) Object.defineProperty(response, "type", { value: "cors" });
  return response;
}

/** The body again, from a fresh clone of the prepared `Request` (never
 * from the Request the last hop consumed). */
async function bodyAgain(request) {
  try {
    return await request.clone().arrayBuffer();
  } catch {
    throw unreplayable();
  }
}

/** A hop that must re-send a body that cannot be sent again (`fetch`
 * fails such a redirect too). */
function unreplayable() {
  return new TypeError("saferetry: a 307/308 redirect needs the request body again, and it was a one-shot stream");
}

/** What `chain.follow` reads of the first request's referrer: its
 * `referrer` and `referrerPolicy` (`init`'s, else the Request's), that
 * referrer stripped, and the caller's environment (undici's global origin
 * in Node, `location` in Deno with `--location`) stripped. */
function referrerOf(input, init) {
  const request = input instanceof Request ? input : undefined;
  const own = (name) => stringOf(init[name]) ?? stringOf(request?.[name]);
  const referrer = own("referrer");
  return [referrer, own("referrerPolicy"), ...stripped(referrer), ...stripped(callerLocation()?.href)];
}

const stringOf = (v) => (typeof v === "string" ? v : undefined);

/** "Strip url for use as a referrer": `[href, origin]` without credentials
 * or fragment; `[]`'s two `undefined`s when it is not a URL. */
function stripped(url) {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.hash = "";
    return [u.href, u.origin];
  } catch {
    return [undefined, undefined];
  }
}
