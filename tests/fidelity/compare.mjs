// Compares what the host's `fetch` and `policy.fetch` let a caller observe.
// Observations are plain data (observe.mjs); two keys are special:
//  - `rejected`: the policy may reject with the host's own error or with a
//    TypeError whose `cause` is the host's error (DESIGN rule 14) — except
//    where the host rejected with the caller's abort reason itself;
//  - `ms` (anywhere): a duration; the policy's may exceed the host's by
//    at most TIMING_SLACK_MS.
export const TIMING_SLACK_MS = 300;

const show = (v) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 400 ? `${s.slice(0, 400)}…` : s;
};

function withoutCause({ hasCause: _h, cause: _c, ...rest }) {
  return rest;
}

/** True when the policy's rejection `p` stands for the host's `h`. */
export function sameRejection(h, p) {
  if (show(h) === show(p)) return true;
  if (!h || !p || h.isTheReason === true) return false;
  return p.constructorIsTypeError === true && p.hasCause === true && show(p.cause) === show(withoutCause(h));
}

/** Paths where `p` differs from `h`, as "path: host …, policy …" lines
 * (`label` names the first side: "host", or "expected" for a deliberate case). */
export function differences(h, p, path = '', label = 'host') {
  if (path.endsWith('.ms') || path === 'ms') {
    return typeof h === 'number' && typeof p === 'number' && p <= h + TIMING_SLACK_MS
      ? [] : [`${path}: ${label} ${show(h)} ms, policy ${show(p)} ms (slack ${TIMING_SLACK_MS} ms)`];
  }
  if (/(^|\.)rejected$|bodyError$/.test(path)) {
    return sameRejection(h, p) ? [] : [`${path}: ${label} ${show(h)}, policy ${show(p)}`];
  }
  const isObj = (v) => v !== null && typeof v === 'object';
  if (isObj(h) && isObj(p) && Array.isArray(h) === Array.isArray(p)) {
    if (Array.isArray(h) && h.length !== p.length) return [`${path}: ${label} ${h.length} items ${show(h)}, policy ${p.length} items ${show(p)}`];
    const keys = [...new Set([...Object.keys(h), ...Object.keys(p)])];
    return keys.flatMap((k) => differences(h[k], p[k], path ? `${path}.${k}` : k, label));
  }
  return Object.is(h, p) ? [] : [`${path || '(value)'}: ${label} ${show(h)}, policy ${show(p)}`];
}
