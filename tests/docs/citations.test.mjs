// Every file the repository's prose cites is in the repository: a reader of
// a clone can open it. Prose is every Markdown file (code spans and fenced
// blocks too) and every comment in the sources (Rust, JavaScript,
// TypeScript, shell, HTML, TOML, the Makefile). A citation is a path to a
// `.md` file (it must exist beside the citing file or from the repository's
// root, or be an output git ignores), a `../` path (it must stay inside the
// repository; to a `.md` or `.json` file, that file must exist), or an
// absolute path to a file of this machine's workspace (`/work/…`, `/home/…`,
// `/root/…`: never in a clone). "DESIGN rule N" and "DESIGN §N" cite docs/design.md, which
// must have that rule and that section. No dependencies: node:test, node:fs,
// git ls-files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

// The comments of a source file, as lines (other lines blank, so line
// numbers hold): `//`, `/* … */` (and its ` * ` lines), `#` in shell, TOML
// and the Makefile, `<!-- … -->` in HTML. A `//` inside a string
// (`"https://…"`) starts no comment.
export function comments(path, text) {
  const hash = /\.(sh|toml)$|(^|\/)Makefile$/.test(path);
  let block = false;
  return text.split("\n").map((line) => {
    if (block) {
      if (/\*\/|-->/.test(line)) block = false;
      return line;
    }
    let quote = null;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (quote) {
        if (c === "\\") i++;
        else if (c === quote) quote = null;
      } else if (hash ? c === "#" : c === '"' || c === "'" || c === "`") {
        if (hash) return line.slice(i);
        quote = c;
      } else if (!hash && (line.startsWith("//", i) || line.startsWith("/*", i) || line.startsWith("<!--", i))) {
        const rest = line.slice(i);
        if (!rest.startsWith("//") && !/\*\/|-->/.test(rest.slice(2))) block = true;
        return rest;
      } else if (hash && (c === '"' || c === "'")) quote = c;
    }
    return "";
  });
}

// What a file says in prose, line by line: all of a Markdown file, the
// comments of a source file.
function prose(path) {
  const text = readFileSync(join(root, path), "utf8");
  return path.endsWith(".md") ? text.split("\n") : comments(path, text);
}

// The citations on one line: [path, kind] with kind "md" (a Markdown file),
// "up" (a ../ path) or "abs" (an absolute path to a file of the workspace).
// A placeholder (`<file.md>`) cites nothing.
export function citations(line) {
  const out = [];
  for (const m of line.matchAll(/(?<![\w.\/-])(\/(?:work|home|root)\/[\w.\/+-]*\.\w+)/g)) out.push([m[1], "abs"]);
  for (const m of line.matchAll(/(?<![\w.\/<-])((?:\.\.\/)+[\w.\/+-]*)/g)) out.push([m[1], "up"]);
  for (const m of line.matchAll(/(?<![\w.\/:@<-])((?:\.\/)?[\w+-][\w.\/+-]*\.md)(?![\w>])/g)) {
    if (!m[1].startsWith("../")) out.push([m[1], "md"]);
  }
  return out;
}

// Whether git ignores `file` (an output: test-output/…).
const ignored = (file) => {
  try {
    execFileSync("git", ["check-ignore", "-q", file], { cwd: root });
    return true;
  } catch {
    return false;
  }
};

// Every problem with `path`'s citations, as "path:line cites …: why".
function problems(path) {
  const out = [];
  const here = dirname(join(root, path));
  prose(path).forEach((line, i) => {
    for (const [cited, kind] of citations(line)) {
      const where = `${path}:${i + 1} cites ${cited}`;
      const target = cited.replace(/[#?].*$/, "").replace(/[.,;:]+$/, "");
      const inside = (file) => file === root || file.startsWith(root + "/");
      if (kind === "abs") out.push(`${where}: a file of this machine, not of the repository`);
      else if (kind === "up" && !inside(resolve(here, target))) out.push(`${where}: outside the repository`);
      else if (kind === "up" && /\.(md|json)$/.test(target) && !existsSync(resolve(here, target))) {
        out.push(`${where}: no such file in the repository`);
      } else if (kind === "md" && ![resolve(here, target), resolve(root, target)].some((f) => existsSync(f) || ignored(f))) {
        out.push(`${where}: no such file in the repository`);
      }
    }
  });
  return out;
}

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((f) => /\.(md|rs|m?js|ts|sh|html|toml)$|(^|\/)Makefile$/.test(f) && existsSync(join(root, f)));

test("the citation scan sees a .md path, a ../ path and a workspace file, in a comment and not in code", () => {
  assert.deepEqual(citations("see `../shared/DESIGN.md` and /work/shared/data/x.json, docs/rules.md#anchor."), [
    ["/work/shared/data/x.json", "abs"],
    ["../shared/DESIGN.md", "up"],
    ["docs/rules.md", "md"],
  ]);
  assert.deepEqual(citations("https://example.com/a/README.md, `--before /work/main/js`, [--matrix <file.md>]"), []);
  const js = 'const u = "https://x/../y.md"; // as in docs/a.md\n/* b.md\n * c.md */ code("d.md");\nlet s = "it\'s // not";\n';
  assert.deepEqual(comments("x.js", js), ["// as in docs/a.md", "/* b.md", ' * c.md */ code("d.md");', "", ""]);
  assert.deepEqual(comments("x.sh", 'cd ../x # see ../../y.md\necho "#a.md"\n'), ["# see ../../y.md", "", ""]);
});

test("no Markdown file or source comment cites a file outside the repository", () => {
  assert.ok(files.length > 100, `only ${files.length} files listed`);
  assert.deepEqual(files.flatMap(problems), []);
});

test("every DESIGN rule and section cited is in docs/design.md", () => {
  const design = readFileSync(join(root, "docs/design.md"), "utf8");
  const rules = new Set([...design.matchAll(/^(\d+)\. \*\*/gm)].map((m) => m[1]));
  const sections = new Set([...design.matchAll(/^## (\d+)\. /gm)].map((m) => m[1]));
  assert.ok(rules.size >= 15 && sections.size >= 3, "docs/design.md has its rules and sections");
  const missing = [];
  for (const path of files) {
    prose(path).forEach((line, i) => {
      for (const m of line.matchAll(/DESIGN(?:'s)? (rule|§)\s?(\d+)/g)) {
        if (!(m[1] === "rule" ? rules : sections).has(m[2])) missing.push(`${path}:${i + 1}: ${m[0]}`);
      }
    });
  }
  assert.deepEqual(missing, []);
});
