// The page measure-failures.mjs loads: a module script that runs every case
// against the fault servers (other 127.0.0.1 ports, so cross-origin; only
// simple requests: GET, or POST with a text/plain string body) and records
// what JavaScript sees, plus the server's counts before/after each attempt.
export const PAGE_SCRIPT = String.raw`
const cfg = JSON.parse(new URLSearchParams(location.search).get('cfg'));
window.__log = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const url = (port, id) => 'http://127.0.0.1:' + port + '/x?c=' + id;
const post = (u, body = 'hello', init = {}) => fetch(u, { method: 'POST', body, ...init });
const counts = async (id) => (await fetch('/__counts?id=' + id)).json();

function ser(e, depth = 0) {
  if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return { primitive: typeof e, value: String(e) };
  const o = { ctor: e.constructor?.name ?? null, name: e.name, message: e.message };
  if ('code' in e) o.code = e.code;
  const own = Object.getOwnPropertyNames(e).filter((k) => k !== 'stack' && k !== 'message');
  if (own.length) {
    o.own = own;
    const short = (v) => (typeof v === 'string' ? v.replace(/\?.*/, '?…') : v); // fileName holds the page URL
    o.props = Object.fromEntries(own.filter((k) => k !== 'cause' && e[k] !== Object(e[k])).map((k) => [k, short(e[k])]));
  }
  if ('cause' in e) o.cause = depth < 2 ? ser(e.cause, depth + 1) : String(e.cause);
  return o;
}

async function probe(doFetch, { read = true, signal } = {}) {
  const t0 = performance.now();
  let phase = 'fetch', res;
  try {
    res = await doFetch();
    phase = 'body';
    const text = read ? await res.text() : null;
    return { phase: 'ok', status: res.status, type: res.type, text: text?.slice(0, 40), ms: Math.round(performance.now() - t0) };
  } catch (e) {
    const r = { phase, err: ser(e), ms: Math.round(performance.now() - t0) };
    if (res) { r.status = res.status; r.type = res.type; }
    if (signal) r.isReason = e === signal.reason;
    return r;
  }
}

function aborting(fn, ms, reason, pre = false) {
  return async (u) => {
    const c = new AbortController();
    if (pre) c.abort();
    const t = pre ? 0 : setTimeout(() => (reason === undefined ? c.abort() : c.abort(reason)), ms);
    try { return await fn(u, c.signal); } finally { clearTimeout(t); }
  };
}
const keepAliveTrap = async (u, get = false) => {
  const send = (n) => (get ? fetch(u + '&n=' + n) : post(u, n));
  const first = await probe(() => send('first'));
  await sleep(100);
  const r = await probe(() => send('second'));
  r.first = first.phase + ' ' + (first.status ?? '') + ' ' + (first.text ?? first.err?.message ?? '');
  return r;
};

const CASES = {
  s1: () => probe(() => post(url(cfg.closedPort, 's1'))),
  s4a: (u) => probe(() => post(u)),
  s4b: (u) => probe(() => post(u)),
  s5a: (u) => probe(() => post(u)),
  s5b: (u) => probe(() => post(u)),
  s6b: (u) => probe(() => fetch(u)),
  s9a: (u) => probe(() => post(u, 'hello', { redirect: 'follow' })),
  s9c: (u) => probe(() => post(u, 'hello', { redirect: 'manual' })),
  s7a: (u) => { const signal = AbortSignal.timeout(300); return probe(() => post(u, 'hello', { signal }), { signal }); },
  s6a: (u) => { const signal = AbortSignal.timeout(300); return probe(() => fetch(u, { signal }), { signal }); },
  s8a: aborting((u, signal) => probe(() => post(u, 'hello', { signal }), { signal }), 100),
  s8b: aborting((u, signal) => probe(() => post(u, 'hello', { signal }), { signal }), 100, new Error('custom-reason')),
  s8c: aborting((u, signal) => probe(() => post(u, 'hello', { signal }), { signal }), 100, 'string-reason'),
  s8d: aborting((u, signal) => probe(() => post(u, 'hello', { signal }), { signal }), 0, undefined, true),
  s8e: aborting((u, signal) => probe(() => fetch(u, { signal }), { signal }), 100),
  s8f: aborting((u, signal) => probe(() => fetch(u, { signal }), { signal }), 100, new Error('custom-reason')),
  s5c: keepAliveTrap,
  s5e: keepAliveTrap,
  s5g: (u) => keepAliveTrap(u, true),
};

function diff(a, b) {
  if (!a || !b) return null;
  const out = {};
  for (const [k, v] of Object.entries(b)) {
    if (typeof v === 'number') { if (v - (a[k] ?? 0)) out[k] = v - (a[k] ?? 0); continue; }
    const m = {};
    for (const [x, n] of Object.entries(v)) if (n - (a[k]?.[x] ?? 0)) m[x] = n - (a[k]?.[x] ?? 0);
    if (Object.keys(m).length) out[k] = m;
  }
  return out;
}

const results = [];
for (const c of cfg.cases) {
  for (let i = 0; i < c.repeats; i++) {
    const before = c.port ? await counts(c.id) : null;
    let guard;
    const hang = new Promise((r) => { guard = setTimeout(() => r({ phase: 'hang', ms: 5000 }), 5000); });
    const r = await Promise.race([CASES[c.id](c.port ? url(c.port, c.id) : null), hang]);
    clearTimeout(guard);
    if (c.port) { await sleep(30); r.counts = diff(before, await counts(c.id)); } else r.counts = {};
    results.push({ id: c.id, i, ...r });
    window.__log.push(c.id + '#' + i + ' ' + r.phase + ' ' + (r.err ? (r.err.name ?? r.err.primitive) + ': ' + (r.err.message ?? r.err.value) : (r.status ?? '') + ' ' + (r.type ?? '')) + ' | ' + JSON.stringify(r.counts));
  }
}
window.__result = { ua: navigator.userAgent, results };
`;

export const pageHtml = () => `<!doctype html><meta charset="utf-8"><title>fetch failures</title><script type="module">${PAGE_SCRIPT}</script>`;
