// The option reader's glue (src/host/api/read.rs) and the one table its
// refusals are worded from. Which keys an options object has, their types,
// ranges and defaults are Rust's (src/policy/schema.rs, and the schemas
// beside the options they fill): this file reads the keys it is given and
// words the error it is told, so no message is compiled into a wasm module.
import { checker } from "./load.js";

// "a,b," -> ["a", "b"].
const split = (names) => names.split(",").slice(0, -1);

/** One crossing per object: the values of the first `count` of `names`
 * on `object` (inherited ones too; a getter that throws reads as
 * `undefined`, as if absent; `undefined` and `null` have none), then,
 * unless `open`, the object's own keys `names` does not list. A Proxy
 * whose key listing throws throws here. */
function fields(object, names, count, open) {
  const keys = split(names);
  const out = [];
  for (let i = 0; i < count; i++) {
    let value;
    try {
      value = object?.[keys[i]];
    } catch {
      // absent
    }
    out.push(value);
  }
  if (!open) for (const key of Object.keys(object ?? {})) if (!keys.includes(key)) out.push(key);
  return out;
}

const quote = (w) => JSON.stringify(w);
// What a field accepts, by the code src/policy/schema.rs `describe` gives
// its kind (that file's `code` module, in order): (a, b, words, next) —
// its bounds, its words, and `next()`, the words of the kind that follows
// (a list's item, each side of an `or`).
const ACCEPTS = [
  (a, b, [unit]) => `an integer in ${a}..=${b}${unit ? ` (${unit})` : ""}`,
  () => "a boolean",
  (nonEmpty) => `a ${nonEmpty ? "non-empty " : ""}string`,
  (a, b) => `a string of ${a}..=${b} visible ASCII characters (no spaces)`,
  (a, b, w) => (w.length > 1 ? `one of ${w.map(quote).join(", ")}` : quote(w[0])),
  () => "a function",
  (a, b, w) => `an object { ${w.join(", ")} }`,
  (a, b, w, next) => `an array of ${a}..=${b} items, each ${next()}`,
  (a, b, w, next) => `${next()} or ${next()}`,
  () => "false (a call may only opt out of the policy's)",
  () => "set on the policy, not per call",
  () => "set per call, not on the policy",
  () => "given (not null or undefined)",
  (a, b) => `a number in ${a}..=${b}`,
];

/** `nodes` ("code a b words", in prefix order) from the next one on. */
function accepts(nodes) {
  const [code, a, b, ...words] = nodes.shift().split(" ");
  return ACCEPTS[code](+a, +b, split(words.join(" ")), () => accepts(nodes));
}

/** The error for a refused value (`kind`: 0 an unknown key, 1 a
 * TypeError, 2 a RangeError), naming its path and what it accepts. */
function refusal(kind, path, key, accepted) {
  const field = `\`${path || "options"}\``;
  if (kind === 0) return new TypeError(`saferetry: \`${key}\` is not an option of ${field} (see the README's option table)`);
  const message = `saferetry: ${field} must be ${accepts(accepted.split(";"))}`;
  return kind === 2 ? new RangeError(message) : new TypeError(message);
}

/** What each wasm module that reads options is given (src/host/api/read.rs `Reader`). */
export const reader = { fields, refusal };

/** The options of an entry that keeps no Rust state (`tabBudget`,
 * `instrument`, `retryNow`…: src/policy/schema.rs `NAMED`), checked by
 * the loaded module: their values in the schema's order, each default in
 * place of what was left out. Throws the TypeError or RangeError naming
 * the refused field. */
export const check = (name, options) => checker()(name, options, reader);
