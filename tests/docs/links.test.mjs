// Every relative link in README.md, BENCHMARKS.md, docs/*.md and the READMEs
// of tests/*/ and www/*/ resolves (inside the repository): its
// file exists, and its `#anchor` names a heading of that file under GitHub's
// slug rules. No dependencies: node:test, node:fs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pages = ["README.md", "BENCHMARKS.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
// The READMEs of the test suites and the demo's server: their links are checked too.
const readmes = ["tests", "www"].flatMap((dir) =>
  readdirSync(join(root, dir)).map((sub) => `${dir}/${sub}/README.md`).filter((f) => existsSync(join(root, f))),
);

// The text outside fenced code blocks, line by line, with inline code spans blanked.
function prose(text) {
  let fence = null;
  return text.split("\n").map((line) => {
    const open = line.match(/^\s*(`{3,}|~{3,})/);
    if (open) {
      if (fence === null) fence = open[1][0];
      else if (open[1][0] === fence) fence = null;
      return "";
    }
    return fence === null ? line.replace(/(`+)[^`]*?\1/g, "") : "";
  });
}

// GitHub's heading slugs: lowercase, punctuation but '-' and '_' removed,
// spaces to '-'; a repeated slug gets -1, -2, …
export function slugs(text) {
  const seen = new Map();
  const out = new Set();
  let fence = null;
  for (const line of text.split("\n")) {
    const open = line.match(/^\s*(`{3,}|~{3,})/);
    if (open) {
      if (fence === null) fence = open[1][0];
      else if (open[1][0] === fence) fence = null;
      continue;
    }
    const h = fence === null && line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!h) continue;
    const base = h[1].toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

// Every `[text](target)` and `![alt](target)` with a relative target.
function links(text) {
  const out = [];
  prose(text).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      out.push({ target, line: i + 1 });
    }
  });
  return out;
}

function broken(page) {
  const text = readFileSync(join(root, page), "utf8");
  const problems = [];
  for (const { target, line } of links(text)) {
    const [path, anchor] = target.split("#");
    const file = path === "" ? join(root, page) : resolve(join(root, dirname(page)), decodeURIComponent(path));
    const where = `${page}:${line} → ${target}`;
    if (!file.startsWith(root + "/") && file !== root) problems.push(`${where}: outside the repository`);
    else if (!existsSync(file)) problems.push(`${where}: no file ${relative(root, file)}`);
    else if (anchor !== undefined && !slugs(readFileSync(file, "utf8")).has(decodeURIComponent(anchor)))
      problems.push(`${where}: no heading #${anchor} in ${relative(root, file)}`);
  }
  return { problems, count: links(text).length };
}

test("the slug of a heading is GitHub's: lowercase, punctuation but - and _ dropped, spaces to -, repeats numbered", () => {
  const s = slugs("# Where `policy.fetch` differs from `fetch`\n## Servers: Redis (or Valkey)\n## A b\n## A b\n```\n# not a heading\n```\n");
  assert.deepEqual([...s], ["where-policyfetch-differs-from-fetch", "servers-redis-or-valkey", "a-b", "a-b-1"]);
});

test("README.md links to every page in docs/", () => {
  const targets = new Set(links(readFileSync(join(root, "README.md"), "utf8")).map((l) => l.target.split("#")[0]));
  const missing = pages.filter((p) => p.startsWith("docs/") && !targets.has(p));
  assert.deepEqual(missing, []);
});

for (const page of [...pages, ...readmes]) {
  test(`every relative link in ${page} names an existing file and, with an anchor, an existing heading`, () => {
    const { problems, count } = broken(page);
    assert.deepEqual(problems, []);
    if (pages.includes(page) && page !== "BENCHMARKS.md") assert.ok(count > 0, `${page} has no relative link at all`);
  });
}
