// The durable outbox (docs/outbox.md "Outbox"): a write that ends `try-later` is
// kept in a store and sent again later, once, by whichever page, tab,
// process or Durable Object next runs the outbox. Glue only: every decision
// (what is kept, its retryAt and expiry, what is due, what a re-send makes
// of an entry) is `OutboxRules`' (src/policy/outbox.rs), a class of the
// second wasm module, which each runtime's `outbox()` (outbox-web.js,
// outbox-node.js, outbox-workerd.js) loads at the first outbox. This file
// captures requests, talks to the store, serialises drains (under the
// store's lock across tabs or processes), keeps one timer and dispatches
// events. `outbox` is a function, not a `RetryPolicy` method, so that a
// bundle which does not use it leaves all of this out.
import { check } from "./options.js";

/** An event of an outbox: `detail` says which entry and how it ended. */
export class OutboxEvent extends Event {
  constructor(type, detail) {
    super(type);
    this.detail = detail;
  }
}

const uuid = () => globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

/** The fields of an entry a UI sees (`pending()`, events): no headers, no body. */
function view(entry) {
  const { id, method, url, key, retryAt, expiresAt, sends, keptAt } = entry;
  return { id, method, url, key, retryAt, expiresAt, sends, keptAt };
}

/** Up to `limit + 1` bytes of `request`'s body (one more says "too large");
 * `null` for no body. */
async function bodyOf(request, limit) {
  if (request.body === null) return null;
  if (!request.body) return new Uint8Array(await request.arrayBuffer()); // Firefox: no `body` on Request
  const reader = request.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > limit) {
      reader.cancel().catch(() => {});
      break;
    }
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

const KEY = "idempotency-key";
/** The policy's whole-operation bound (a symbol of the package's own: not public API). */
const TOTAL_MS = Symbol.for("saferetry.totalMs");

/** `entryFor(...)(schedule)`: the stored form of `request` under `id`,
 * with the rules' schedule. `credentials` and `mode` only when not the
 * defaults (workerd refuses both in an init). */
function entryFor(request, headers, body, id) {
  const modes = {};
  if (request.credentials && request.credentials !== "same-origin") modes.credentials = request.credentials;
  if (request.mode && !["cors", "navigate"].includes(request.mode)) modes.mode = request.mode;
  return (schedule) => ({
    ...modes,
    id,
    method: request.method,
    url: request.url,
    headers: [...headers],
    body,
    key: headers.get(KEY),
    keptAt: Date.now(),
    ...schedule,
  });
}

export class Outbox extends EventTarget {
  #policy;
  #name;
  #store;
  #rules;
  #timer;
  #chain = Promise.resolve();
  #closed = false;
  #abort = new AbortController();
  #online = () => this.flush();

  constructor(policy, name, store, rules) {
    super();
    this.#policy = policy;
    this.#name = name;
    this.#store = store;
    this.#rules = rules;
    globalThis.addEventListener?.("online", this.#online);
  }

  get name() {
    return this.#name;
  }

  /** Sends as `policy.run(input, init).result` does and resolves with that
   * outcome, plus `kept` (the write is in the store, to be sent later),
   * `notKept` (why not, when it ended `try-later` or failed to be stored)
   * and `id`. `input` and `init` go to the policy as given, so it sees the
   * body the caller gave; its options are checked first, before anything
   * is read or stored (a bad option throws as in `policy.fetch`);
   * `init.retry.idempotencyKey: true` becomes a key made here, so the one
   * sent is the one kept.
   * `init.durable: "before-send"` (or the outbox's `durable`) writes a
   * write that qualifies to the store before its first send (`ahead:
   * true`); it leaves it when its outcome is final. */
  async send(input, init) {
    if (this.#closed) throw new TypeError(`saferetry: outbox "${this.#name}" is closed`);
    const make = init?.retry?.idempotencyKey === true && globalThis.crypto?.randomUUID;
    const call = make ? { ...init, retry: { ...init.retry, idempotencyKey: crypto.randomUUID() } } : init;
    // A call's options (`retry`, as the policy takes it: an object) are
    // checked by the same reader the policy's `fetch` uses, before
    // anything is read or stored.
    if (typeof call?.retry === "object" && call.retry !== null) check("retry", call.retry);
    check("send(init)", { durable: call?.durable });
    // What is kept is read from a copy: a `Request` is cloned, a body other
    // than a stream is the caller's own value, read again (a stream is not kept).
    const { retry, signal, durable, ...rest } = call ?? {};
    const stream = typeof ReadableStream !== "undefined" && rest.body instanceof ReadableStream;
    let copy = null;
    try {
      copy = new Request(input instanceof Request ? input.clone() : input, stream ? { ...rest, body: undefined } : rest);
    } catch {
      // A request `fetch` refuses: the policy answers for it (`refused`).
    }
    const headers = copy?.headers ?? new Headers();
    if (typeof retry?.idempotencyKey === "string") headers.set(KEY, retry.idempotencyKey);
    const body = stream || copy === null ? undefined : await bodyOf(copy, this.#rules.bodyLimit);
    const request = copy ?? { method: "", url: "" };
    const names = [...headers.keys()];
    const facts = { method: request.method, url: request.url, headers: names, bodyBytes: body === undefined ? null : (body?.byteLength ?? 0) };
    const entryOf = entryFor(request, headers, body ?? null, headers.get(KEY) || uuid());
    const ahead = await this.#ahead(facts, durable, retry?.totalMs, entryOf);
    let op;
    try {
      op = this.#policy.run(input, call);
    } catch (error) {
      if (ahead) await this.#store.delete(ahead.id);
      throw error;
    }
    const outcome = await op.result;
    const decision = this.#rules.keep(facts, outcome, Date.now());
    const result = Object.assign(outcome, { kept: false, ahead: ahead !== null });
    if (!decision.kept) {
      result.notKept = decision.notKept;
      if (ahead) await this.#store.delete(ahead.id).catch((error) => this.#emit("error", { error }));
      // A success needs no keeping: a UI hears only of writes left undone.
      if (outcome.kind !== "succeeded") this.#emit("not-kept", { notKept: decision.notKept, method: facts.method, url: facts.url, report: outcome.report });
      return result;
    }
    const entry = entryOf(decision.entry);
    try {
      await this.#store.put(entry);
    } catch (error) {
      result.notKept = this.#rules.storageFailed;
      result.storeError = error;
      this.#emit("not-kept", { notKept: result.notKept, method: entry.method, url: entry.url, report: outcome.report, error });
      return result;
    }
    Object.assign(result, { kept: true, id: entry.id, retryAt: entry.retryAt });
    this.#emit("kept", { entry: view(entry), report: outcome.report });
    this.#emit("change", {});
    this.flush(); // plans again: the timer now covers this entry too
    return result;
  }

  /** Write-ahead: the entry written before the first send, when the rules
   * ask for it (`null` when not asked, not qualifying, or the store failed:
   * the send goes on as without it). */
  async #ahead(facts, durable, callTotalMs, entryOf) {
    const answer = this.#rules.ahead(facts, durable, Date.now(), this.#policy[TOTAL_MS], callTotalMs);
    if (!answer.entry) return null;
    const entry = entryOf(answer.entry);
    try {
      await this.#store.put(entry);
    } catch (error) {
      this.#emit("error", { error });
      return null;
    }
    this.#emit("change", {});
    // Plans again, not awaited: the timer, a Durable Object's alarm or a
    // Background Sync now covers this entry too, should this page,
    // process or object die mid-send.
    this.flush();
    return entry;
  }

  /** What waits, as `{ id, method, url, key, retryAt, expiresAt, sends, keptAt }`. */
  async pending() {
    return (await this.#store.list()).map(view);
  }

  /** Sends what is due now (and ends what expired); resolves when done. */
  flush() {
    const run = this.#chain.then(() => (this.#closed ? undefined : this.#locked()));
    this.#chain = run.catch((error) => this.#emit("error", { error }));
    return this.#chain;
  }

  /** Stops the timer and the `online` listener; a re-send in flight is
   * cancelled and its entry kept as it was. */
  async close() {
    this.#closed = true;
    clearTimeout(this.#timer);
    globalThis.removeEventListener?.("online", this.#online);
    this.#abort.abort(new DOMException("The outbox was closed.", "AbortError"));
    await this.#chain;
    await this.#store.close?.();
  }

  #locked() {
    const drain = () => this.#drain();
    // `close()` ends a wait for the lock (the signal), as it ends a send.
    return this.#store.lock ? this.#store.lock(`saferetry-outbox:${this.#name}`, drain, this.#abort.signal) : drain();
  }

  #emit(type, detail) {
    this.dispatchEvent(new OutboxEvent(type, detail));
  }

  /** One timer, at the plan's `wakeAt`; a store that can wake its runtime
   * later (a Durable Object's alarm) is told too. */
  async #wake({ wakeAt, wakeInMs }) {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.flush(), wakeInMs);
    // Node: a pending entry does not keep the process alive (it is sent at
    // the next start).
    this.#timer?.unref?.();
    await this.#store.wake?.(wakeAt);
  }

  /** One drain: each due entry is claimed (written with its send counted)
   * before it is sent, and sent at most once per drain. */
  async #drain() {
    const sent = new Set();
    for (;;) {
      if (this.#closed) return;
      const entries = (await this.#store.list()).filter((e) => !sent.has(e.id));
      const plan = this.#rules.plan(entries, Date.now(), globalThis.navigator?.onLine ?? true);
      for (const i of plan.expired) await this.#finish(entries[i], "expired", null);
      for (const i of plan.corrupt) await this.#finish(entries[i], "failed", null, new TypeError("saferetry: an outbox entry whose schedule cannot be read"));
      if (plan.next === null) break;
      const entry = { ...entries[plan.next], ...this.#rules.claim(entries[plan.next]) };
      sent.add(entry.id);
      await this.#store.put(entry);
      const { method, headers, body, credentials, mode } = entry;
      const init = { method, headers, body, signal: this.#abort.signal, retry: { notBefore: entry.retryAt } };
      if (credentials) init.credentials = credentials;
      if (mode) init.mode = mode;
      let outcome;
      try {
        outcome = await this.#policy.run(entry.url, init).result;
      } catch (error) {
        // The request as stored cannot even be made (`fetch` would throw the
        // same): it ends failed, and the drain goes on to the others.
        await this.#finish(entry, "failed", null, error);
        continue;
      }
      const next = this.#rules.after(entry, outcome, Date.now());
      if (next.state === "unchanged") return;
      if (next.state === "kept") {
        const kept = { ...entry, ...next.entry };
        await this.#store.put(kept);
        this.#emit("retry", { entry: view(kept), report: outcome.report });
      } else {
        await this.#finish(entry, next.state, outcome);
      }
    }
    const all = await this.#store.list();
    const plan = this.#rules.plan(all, Date.now(), globalThis.navigator?.onLine ?? true);
    if (plan.wakeAt !== null) await this.#wake(plan);
  }

  async #finish(entry, state, outcome, error) {
    await this.#store.delete(entry.id);
    const detail = { entry: view(entry), report: outcome?.report ?? null };
    if (error !== undefined) detail.error = error;
    if (outcome?.response) detail.response = outcome.response;
    this.#emit(state, detail);
    this.#emit("change", {});
  }
}

/** `outbox(policy, name, options)` of a runtime: `loadRules()` resolves
 * with `OutboxRules`, `defaultStore(name)` makes the store when none is
 * given. Resolves once the rules are loaded, the options checked and the
 * first drain started. */
export async function openOutbox(policy, name, options, loadRules, defaultStore) {
  if (typeof name !== "string" || name === "") throw new TypeError("saferetry: `outbox(policy, name)`: name must be a non-empty string");
  if (typeof policy?.run !== "function") throw new TypeError("saferetry: `outbox(policy, name)`: policy must be a RetryPolicy");
  // Every option checked by the package's reader, defaults in place
  // (src/policy/outbox.rs `OUTBOX`; `store` required without a default one).
  const [given, ttl, credentials, durable] = check("outbox", options);
  if (given === undefined && defaultStore === undefined) check("outbox.store", {});
  const store = given ?? defaultStore(name);
  const Rules = await loadRules();
  const rules = new Rules(ttl, credentials, durable);
  const outbox = new Outbox(policy, name, store, rules);
  outbox.flush();
  return outbox;
}
