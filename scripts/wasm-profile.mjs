// What a wasm module is made of: its largest functions, their bytes summed
// by crate and module path (core::fmt, alloc, serde, saferetry::policy::…,
// wasm_bindgen…), and its sections and data segments — raw bytes of the
// code section's bodies, as the module ships them (before gzip).
//
//   NAMES=1 scripts/build.sh && node scripts/wasm-profile.mjs
//   NAMES=1 LEAN=1 scripts/build.sh && node scripts/wasm-profile.mjs target/lean/names/saferetry_bg.wasm
//   node scripts/wasm-profile.mjs [FILE.wasm] [--top N] [--depth N]
//   node scripts/wasm-profile.mjs BEFORE.wasm --diff AFTER.wasm
//     (a change's effect, function by function: where bytes went, e.g. a
//     helper LTO now inlines into its one caller instead of dropping it)
//
// The file must keep its name section: `NAMES=1 scripts/build.sh` builds the
// default module (and the browser's, target/names/saferetry_web_bg.wasm) as the shipped one is built (same cargo flags, wasm-bindgen
// and `wasm-opt -Oz`), with `-g` in place of `--strip-debug`. `--depth`: how
// many path segments name a group (saferetry's own paths get one more:
// saferetry::policy::classify). Functions without a Rust path (wasm-bindgen's
// shims, the allocator's C-like names) are grouped by their name's prefix.
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The module's sections (`{ label, size, id, start, end }`: `start` at
 * its id byte), function bodies (`{ index, size, at, len }`: `size` with
 * its length's bytes, `at` where its `len` bytes start), names, data
 * segments and imports (`{ module, field, desc }`: `desc`, what is
 * imported, as its bytes), and where its import section is
 * (`importSection`: `{ start, end }`, from its id byte; absent without
 * one). */
export function parse(bytes) {
  let at = 8;
  const u32 = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[at++];
      result |= (b & 0x7f) << shift;
      if (!(b & 0x80)) return result >>> 0;
      shift += 7;
    }
  };
  const name = () => {
    const n = u32();
    const s = Buffer.from(bytes.subarray(at, at + n)).toString("utf8");
    at += n;
    return s;
  };
  const sections = [];
  const bodies = [];
  const names = new Map();
  const data = [];
  const imports = [];
  let importSection;
  let imported = 0;
  while (at < bytes.length) {
    const sectionStart = at;
    const id = bytes[at++];
    const size = u32();
    const start = at;
    const end = at + size;
    let label = SECTIONS[id] ?? `section ${id}`;
    if (id === 0) {
      label = `custom "${name()}"`;
      if (label === 'custom "name"') {
        while (at < end) {
          const sub = bytes[at++];
          const subEnd = u32() + at;
          if (sub === 1) for (let n = u32(); n > 0; n--) names.set(u32(), name());
          at = subEnd;
        }
      }
    } else if (id === 2) {
      importSection = { start: sectionStart, end };
      for (let n = u32(); n > 0; n--) {
        const module = name();
        const field = name();
        const desc = at;
        const kind = bytes[at++];
        if (kind === 0) imported++;
        skipImport(kind);
        imports.push({ module, field, desc: bytes.subarray(desc, at) });
      }
    } else if (id === 10) {
      for (let n = u32(), i = 0; i < n; i++) {
        const len = u32();
        bodies.push({ index: imported + i, size: len + leb(len), at, len });
        at += len;
      }
    } else if (id === 11) {
      for (let n = u32(); n > 0; n--) {
        const flags = u32();
        if (flags === 2) u32();
        if (flags !== 1) while (bytes[at++] !== 0x0b); // the offset expression
        const len = u32();
        data.push(bytes.subarray(at, at + len));
        at += len;
      }
    }
    sections.push({ label, size: end - start, id, start: sectionStart, end });
    at = end;
  }
  return { sections, bodies, names, data, imports, importSection };

  function skipImport(kind) {
    if (kind === 0) u32();
    else if (kind === 1) {
      at++;
      limits();
    } else if (kind === 2) limits();
    else if (kind === 3) at += 2;
    else if (kind === 4) {
      at++;
      u32();
    }
  }
  function limits() {
    const flags = bytes[at++];
    u32();
    if (flags & 1) u32();
  }
}

const SECTIONS = ["custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "data count", "tag"];
const leb = (n) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

const ESCAPES = { SP: "@", BP: "*", RF: "&", LT: "<", GT: ">", LP: "(", RP: ")", C: "," };

/** A function's name as a Rust path: lld writes most names demangled
 * (`core[c5930c85a12de822]::fmt::write`, with std's crate disambiguators
 * and a `::h…` hash), which go; a still-mangled legacy symbol is demangled. */
export function demangle(symbol) {
  const m = /^_?_ZN(.*)E$/.exec(symbol);
  let name = symbol;
  if (m) {
    const parts = [];
    let rest = m[1];
    while (rest.length) {
      const len = /^\d+/.exec(rest);
      if (!len) return symbol;
      const start = len[0].length;
      parts.push(rest.slice(start, start + Number(len[0])));
      rest = rest.slice(start + Number(len[0]));
    }
    name = parts
      .map((p) =>
        p
          .replace(/^_\$/, "$")
          .replace(/\$([A-Z]+)\$/g, (all, e) => ESCAPES[e] ?? all)
          .replace(/\$u([0-9a-f]+)\$/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16)))
          .replaceAll("..", "::"),
      )
      .join("::");
  }
  return name.replace(/\[[0-9a-f]{16}\]/g, "").replace(/::h[0-9a-f]{16}$/, "");
}

/** The group a function's path counts in. `<A as B>::f` counts in A's
 * path, or B's when A is not a path (a reference, a tuple, a primitive). */
export function groupOf(fn, depth) {
  // wasm-bindgen's exports (`policy_execute`, `machine_work`, …): the
  // Rust export's body, inlined by wasm-opt into wasm-bindgen's shim.
  const exported = /^([a-z]+)_[A-Za-z]+( (externref|multivalue) shim)*$/.exec(fn);
  if (exported) return `(exports: ${exported[1]}_*, with their shims)`;
  if (/^(__wbg_|__wbindgen|__externref)|(Externref|shim)$/.test(fn)) return "wasm_bindgen (glue)";
  let p = fn;
  const impl = /^<(.+?) as (.+?)>::/.exec(p);
  if (impl) {
    const self = impl[1].replace(/^(&(mut )?|\*(const|mut) )+/, "");
    p = /^[a-z_][a-z0-9_]*::/.test(self) ? self : impl[2];
  } else if (/^<[^ :]+>::/.test(p)) {
    return "core (methods of primitives)";
  } else if (p.startsWith("<")) {
    p = p.slice(1);
  }
  const segments = p.replace(/<.*$/, "").split("::").filter(Boolean);
  if (segments.length < 2) return /^__|^mem/.test(fn) ? "compiler_builtins" : /^func \d+$/.test(fn) ? "(unnamed)" : `(other: ${fn})`;
  const n = segments[0] === "saferetry" ? depth + 1 : depth;
  return segments.slice(0, Math.min(n, segments.length - 1)).join("::");
}

export function profile(bytes, { depth = 2 } = {}) {
  const { sections, bodies, names, data } = parse(bytes);
  const functions = bodies.map((b) => ({ name: demangle(names.get(b.index) ?? `func ${b.index}`), size: b.size }));
  const groups = new Map();
  const crates = new Map();
  for (const f of functions) {
    const g = groupOf(f.name, depth);
    groups.set(g, (groups.get(g) ?? 0) + f.size);
    const c = g.startsWith("(exports") ? "(exports)" : g.split(/::| \(/)[0];
    crates.set(c, (crates.get(c) ?? 0) + f.size);
  }
  const byBytes = (m) => [...m].map(([name, size]) => ({ name, size })).sort((a, b) => b.size - a.size);
  return {
    total: bytes.length,
    named: names.size > 0,
    sections,
    code: functions.reduce((s, f) => s + f.size, 0),
    functions: functions.sort((a, b) => b.size - a.size),
    groups: byBytes(groups),
    crates: byBytes(crates),
    data: {
      segments: data.length,
      bytes: data.reduce((s, d) => s + d.length, 0),
      largest: Math.max(0, ...data.map((d) => d.length)),
      // Runs of 4+ printable ASCII: messages, option names, header names, source paths.
      text: data.reduce((s, d) => s + (Buffer.from(d).toString("latin1").match(/[\x20-\x7e]{4,}/g) ?? []).join("").length, 0),
    },
  };
}

/** The functions whose bytes differ between two profiles, largest change first. */
function diff(a, b, top) {
  const sizes = (p) => {
    const m = new Map();
    for (const f of p.functions) m.set(f.name, (m.get(f.name) ?? 0) + f.size);
    return m;
  };
  const [x, y] = [sizes(a), sizes(b)];
  const rows = [...new Set([...x.keys(), ...y.keys()])]
    .map((name) => ({ name, change: (y.get(name) ?? 0) - (x.get(name) ?? 0) }))
    .filter((r) => r.change !== 0)
    .sort((r, s) => Math.abs(s.change) - Math.abs(r.change));
  const sign = (n) => (n > 0 ? `+${n}` : String(n));
  return [
    `code ${a.code} -> ${b.code} (${sign(b.code - a.code)}); data ${a.data.bytes} -> ${b.data.bytes} (${sign(b.data.bytes - a.data.bytes)})`,
    "",
    `functions that changed, top ${top} (bytes):`,
    ...rows.slice(0, top).map((r) => `${sign(r.change).padStart(8)}  ${r.name}`),
  ].join("\n");
}

function report(p, top) {
  const pct = (n) => `${((n / p.code) * 100).toFixed(1).padStart(5)} %`;
  const row = (size, name, share = true) => `${String(size).padStart(8)}  ${share ? pct(size) : "       "}  ${name}`;
  const out = [];
  out.push(`module ${p.total} bytes; code ${p.code} bytes in ${p.functions.length} functions; data ${p.data.bytes} bytes in ${p.data.segments} segments (largest ${p.data.largest}; text ${p.data.text})`);
  out.push("", "sections (bytes):", ...p.sections.map((s) => row(s.size, s.label, false)));
  out.push("", "code by crate (bytes, share of code):", ...p.crates.map((c) => row(c.size, c.name)));
  out.push("", `code by module path, top ${top}:`, ...p.groups.slice(0, top).map((g) => row(g.size, g.name)));
  out.push("", `largest functions, top ${top}:`, ...p.functions.slice(0, top).map((f) => row(f.size, f.name)));
  return out.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const option = (flag, fallback) => (args.includes(flag) ? Number(args.splice(args.indexOf(flag), 2)[1]) : fallback);
  const top = option("--top", 30);
  const depth = option("--depth", 2);
  const against = args.includes("--diff") ? path.resolve(args.splice(args.indexOf("--diff"), 2)[1]) : null;
  const file = path.resolve(args[0] ?? path.join(REPO, "target/names/saferetry_bg.wasm"));
  if (!existsSync(file)) {
    console.error(`wasm-profile: ${file} is not there: build it with \`NAMES=1 scripts/build.sh\``);
    process.exit(1);
  }
  const read = (f) => {
    const p = profile(readFileSync(f), { depth });
    if (p.named) return p;
    console.error(`wasm-profile: ${f} has no name section (a shipped, stripped module): build one with \`NAMES=1 scripts/build.sh\``);
    process.exit(1);
  };
  const p = read(file);
  if (against) console.log(diff(p, read(against), top));
  else console.log(`${path.relative(process.cwd(), file)}: ${report(p, top)}`);
}
