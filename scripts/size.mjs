// Prints the package's size, two ways.
//
// 1. The package's parts: wasm modules, wasm-bindgen glue, our entries and
//    core, raw and gzip (level 9), and their total.
// 2. Bytes per entry: what each way of using the package loads, gzip, before
//    (bench/size-before.json: main at the start of issue 19, or a package
//    folder given with `--before DIR`) and now, side by side:
//    - page: a page's `import { RetryPolicy } from "saferetry"`, esbuild
//      browser bundle, minified, + the wasm it loads (issue 19's figure).
//      A page's bundler splits at each `import()` (Vite and webpack do):
//      what the page loads is its entry chunk, not a chunk it imports
//      later (a first `policy.poll()`'s), which an entry counts only where
//      it says it loads it (`loads`: the package's files, by name);
//    - tabs: the same page with `tabBudget` in `shared`, counting the
//      fleet's module (the authority a leader tab runs, the leased client
//      every tab's policy does);
//    - node: what `import { RetryPolicy } from "saferetry"` makes Node (Deno,
//      Bun) read at import, unbundled: the entry's static module graph and the
//      wasm it instantiates;
//    - workerd: a Worker's `import { RetryPolicy } from "saferetry"`, bundled
//      as Wrangler does (esbuild, `workerd` condition, `.wasm` as a module
//      import), minified, + the wasm modules it imports;
//    - cloudflare: the same with `RetryPolicy`, `durableBudget` and the
//      `RetryBudget` class from "saferetry/cloudflare";
//    - outbox: a page that opens an `outbox` (docs/outbox.md), counting
//      the outbox's wasm it loads at the first outbox;
//    - poll: a page that calls `policy.poll()`, counting the poll's module
//      it loads at the first poll;
//    - redis: what `import { redisBudget } from "saferetry/redis"` makes
//      Node (Deno, Bun) read at import, unbundled, as for node (a service
//      also imports "saferetry" for `RetryPolicy`: the node entry's bytes);
//    - otel: the page with `instrument` from "saferetry/otel" (without
//      @opentelemetry/api, which the app brings for its SDK);
//    and ky's page (`kyBytes`: `ky.create()`, bundled as the page is).
//
// `node scripts/size.mjs [--json] [--before DIR] [--now DIR] [--write-before DIR]`
// (DIR: a built js/ folder; `--now` measures it instead of js/;
// `--write-before` measures it into bench/size-before.json).
import { mkdtempSync, readFileSync, rmSync, symlinkSync, mkdirSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const PKG = path.join(REPO, "js");
const BEFORE = path.join(REPO, "bench/size-before.json");
const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;

const parts = [
  ["wasm", ["src/saferetry_bg.wasm"]],
  ["wasm, browser", ["src/saferetry_web_bg.wasm"]],
  ["wasm, authority", ["src/saferetry_authority_bg.wasm"]],
  ["wasm, outbox", ["src/saferetry_outbox_bg.wasm"]],
  ["wasm, poll", ["src/saferetry_poll_bg.wasm"]],
  ["wasm, redis", ["src/saferetry_redis_bg.wasm"]],
  ["glue", ["src/saferetry.js"]],
  ["glue, browser", ["src/saferetry_web.js"]],
  ["glue, authority", ["src/saferetry_authority.js"]],
  ["glue, outbox", ["src/saferetry_outbox.js"]],
  ["glue, poll", ["src/saferetry_poll.js"]],
  ["glue, redis", ["src/saferetry_redis.js"]],
  ["entry + core", ["src/node.js", "src/load.js", "src/options.js", "src/core.js", "src/executor.js", "src/attempts.js", "src/body.js", "src/hops.js", "src/held.js", "src/packed.js", "src/kept.js", "src/shape.js", "src/request.js", "src/lease.js", "src/tabs.js", "src/tabs-web.js", "src/compile.js"]],
  ["otel", ["src/otel.js"]],
  ["authority loaders", ["src/authority.js", "src/authority-api.js", "src/authority-lazy.js", "src/authority-node.js", "src/authority-workerd.js", "src/lease-relay.js"]],
  ["redis entry", ["src/redis.js"]],
  ["poll", ["src/poll.js", "src/poll-web.js", "src/poll-node.js", "src/poll-workerd.js"]],
  ["outbox", ["src/outbox.js", "src/outbox-web.js", "src/outbox-node.js", "src/outbox-workerd.js", "src/outbox-rules.js", "src/outbox-rules-node.js", "src/outbox-rules-workerd.js", "src/outbox-stores/memory.js", "src/outbox-stores/file.js", "src/outbox-stores/indexeddb.js", "src/outbox-stores/durable.js"]],
];

export function sizes(pkg = PKG) {
  const rows = [];
  for (const [name, files] of parts) {
    const present = files.filter((f) => existsSync(path.join(pkg, f)));
    if (!present.length) continue;
    const bytes = Buffer.concat(present.map((f) => readFileSync(path.join(pkg, f))));
    rows.push({ name, raw: bytes.length, gzip: gz(bytes) });
  }
  const total = { name: "total", raw: 0, gzip: 0 };
  for (const r of rows) {
    total.raw += r.raw;
    total.gzip += r.gzip;
  }
  return [...rows, total];
}

const kb = (n) => (n / 1024).toFixed(1) + " KB";

export function sizeTable(rows = sizes()) {
  const lines = ["| part | raw | gzip |", "|---|---:|---:|"];
  for (const r of rows) lines.push(`| ${r.name} | ${kb(r.raw).padStart(9)} | ${kb(r.gzip).padStart(8)} |`);
  return lines.join("\n");
}

// ---- bytes per entry ----
const ENTRIES = {
  page: { platform: "browser", code: 'import { RetryPolicy } from "saferetry";\nglobalThis.policy = new RetryPolicy();\n' },
  tabs: {
    platform: "browser", loads: ["authority.js"],
    code: 'import { RetryPolicy, tabBudget } from "saferetry";\nglobalThis.policy = new RetryPolicy({ shared: tabBudget("api") });\n',
  },
  // The page's entry as a browser loads it unbundled (an import map to
  // src/web.js): its static module graph, and every wasm a module of it
  // names (a browser instantiates wasm only asynchronously: whatever the
  // graph names, it loads at import).
  "page, unbundled": { unbundled: ["browser", "import", "default"], everyWasm: true, code: "" },
  node: { unbundled: ["node", "import", "default"], code: "" },
  redis: { unbundled: ["node", "import", "default"], subpath: "./redis", code: "" },
  workerd: {
    platform: "browser", conditions: ["workerd", "worker"],
    code: 'import { RetryPolicy } from "saferetry";\nconst policy = new RetryPolicy();\nexport default { fetch: (r) => policy.fetch(r.url) };\n',
  },
  cloudflare: {
    platform: "browser", conditions: ["workerd", "worker"],
    code: 'import { RetryPolicy, durableBudget } from "saferetry/cloudflare";\nexport { RetryBudget } from "saferetry/cloudflare";\n'
      + 'const policy = new RetryPolicy({ shared: durableBudget(() => globalThis.NS, "api") });\nexport default { fetch: (r) => policy.fetch(r.url) };\n',
  },
  outbox: {
    platform: "browser", loads: ["outbox.js", "outbox-rules.js"],
    code: 'import { RetryPolicy, outbox } from "saferetry";\nglobalThis.box = await outbox(new RetryPolicy(), "orders", { ttl: 86400000 });\n',
  },
  poll: {
    platform: "browser", loads: ["poll-web.js"],
    code: 'import { RetryPolicy } from "saferetry";\nglobalThis.op = new RetryPolicy().poll("/jobs", { method: "POST" }, { status: (r) => r.headers.get("location") });\n',
  },
  // saferetry/otel (docs/observability.md) on the page entry, without
  // @opentelemetry/api (the app's own, shared with its SDK): what the
  // instrumentation adds. Every entry above imports nothing of it.
  otel: {
    platform: "browser", requires: "./otel", external: ["@opentelemetry/api"],
    code: 'import { RetryPolicy } from "saferetry";\nimport { instrument } from "saferetry/otel";\nglobalThis.policy = new RetryPolicy();\ninstrument(globalThis.policy);\n',
  },
};
const KY = { platform: "browser", code: 'import ky from "ky";\nglobalThis.client = ky.create({ retry: 2 });\n' };

/** The package entry `conditions` pick for `subpath`. */
function resolveEntry(pkg, conditions, subpath = ".") {
  let target = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")).exports[subpath];
  while (target && typeof target === "object") target = target[Object.keys(target).find((k) => conditions.includes(k))];
  return target ? path.join(pkg, target) : null;
}

/** Files a runtime reads at import: static relative imports only (not `import()`). */
function staticGraph(entry) {
  const seen = new Set();
  const todo = [entry];
  while (todo.length) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    if (file.endsWith(".wasm")) continue;
    const src = readFileSync(file, "utf8");
    for (const m of src.matchAll(/(?:\bfrom\s*|^\s*import\s*)(["'])(\.{1,2}\/[^"']+)\1/gm)) todo.push(path.resolve(path.dirname(file), m[2]));
  }
  return [...seen];
}

/** The wasm files a JS text loads: `new URL("x.wasm", import.meta.url)` and `.wasm` module imports. */
function wasmRefs(text) {
  const urls = [...text.matchAll(/new URL\(\s*(["'])([^"']+\.wasm)\1\s*,\s*import\.meta\.url\s*\)/g)].map((m) => m[2]);
  const imports = [...text.matchAll(/\bfrom\s*(["'])([^"']+\.wasm)\1/g)].map((m) => m[2]);
  return [...new Set([...urls, ...imports].map((f) => path.basename(f)))];
}

async function measureEntry(pkg, name, spec, esbuild, work) {
  if (spec.unbundled) {
    const entry = resolveEntry(pkg, spec.unbundled, spec.subpath);
    if (!entry || !existsSync(entry)) return null; // a package without this entry (a `before` build)
    const files = staticGraph(entry);
    const js = files.filter((f) => !f.endsWith(".wasm"));
    const jsText = js.map((f) => readFileSync(f, "utf8")).join("\n");
    // Wasm instantiated at import: the one the entry itself reads (in
    // Node, the authority's, where present, waits for its first `new`), or
    // in a browser every one the graph names.
    const wasm = wasmRefs(spec.everyWasm ? jsText : readFileSync(files[0], "utf8"));
    return tally(pkg, Buffer.from(jsText), wasm);
  }
  const dir = path.join(work, name);
  mkdirSync(path.join(dir, "node_modules"), { recursive: true });
  symlinkSync(pkg, path.join(dir, "node_modules/saferetry"));
  writeFileSync(path.join(dir, "app.mjs"), spec.code);
  // A page leaves out what it imports later, as a bundler that splits at
  // each `import()` does (tests/bundlers checks esbuild's `--splitting`
  // leaves the fleet's module out of a page that only retries); a Worker
  // is bundled whole, as Wrangler does.
  const later = {
    name: "later",
    setup(build) {
      build.onResolve({ filter: /^\./ }, (args) => {
        const later = args.kind === "dynamic-import" && !spec.conditions && !spec.loads?.includes(path.basename(args.path));
        return later ? { path: args.path, external: true } : undefined;
      });
    },
  };
  const out = await esbuild.build({
    entryPoints: [path.join(dir, "app.mjs")], absWorkingDir: dir, bundle: true, format: "esm", minify: true, plugins: [later],
    platform: spec.platform, conditions: spec.conditions ?? [], write: false, outdir: path.join(dir, "dist"),
    external: ["cloudflare:workers", "*.wasm", ...(spec.external ?? [])], nodePaths: [path.join(REPO, "node_modules")], logLevel: "silent",
  });
  const text = out.outputFiles.map((f) => f.text).join("\n");
  return tally(pkg, Buffer.from(text), wasmRefs(text));
}

function tally(pkg, js, wasmNames) {
  const wasm = wasmNames.map((n) => path.join(pkg, "src", n)).filter((f) => existsSync(f));
  const w = wasm.reduce((sum, f) => sum + gz(readFileSync(f)), 0);
  const j = gz(js);
  return { js: j, wasm: w, total: j + w, files: wasm.map((f) => path.basename(f)) };
}

/** `names`: the entries to measure (every one by default). */
export function entrySizes(pkg = PKG, names = Object.keys(ENTRIES)) {
  return measure(pkg, names.map((name) => [name, ENTRIES[name]]));
}

/** ky's page, measured as the page entry is (`{ js, wasm: 0, total }`). */
export async function kyBytes() {
  return (await measure(PKG, [["ky", KY]])).ky;
}

async function measure(pkg, specs) {
  const esbuild = await import(path.join(REPO, "node_modules/esbuild/lib/main.js"));
  const work = mkdtempSync(path.join(tmpdir(), "saferetry-size-"));
  try {
    const result = {};
    const exported = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")).exports;
    for (const [name, spec] of specs) {
      // An entry a package (an older one, measured as "before") does not export is not measured.
      if (spec.requires && !(spec.requires in exported)) continue;
      result[name] = await measureEntry(pkg, name, spec, esbuild, work);
    }
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function entryTable(now, before) {
  const lines = [
    `| entry (gzip) | before: js + wasm | before | now: js + wasm | now | change |`,
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const [name, n] of Object.entries(now)) {
    if (!n) continue;
    const b = before?.entries?.[name];
    const split = (x) => `${kb(x.js)} + ${kb(x.wasm)}`;
    const change = b ? `${((n.total - b.total) / 1024).toFixed(1)} KB (${(((n.total - b.total) / b.total) * 100).toFixed(0)} %)` : "—";
    lines.push(`| ${name} | ${b ? split(b) : "—"} | ${b ? `**${kb(b.total)}**` : "—"} | ${split(n)} | **${kb(n.total)}** | ${change} |`);
  }
  if (before?.source) lines.push("", `before: ${before.source}`);
  return lines.join("\n");
}

async function main(args) {
  const at = (flag) => (args.includes(flag) ? path.resolve(args[args.indexOf(flag) + 1]) : null);
  const writeBefore = at("--write-before");
  if (writeBefore) {
    const rev = args.includes("--source") ? args[args.indexOf("--source") + 1] : writeBefore;
    const data = { source: rev, parts: sizes(writeBefore), entries: await entrySizes(writeBefore) };
    writeFileSync(BEFORE, JSON.stringify(data, null, 2) + "\n");
    console.log(`wrote ${path.relative(REPO, BEFORE)}`);
    return;
  }
  const beforeDir = at("--before");
  const before = beforeDir
    ? { source: beforeDir, parts: sizes(beforeDir), entries: await entrySizes(beforeDir) }
    : existsSync(BEFORE) ? JSON.parse(readFileSync(BEFORE, "utf8")) : null;
  const now = at("--now") ?? PKG;
  const rows = sizes(now);
  const entries = await entrySizes(now);
  if (args.includes("--json")) {
    console.log(JSON.stringify({ parts: rows, entries, before }));
    return;
  }
  console.log(sizeTable(rows));
  console.log("");
  console.log(entryTable(entries, before));
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
