// Gives a wasm module's imports short names, in the module and in its
// wasm-bindgen glue alike (scripts/build.sh, after `wasm-opt`).
//
//   node scripts/short-imports.mjs DIR NAME
//
// wasm-bindgen names each import after its Rust function plus a hash
// (`__wbg_abortBefore_3f8894ef4fe0ca1f`) and every import's module after
// the glue's file (`./NAME_bg.js`): the names are written twice, in the
// module's import section and as keys of the glue's import object, and
// their hashes do not compress (1.0 KB gzip of the browser's module, 0.5 KB
// of its glue). Here every import of DIR/NAME_bg.wasm from `./NAME_bg.js`
// becomes `w`.<its name without the prefix and hash> (`w.abortBefore`,
// `w.is_null`; a second `new` is `new2`), readable where imports are
// counted by name (bench/cpu.mjs), and the glue's import object gets the
// same keys. The glue must name each such import exactly once as a
// key and its module exactly once: otherwise this fails, and the build with
// it, rather than ship a module whose imports its glue does not provide.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse } from "./wasm-profile.mjs";

const MODULE = "w";

/** `n` as an unsigned LEB128. */
export function leb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

const text = (s) => {
  const bytes = Buffer.from(s, "utf8");
  return [...leb(bytes.length), ...bytes];
};

/** `field` without wasm-bindgen's prefix and hash, unique among `taken`. */
function short(field, taken) {
  const base = field.replace(/^__wbg_/, "").replace(/^__wbindgen_/, "").replace(/_[0-9a-f]{16}$/, "");
  let name = base;
  for (let n = 2; taken.has(name) || name === "__proto__"; n++) name = `${base}${n}`;
  return name;
}

/** `bytes` with the imports from `from` renamed; the old name -> the new. */
export function shorten(bytes, from) {
  const { imports, importSection } = parse(bytes);
  const renamed = new Map();
  const body = [...leb(imports.length)];
  for (const { module, field, desc } of imports) {
    if (module === from) {
      if (renamed.has(field)) throw new Error(`short-imports: ${field} imported twice`);
      renamed.set(field, short(field, new Set(renamed.values())));
      body.push(...text(MODULE), ...text(renamed.get(field)));
    } else {
      body.push(...text(module), ...text(field));
    }
    body.push(...desc);
  }
  if (!importSection) return { bytes, renamed };
  const section = Buffer.from([2, ...leb(body.length), ...body]);
  return { bytes: Buffer.concat([bytes.subarray(0, importSection.start), section, bytes.subarray(importSection.end)]), renamed };
}

/** `glue` with the import object's keys and module renamed. */
export function rekey(glue, from, renamed) {
  const once = (source, pattern, replacement, what) => {
    const hits = source.match(pattern)?.length ?? 0;
    if (hits !== 1) throw new Error(`short-imports: the glue names ${what} ${hits} times (expected once)`);
    return source.replace(pattern, replacement);
  };
  let out = once(glue, new RegExp(`"${from.replace(/[./]/g, "\\$&")}":`, "g"), `${MODULE}:`, `the module ${from}`);
  for (const [old, name] of renamed) out = once(out, new RegExp(`(?<=^\\s*)${old}(?=:)`, "gm"), name, old);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, name] = process.argv.slice(2);
  const wasmFile = path.join(dir, `${name}_bg.wasm`);
  const glueFile = path.join(dir, `${name}.js`);
  const from = `./${name}_bg.js`;
  const { bytes, renamed } = shorten(readFileSync(wasmFile), from);
  const glue = rekey(readFileSync(glueFile, "utf8"), from, renamed);
  writeFileSync(wasmFile, bytes);
  writeFileSync(glueFile, glue);
}
