// What a caller can observe of one call, as plain data: the Response's
// fields, headers and body, or the rejection's shape. Web-standard APIs only.

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** The bytes as text when they are printable UTF-8, else as hex. */
export function bodyText(bytes) {
  try {
    const s = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    if (!/[\u0000-\u0008\u000e-\u001f]/.test(s)) return s;
  } catch { /* not UTF-8 */ }
  return `hex:${hex(bytes)}`;
}

/** Response headers as sorted [name, value] pairs; `date`'s value is masked
 * (it changes every second). */
export function headerList(headers) {
  const out = [];
  headers.forEach((v, k) => out.push([k, k === 'date' ? '<date>' : v]));
  if (typeof headers.getSetCookie === 'function') out.push(['(getSetCookie)', headers.getSetCookie().join(' | ')]);
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** A Response as data. `read`: 'bytes' (default), 'none' (body untouched). */
export async function describeResponse(res, { read = 'bytes' } = {}) {
  if (!(res instanceof Response)) return { notAResponse: typeof res === 'object' ? Object.prototype.toString.call(res) : typeof res };
  const d = {
    status: res.status, statusText: res.statusText, ok: res.ok, type: res.type, url: res.url,
    redirected: res.redirected, headers: headerList(res.headers), bodyNull: res.body === null, bodyUsed: res.bodyUsed,
  };
  if (read === 'bytes') {
    try {
      d.body = bodyText(new Uint8Array(await res.arrayBuffer()));
    } catch (e) {
      d.bodyError = describeError(e);
    }
    d.bodyUsedAfter = res.bodyUsed;
  }
  return d;
}

function errorFields(e, reason) {
  if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return { thrown: typeof e, value: String(e) };
  return {
    ctor: e.constructor?.name ?? null,
    constructorIsTypeError: e.constructor === TypeError,
    instanceOfTypeError: e instanceof TypeError,
    name: e.name,
    // Deno names the call's own local port ("error sending request from
    // 127.0.0.1:<port> for …"): a different one per call, masked.
    message: typeof e.message === 'string' ? e.message.replace(/\bfrom 127\.0\.0\.1:\d+ for\b/g, 'from 127.0.0.1:<port> for') : null,
    code: e.code ?? null,
    ...(reason !== undefined ? { isTheReason: e === reason } : {}),
  };
}

/** A rejection as data: its own fields and its cause's (one level). */
export function describeError(e, reason) {
  const d = errorFields(e, reason);
  if (e && typeof e === 'object') {
    d.hasCause = e.cause !== undefined;
    if (d.hasCause) d.cause = errorFields(e.cause);
  }
  return d;
}

/** Every string in `v` with `from` replaced by `to` (ids, ports). */
export function replaceDeep(v, from, to) {
  if (typeof v === 'string') return v.split(from).join(to);
  if (Array.isArray(v)) return v.map((x) => replaceDeep(x, from, to));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceDeep(x, from, to)]));
  return v;
}
