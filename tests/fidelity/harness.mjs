// One differential case: the same scenario run once with the host's `fetch`
// and once with `policy.fetch` (a fresh `new RetryPolicy()`, or one with
// `responseBody` "stream"/"buffer"), each against its own record id on the
// server; the two observations (what the caller saw plus what the server
// received) must be equal, or differ exactly as a deliberate case says.
import { describeError, describeResponse, replaceDeep } from './observe.mjs';
import { differences } from './compare.mjs';

// The host's fetch, captured before any case patches the global slot.
const HOST_FETCH = globalThis.fetch;
const FETCH_SLOT = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
export const hostFetch = (input, init) => HOST_FETCH.call(globalThis, input, init);
const SETTLE_MS = 25; // lets a stray extra request reach the server before it is counted
const FUSE_READS = 200;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Where Node's fetch keeps the caller's origin: undici's global origin, as
// the Web Platform Tests' runner sets it (a URL).
const UNDICI_ORIGIN = Symbol.for('undici.globalOrigin.1');

/** Whether calls here can have a caller's origin, the main server's: Node
 * (undici's global origin, set per call: `fromOrigin`), Deno (run with
 * `--location`) and a browser page (its own); not Bun nor workerd. */
export const hasCallerOrigin = (runtime) => runtime === 'node' || typeof globalThis.location?.origin === 'string';

/** `fn()` called from the main origin, as a page there calls `fetch`: in
 * Node with undici's global origin set to it for the call (so a case that
 * uses it runs its sides one after the other: `serial`), elsewhere as it
 * is (Deno's `--location` and a page's origin are the main server's). */
export function fromOrigin(t, fn) {
  if (t.runtime !== 'node') return fn();
  globalThis[UNDICI_ORIGIN] = new URL(t.u({ page: 1 }));
  return Promise.resolve().then(fn).finally(() => { delete globalThis[UNDICI_ORIGIN]; });
}

/** Puts the host's fetch back in the global slot (after every case). */
export function restoreGlobalFetch() {
  if (FETCH_SLOT) Object.defineProperty(globalThis, 'fetch', FETCH_SLOT);
  else delete globalThis.fetch;
}

/** `globalThis.fetch = fn`, behind a fuse: after 200 reads of the slot in
 * one case it answers a rejecting function, so a fetch that calls itself
 * through the global fails the case instead of hanging the event loop. */
export function installGlobalFetch(fn) {
  let current = fn;
  let reads = 0;
  const blown = () => Promise.reject(new Error(`fuse: globalThis.fetch was read more than ${FUSE_READS} times in one case (a fetch calling itself through the global)`));
  try {
    Object.defineProperty(globalThis, 'fetch', {
      configurable: true, enumerable: true,
      get: () => (++reads > FUSE_READS ? blown : current),
      set: (v) => { current = v; },
    });
  } catch {
    globalThis.fetch = fn;
  }
}

// Request headers sorted by name; a multipart boundary (random per call,
// of random length in Firefox: so is the Content-Length) masked.
function normalizeRecord(r) {
  const boundary = /boundary=([^;\s]+)/.exec(r.headers.find(([k]) => k === 'content-type')?.[1] ?? '')?.[1];
  const mask = (s) => (boundary ? s.split(boundary).join('<boundary>') : s);
  const headers = r.headers.map(([k, v]) => [k, boundary && k === 'content-length' ? '<length>' : mask(v)]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { ...r, headers, body: mask(r.body) };
}

// The self-check's stand-in for the package: its "policy" is the host's fetch
// (the global slot's, read at call time, or the host's when the slot leads
// back into a policy), so every case but the deliberate ones must pass: the
// harness compares like with like.
let standInDepth = 0;
const HOST_AS_POLICY = {
  RetryPolicy: class {
    constructor(o) {
      this.fetch = (input, init) => {
        if (o?.fetch) return o.fetch(input, init);
        if (standInDepth > 0) return hostFetch(input, init);
        standInDepth += 1;
        try { return globalThis.fetch(input, init); } finally { standInDepth -= 1; }
      };
    }
  },
};

export function makeHarness({ saferetry: pkg, server, runtime, selfcheck = false }) {
  const saferetry = selfcheck ? HOST_AS_POLICY : pkg;
  const base = server.url.replace(/\/$/, '');
  const alt = (server.altUrl ?? server.url).replace(/\/$/, '');
  const list = [];

  async function records(id) {
    const res = await hostFetch(`${base}/rec/${id}`);
    return (await res.json()).map(normalizeRecord);
  }

  function toolsFor(side, id, policy) {
    const query = (params) => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) for (const x of [v].flat()) q.append(k, String(x));
      const s = q.toString();
      return s ? `?${s}` : '';
    };
    const masks = [[id, '<id>']];
    return {
      side, id, policy, runtime, saferetry, base, alt, hostFetch, masks,
      /** Marks a value that differs per side (a blob: URL) as `label` in the observation. */
      mask: (value, label) => { masks.push([value, label]); return value; },
      fetch: side === 'host' ? hostFetch : policy.fetch,
      /** The URL of this side's record id, on the main origin or `alt`. */
      u: (params = {}, origin = 'main') => `${origin === 'alt' ? alt : base}/r/${id}${query(params)}`,
      /** The same, as a path (for a relative Location). */
      path: (params = {}) => `/r/${id}${query(params)}`,
      describe: describeResponse,
      reason: undefined, // a case that aborts sets the reason here, so the rejection is checked against it
    };
  }

  async function observe(scenario, side, mode) {
    const id = `${side}-${crypto.randomUUID()}`;
    const policy = side === 'policy' ? new saferetry.RetryPolicy(mode === 'default' ? undefined : { responseBody: mode }) : null;
    const t = toolsFor(side, id, policy);
    let obs;
    try {
      const v = await scenario(t);
      obs = v instanceof Response ? await describeResponse(v) : v;
    } catch (e) {
      obs = { rejected: describeError(e, t.reason) };
    } finally {
      restoreGlobalFetch();
    }
    await sleep(SETTLE_MS);
    return t.masks.reduce((o, [from, to]) => replaceDeep(o, from, to), { ...obs, server: await records(id) });
  }

  // The two sides run at once (their own record ids), except where a case
  // touches the global slot (`serial`).
  async function compare(scenario, mode, deliberate, serial) {
    const [host, policy] = serial
      ? [await observe(scenario, 'host', mode), await observe(scenario, 'policy', mode)]
      : await Promise.all([observe(scenario, 'host', mode), observe(scenario, 'policy', mode)]);
    const expected = deliberate ? deliberate.expect(structuredClone(host), policy) : host;
    if (deliberate && differences(host, expected).length === 0) throw new Error(`deliberate case, but the expected policy answer equals the host's`);
    const diff = differences(expected, policy, '', deliberate ? 'expected' : 'host');
    if (diff.length) {
      throw new Error(`${deliberate ? 'differs from the deliberate expectation' : 'policy.fetch differs from fetch'}: ${diff.slice(0, 6).join(' | ')}${diff.length > 6 ? ` | … ${diff.length - 6} more` : ''}`);
    }
  }

  async function shape(scenario) {
    const obs = await observe(scenario, 'host', 'default');
    const e = obs.rejected;
    return {
      rejects: Boolean(e), status: obs.status ?? null, received: obs.server.length,
      ...(e ? { name: e.name ?? null, constructorIsTypeError: e.constructorIsTypeError ?? false, message: e.message ?? null, code: e.code ?? null,
        causeName: e.cause?.name ?? null, causeCode: e.cause?.code ?? null, causeMessage: e.cause?.message ?? null } : {}),
    };
  }

  /** A case per mode. opts: { modes, skip, shape, serial, deliberate: { why, expect(hostObs, policyObs) -> the policy's expected observation } } */
  function add(name, scenario, opts = {}) {
    for (const mode of opts.modes ?? ['default']) {
      list.push({
        name: mode === 'default' ? name : `${name} (responseBody "${mode}")`,
        skip: opts.skip ?? null, shape: Boolean(opts.shape), deliberate: opts.deliberate?.why ?? null,
        run: () => compare(scenario, mode, opts.deliberate, opts.serial),
        shapeRun: () => shape(scenario),
      });
    }
  }

  return { add, list, base, alt, runtime, saferetry };
}

export const ALL_MODES = ['default', 'stream', 'buffer'];
