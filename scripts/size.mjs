// Prints the package's size: wasm, wasm-bindgen glue, and our entry + core,
// raw and gzip (level 9), and their total. `--json` prints the figures only.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const root = new URL("../js/", import.meta.url);
const parts = [
  ["wasm", ["src/saferetry_bg.wasm"]],
  ["glue", ["src/saferetry.js"]],
  ["entry + core", ["src/node.js", "src/load.js", "src/core.js", "src/tabs.js"]],
];

export function sizes() {
  const rows = parts.map(([name, files]) => {
    const bytes = Buffer.concat(files.map((f) => readFileSync(new URL(f, root))));
    return { name, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
  const total = { name: "total", raw: 0, gzip: 0 };
  for (const r of rows) {
    total.raw += r.raw;
    total.gzip += r.gzip;
  }
  return [...rows, total];
}

export function sizeTable(rows = sizes()) {
  const kb = (n) => (n / 1024).toFixed(1).padStart(6) + " KB";
  const lines = ["| part | raw | gzip |", "|---|---:|---:|"];
  for (const r of rows) lines.push(`| ${r.name} | ${kb(r.raw)} | ${kb(r.gzip)} |`);
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes("--json")) console.log(JSON.stringify(sizes()));
  else console.log(sizeTable());
}
