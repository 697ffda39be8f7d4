// One budget for every tab of an origin: a SharedBudget (see `shared` in
// the README) whose authority runs in one tab, the leader, elected with Web
// Locks; the other tabs reach it over a BroadcastChannel. Glue only: the
// Rust `BudgetAuthority` and each policy's leased client make every budget
// decision; this file elects, carries messages and keeps the authority's
// state alive across a change of leader.
//
// Election. Every tab queues for the lock "saferetry:<name>"; the holder is
// the leader. A leader that leaves (tab closed, navigated, put in the
// back/forward cache) releases the lock and the next tab in the queue takes
// over at once. A leader that stops answering while still holding the lock
// (a frozen or hung tab) sends no heartbeats: a follower that has heard
// nothing for `staleMs` asks once ("ping", answered from the leader's
// message handler, so a merely throttled background leader still answers),
// and after a further PROBE_MS of silence takes the lock with
// `steal: true`. The robbed leader learns it from its lock request's
// rejection and queues again as a follower.
//
// State. Every message a leader sends carries `authority.state()` tagged
// (term, version); every tab keeps the newest, and a new leader (term + 1)
// starts from `authority.restore(newest)`, so a handover never hands out a
// fresh bucket. Messages from an older term are ignored.
//
// The authority is in the fleet's module (authority.js in a page, fetched
// with `import()`: tabs-web.js; authority-node.js in Node, Deno and Bun, its
// wasm read from disk: node.js), with the policies' leased clients: a tab
// loads it when a policy first takes its budget (its
// client runs there: js/src/lease-relay.js), and leads with it. A tab that cannot
// load it (a bundle without its wasm) never leads, says so once (an `error`
// event, else a console warning, and `status()`), and its policies keep a
// budget of their own (src/policy/budget/lease/link.rs); an exchange it is
// asked for then is answered `{ unavailable: reason }`.
import { assertLoaded, fleets } from "./load.js";
import { LEASE } from "./lease.js";
import "./lease-relay.js"; // the policies that take a tabBudget link to their clients
import { check } from "./options.js";

const PREFIX = "saferetry:";
const PROBE_MS = 500; // silence after a ping before the lock is stolen
const REJOIN_MS = 1000; // a page still here this long after beforeunload stays
const ANSWER_MS = 1000; // a follower's request unanswered this long is rejected (the policy's own bound)

// `BudgetAuthority` once loaded.
let Authority = null;
let loading = null;

/** Loads the fleet's module once, as the entry does (js/src/load.js
 * `fleets`); resolves with it once `Authority` is set. */
function loadAuthority() {
  loading ??= fleets().then((m) => {
    Authority = m.BudgetAuthority;
    return m.fleet;
  });
  return loading;
}

/** The `error` event of a tabBudget whose authority cannot load. */
class TabBudgetErrorEvent extends Event {
  constructor(error) {
    super("error", { cancelable: true });
    this.error = error;
    this.message = error?.message ?? String(error);
  }
}

/** A SharedBudget shared by every tab of this origin that uses `name`
 * (one budget per upstream). Without Web Locks or BroadcastChannel, a
 * budget of this tab alone, with `scope: "tab"`. */
export function tabBudget(name, options) {
  assertLoaded();
  if (typeof name !== "string" || name === "") throw new TypeError("tabBudget: name must be a non-empty string");
  const [heartbeatMs, staleMs, fleetSize] = check("tabBudget", options);
  const config = { heartbeatMs, staleMs, fleetSize };
  const locks = globalThis.navigator?.locks;
  const Channel = globalThis.BroadcastChannel;
  return new TabBudget((failed) => typeof locks?.request !== "function" || typeof Channel !== "function"
    ? new OneTab(config, failed) : new Tabs(PREFIX + name, config, locks, Channel, failed));
}

/** The SharedBudget a policy takes (`exchange`, `scope`, `fleetSize`),
 * with `status()` and `close()` of its own, and an `error` event when the
 * authority cannot load. */
class TabBudget extends EventTarget {
  #tabs;
  #reason = null;

  /** `make(failed)` makes the election; it calls `failed(error)` when the
   * authority's module cannot be loaded. */
  constructor(make) {
    super();
    this.#tabs = make((error) => this.#failed(error));
  }

  /** Said once: an `error` event, and a console warning unless a listener
   * called `preventDefault()`. */
  #failed(error) {
    if (this.#reason !== null) return;
    const event = new TabBudgetErrorEvent(error);
    this.#reason = event.message;
    if (this.dispatchEvent(event)) console.warn(`saferetry: tabBudget runs without its authority, each policy on a budget of its own: ${event.message}`);
  }

  get scope() {
    return this.#tabs.scope;
  }

  get fleetSize() {
    return this.#tabs.config.fleetSize;
  }

  exchange(request) {
    return this.#tabs.exchange(request);
  }

  /** The fleet's module, where the policies that take this budget run
   * their leased clients (js/src/lease-relay.js): loaded when the first does. */
  [LEASE]() {
    return loadAuthority().catch((error) => {
      this.#failed(error);
      throw error;
    });
  }

  /** Called once by each policy that takes this budget, with a function
   * that gives its held tokens back at once: called as the tab leaves. */
  attach(release) {
    this.#tabs.releases?.push(release);
  }

  /** Diagnostics: `{ scope, leader, term, leaderSince, quotaLevel,
   * handovers, mode, reason }`; `mode` is "fallback" (and `reason` says
   * why) once this tab could not load the authority. */
  status() {
    const mode = this.#reason === null ? "authority" : "fallback";
    return { ...this.#tabs.status(), mode, reason: this.#reason };
  }

  /** Leaves for good: releases the lock, closes the channel. */
  close() {
    this.#tabs.close();
  }
}

/** No Web Locks or no BroadcastChannel: the authority lives in this tab. */
class OneTab {
  scope = "tab";
  constructor(config, failed) {
    this.config = { ...config, fleetSize: config.fleetSize ?? 1 };
    this.failed = failed;
    this.authority = null; // made at the first exchange, once its module is loaded
  }

  exchange(request) {
    return loadAuthority().then(() => {
      this.authority ??= new Authority();
      return this.authority.grant(request, Date.now());
    }, (error) => {
      this.failed(error);
      return unavailable(error);
    });
  }

  status() {
    return { scope: "tab", leader: true, term: 0, leaderSince: null, quotaLevel: this.authority?.quotaLevel, handovers: 0 };
  }

  close() {}
}

/** The answer to an exchange when no authority can run here. */
function unavailable(error) {
  return { unavailable: error?.message ?? String(error) };
}

class Tabs {
  constructor(key, config, locks, Channel, failed) {
    this.key = key;
    this.config = config;
    this.failed = failed;
    this.locks = locks;
    this.Channel = Channel;
    this.id = Math.floor(Math.random() * 2 ** 52);
    this.latest = null; // { term, v, state }: the newest authority state heard or made
    this.term = 0; // the newest term heard (or ours, while leading)
    this.pending = new Map(); // "client:seq" -> { resolve, reject, timer, request }
    this.unanswered = new Map(); // "client:seq" -> { request, at }: other tabs' requests not yet answered
    this.authority = null; // while leading
    this.ticket = null; // our current lock request
    this.handovers = 0;
    this.leaderSince = null;
    this.releases = []; // each policy's release (`attach`)
    this.joined = false;
    this.closed = false;
    this.scope = "origin";
    // Leaving the page: the lock and the channel go at once, so another tab
    // leads without waiting for a steal, and the back/forward cache may keep
    // the page (Firefox keeps no page whose lock is still held when it
    // decides, which is before pagehide: so already on beforeunload). A
    // navigation that beforeunload did not end (cancelled, a download)
    // rejoins REJOIN_MS later; a page restored from the cache, on pageshow.
    this.onLeave = () => {
      this.leave();
      clearTimeout(this.rejoin);
      this.rejoin = setTimeout(this.onShow, REJOIN_MS);
    };
    this.onShow = () => {
      clearTimeout(this.rejoin);
      if (!this.closed && !this.joined) this.join();
    };
    if (typeof globalThis.addEventListener === "function" && "onpagehide" in globalThis) {
      globalThis.addEventListener("beforeunload", this.onLeave);
      globalThis.addEventListener("pagehide", this.onLeave);
      globalThis.addEventListener("pageshow", this.onShow);
    }
    this.join();
  }

  join() {
    this.joined = true;
    this.channel = new this.Channel(this.key);
    this.channel.onmessage = (event) => this.receive(event.data);
    this.heardAt = Date.now();
    this.probeAt = 0;
    this.tick = setInterval(() => this.check(), Math.min(250, this.config.heartbeatMs));
    this.queue();
    this.post({ t: "ping" }); // the leader answers with its state
  }

  leave() {
    if (!this.joined) return;
    // The policies' held tokens go back first, while this tab is still
    // here: to its own authority if it leads (the state handed over below
    // has them), else over the channel. Not left to the page's pagehide: a
    // closing Firefox window sometimes delivers nothing sent from pagehide.
    // A leader also sends them over the channel (`leaving`): the next
    // leader may take the lock before the "bye" with that state reaches it
    // (seen in Chromium), and then credits them from the requests (one its
    // state already has is a duplicate, credited nothing).
    this.leaving = true;
    for (const release of this.releases) release();
    this.leaving = false;
    this.joined = false;
    clearInterval(this.tick);
    if (this.authority) this.post(this.beatMessage("bye"));
    this.stepDown();
    this.ticket?.abort?.abort();
    this.ticket = null;
    this.channel.close();
    for (const [key, p] of this.pending) this.settle(key, p, null, new Error("saferetry: tabBudget left the page"));
  }

  close() {
    this.closed = true;
    this.leave();
    clearTimeout(this.rejoin);
    globalThis.removeEventListener?.("beforeunload", this.onLeave);
    globalThis.removeEventListener?.("pagehide", this.onLeave);
    globalThis.removeEventListener?.("pageshow", this.onShow);
  }

  status() {
    return {
      scope: "origin", leader: this.authority !== null, term: this.term, leaderSince: this.leaderSince,
      // A follower shows the level of the newest state the leader sent.
      quotaLevel: this.authority ? this.authority.quotaLevel : this.latest?.state?.level ?? undefined,
      handovers: this.handovers,
    };
  }

  post(message) {
    try {
      this.channel.postMessage(message);
    } catch { /* closed: the next join reopens it */ }
  }

  // ---------- election ----------
  queue() {
    const ticket = { abort: new AbortController() };
    this.ticket = ticket;
    this.locks.request(this.key, { signal: ticket.abort.signal }, () => this.lead(ticket))
      .then(() => this.lost(ticket), () => this.lost(ticket));
  }

  steal() {
    this.ticket?.abort?.abort();
    const ticket = {};
    this.ticket = ticket;
    this.locks.request(this.key, { steal: true }, () => this.lead(ticket))
      .then(() => this.lost(ticket), () => this.lost(ticket));
  }

  lead(ticket) {
    if (ticket !== this.ticket || !this.joined) return undefined; // left meanwhile: release at once
    if (!Authority) {
      // Load the authority's module first, holding the lock meanwhile
      // (requests wait in `pending` and `unanswered`). A tab that cannot
      // load it lets go, never queues again, says so, and answers its own
      // requests (these and later ones) that no authority can run here.
      return loadAuthority().then(() => this.lead(ticket), (error) => {
        this.unable = unavailable(error);
        this.failed(error);
        for (const [key, p] of this.pending) this.settle(key, p, this.unable);
        return undefined;
      });
    }
    const authority = new Authority();
    if (this.latest?.state !== undefined) {
      try {
        authority.restore(this.latest.state);
      } catch { /* a state this version cannot read: start afresh */ }
    }
    this.authority = authority;
    this.term = Math.max(this.term, this.latest?.term ?? 0) + 1;
    this.v = 0;
    this.leaderSince = Date.now();
    this.handovers += 1;
    this.held = ticket;
    const done = new Promise((resolve) => { ticket.release = resolve; });
    this.beat();
    this.heartbeat = setInterval(() => this.beat(), this.config.heartbeatMs);
    // Requests still waiting on the previous leader: ours answered here, the
    // other tabs' over the channel (the authority ignores one already seen).
    for (const [key, p] of this.pending) {
      try {
        this.settle(key, p, this.grant(p.request));
      } catch (error) {
        this.settle(key, p, null, error);
      }
    }
    const now = Date.now();
    for (const r of this.unanswered.values()) if (now - r.at <= ANSWER_MS) this.answer(r.request);
    this.unanswered.clear();
    return done;
  }

  /** Our lock request ended: released, robbed (steal), or aborted. */
  lost(ticket) {
    if (this.held === ticket) this.stepDown();
    if (ticket === this.ticket && this.joined && !this.unable) this.queue();
  }

  stepDown() {
    if (!this.authority) return;
    clearInterval(this.heartbeat);
    this.authority.free?.();
    this.authority = null;
    this.held?.release?.();
    this.held = null;
    this.heardAt = Date.now();
  }

  /** A follower's clock: ping a silent leader, steal from one that stays silent. */
  check() {
    if (!this.joined || this.authority || this.unable) return;
    const now = Date.now();
    if (now - this.heardAt < this.config.staleMs) return;
    if (!this.probeAt) {
      this.probeAt = now;
      this.post({ t: "ping" });
    } else if (now - this.probeAt >= PROBE_MS) {
      this.probeAt = 0;
      this.heardAt = now;
      this.steal();
    }
  }

  // ---------- the leader ----------
  snapshot() {
    this.v += 1;
    const state = this.authority.state(); // undefined before the first request
    if (state !== undefined) this.latest = { term: this.term, v: this.v, state };
    return { term: this.term, v: this.v, state };
  }

  beatMessage(t) {
    const { term, v, state } = this.snapshot();
    return { t, term, v, state, leader: this.id };
  }

  beat() {
    if (this.authority) this.post(this.beatMessage("hb"));
  }

  grant(request) {
    const grant = this.authority.grant(request, Date.now());
    return grant;
  }

  // ---------- messages ----------
  receive(m) {
    if (m === null || typeof m !== "object") return;
    if (typeof m.term === "number") {
      if (m.term < this.term) return; // an older leader's
      if (this.authority && m.leader !== this.id && m.term > this.term) {
        this.stepDown(); // a newer leader exists: our lock is (being) taken
      }
      this.term = m.term;
      this.heardAt = Date.now();
      this.probeAt = 0;
      if (m.state !== undefined && (!this.latest || m.term > this.latest.term || (m.term === this.latest.term && m.v > this.latest.v))) {
        this.latest = { term: m.term, v: m.v, state: m.state };
      }
    }
    if (m.t === "req" && this.authority) {
      this.answer(m.request);
    } else if (m.t === "req") {
      // Seen by a follower: kept until answered, so that if the leader is
      // changing, the next one answers it (a release sent as a tab leaves).
      const now = Date.now();
      for (const [key, r] of this.unanswered) if (now - r.at > ANSWER_MS) this.unanswered.delete(key);
      if (this.unanswered.size < 64) this.unanswered.set(`${m.request?.client}:${m.request?.seq}`, { request: m.request, at: now });
    } else if (m.t === "ping" && this.authority) {
      this.beat();
    } else if (m.t === "ans" && m.grant) {
      const key = `${m.grant.client}:${m.grant.seq}`;
      this.unanswered.delete(key);
      const p = this.pending.get(key);
      if (p) this.settle(key, p, m.grant);
    }
  }

  answer(request) {
    let grant;
    try {
      grant = this.grant(request);
    } catch {
      return; // a malformed request: its sender falls back
    }
    this.post({ ...this.beatMessage("ans"), grant });
  }

  settle(key, p, grant, error) {
    this.pending.delete(key);
    clearTimeout(p.timer);
    if (error) p.reject(error);
    else p.resolve(grant);
  }

  exchange(request) {
    if (this.unable) return Promise.resolve(this.unable);
    if (this.authority) {
      try {
        const grant = this.grant(request);
        if (this.leaving) this.post({ t: "req", request });
        this.beat(); // the followers keep the new state
        return Promise.resolve(grant);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (!this.joined) {
      // The page is leaving (a `policy.release()` on pagehide): the request
      // still goes out, and the current or next leader credits what it
      // returns; its answer is not awaited.
      try {
        const channel = new this.Channel(this.key);
        channel.postMessage({ t: "req", request });
        channel.close();
      } catch { /* nothing more to do */ }
      return Promise.reject(new Error("saferetry: tabBudget has left the page; the request was sent, its answer is not awaited"));
    }
    const key = `${request?.client}:${request?.seq}`;
    return new Promise((resolve, reject) => {
      const previous = this.pending.get(key);
      if (previous) this.settle(key, previous, null, new Error("saferetry: a newer exchange replaced this one"));
      const p = { resolve, reject, request };
      p.timer = setTimeout(() => {
        if (this.pending.get(key) === p) this.settle(key, p, null, new Error(`saferetry: no tab answered within ${ANSWER_MS} ms`));
      }, ANSWER_MS);
      this.pending.set(key, p);
      this.post({ t: "req", request });
      this.check();
    });
  }
}
