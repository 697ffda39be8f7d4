// A tiny assert helper for the runtime-agnostic e2e suite (web-standard only).

export class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AssertionError';
  }
}

export function show(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'function') return `[function ${v.name || 'anonymous'}]`;
  if (v instanceof Error) return `${v.name}: ${v.message}`;
  try {
    const s = JSON.stringify(v);
    if (s === undefined) return String(v);
    return s.length > 300 ? s.slice(0, 300) + '…' : s;
  } catch {
    return String(v);
  }
}

const label = (msg) => (msg ? `${msg}: ` : '');

export function fail(msg) {
  throw new AssertionError(msg);
}

export function ok(value, msg) {
  if (!value) fail(`${label(msg)}expected a truthy value, got ${show(value)}`);
}

// Strict equality for primitives; structural (JSON) equality for arrays/objects.
export function equal(actual, expected, msg) {
  const same = typeof expected === 'object' && expected !== null
    ? show(actual) === show(expected)
    : Object.is(actual, expected);
  if (!same) fail(`${label(msg)}expected ${show(expected)}, got ${show(actual)}`);
}

export function oneOf(actual, allowed, msg) {
  if (!allowed.some((a) => Object.is(a, actual))) {
    fail(`${label(msg)}expected one of ${show(allowed)}, got ${show(actual)}`);
  }
}

export function match(actual, re, msg) {
  if (typeof actual !== 'string' || !re.test(actual)) fail(`${label(msg)}expected ${show(actual)} to match ${re}`);
}

export function notMatch(actual, re, msg) {
  if (typeof actual === 'string' && re.test(actual)) {
    const m = actual.match(re);
    fail(`${label(msg)}expected no match for ${re}, found ${show(m[0])} in ${show(actual)}`);
  }
}

export function within(actual, min, max, msg) {
  if (typeof actual !== 'number' || Number.isNaN(actual) || actual < min || actual > max) {
    fail(`${label(msg)}expected a number in [${min}, ${max}], got ${show(actual)}`);
  }
}

// Awaits a promise (or calls a function returning one) and expects a rejection.
// `name` is the expected error.name (or omit). Returns the error.
export async function rejects(promiseOrFn, name, msg) {
  let value;
  try {
    value = await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
  } catch (err) {
    if (name !== undefined && err?.name !== name) {
      fail(`${label(msg)}expected a rejection named ${show(name)}, got ${show(err)}`);
    }
    return err;
  }
  fail(`${label(msg)}expected a rejection${name ? ` named ${show(name)}` : ''}, but it resolved with ${describe(value)}`);
}

// Calls fn synchronously and expects it to throw an instance of `Type`.
export function throws(fn, Type, msg) {
  try {
    fn();
  } catch (err) {
    if (Type && !(err instanceof Type)) fail(`${label(msg)}expected ${Type.name}, got ${show(err)}`);
    return err;
  }
  fail(`${label(msg)}expected ${Type ? Type.name : 'an exception'}, but nothing was thrown`);
}

function describe(value) {
  if (typeof Response !== 'undefined' && value instanceof Response) return `Response ${value.status}`;
  return show(value);
}
