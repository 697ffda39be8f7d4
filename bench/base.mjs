// The packages of `make bench`'s before/after table, built from this
// clone's own history, so it works on a fresh clone: "before" is the
// package at a baseline commit (BENCH_BASE, default issue 26's base, main
// at ee5cc5a), and with `lean` the shipped (LEAN=1) build of it or of this
// checkout's working tree.
//
// A tree (a commit's, or the working tree's as `git add -A` would record
// it, untracked files included, ignored ones not) is extracted with `git
// archive` into test-output/bench-base/<tree>[-lean]/ and built there with
// that tree's own scripts/build.sh (LEAN=1 for `lean`; its cargo artifacts
// in target/bench-base, kept between runs), with two changes to the
// throwaway copy: node_modules is a link to this checkout's, and its
// scripts/bootstrap.sh does nothing (this checkout's bootstrap already
// installed the tools — the caller runs `scripts/bootstrap.sh lean` before
// asking for a lean build — and an `npm ci` there would empty the linked
// node_modules). A package already built for that tree is reused. (The
// wasm-bindgen CLI is this checkout's: a base whose Cargo.lock pins another
// wasm-bindgen version does not build here.)
//
//   node bench/base.mjs            prints the built package's folder (js/)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
export const BASE = process.env.BENCH_BASE ?? "ee5cc5a";

const git = (args, env = {}) => execFileSync("git", args, { cwd: REPO, encoding: "utf8", env: { ...process.env, ...env } }).trim();

/** The base commit's package folder (its `js/`), built if needed:
 * `{ dir, commit, ref }`. */
export function basePackage(ref = BASE, { lean = false } = {}) {
  const commit = git(["rev-parse", "--verify", `${ref}^{commit}`]);
  return { dir: build(commit, lean), commit, ref };
}

/** The working tree's lean package folder, built if needed: `{ dir, tree }`. */
export function leanPackage() {
  const index = path.join(tmpdir(), `saferetry-bench-index-${process.pid}`);
  try {
    const env = { GIT_INDEX_FILE: index };
    git(["read-tree", "HEAD"], env);
    git(["add", "-A"], env);
    const tree = git(["write-tree"], env);
    return { dir: build(tree, true), tree };
  } finally {
    rmSync(index, { force: true });
  }
}

/** Tree-ish `id` extracted into the folder `tree` (emptied first), ready
 * for its own scripts/build.sh: node_modules a link to this checkout's,
 * its cargo artifacts in `target` (kept between runs), its bootstrap a
 * no-op. Files get the time of extraction, not the commit's (`tar -m`),
 * so that cargo rebuilds what a later edit of them changes. */
export function extract(id, tree, target) {
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  execFileSync("bash", ["-c", `git archive --format=tar ${id} | tar -x -m -C "${tree}"`], { cwd: REPO, stdio: "inherit" });
  symlinkSync(path.join(REPO, "node_modules"), path.join(tree, "node_modules"));
  mkdirSync(target, { recursive: true });
  symlinkSync(target, path.join(tree, "target"));
  writeFileSync(path.join(tree, "scripts/bootstrap.sh"), "#!/usr/bin/env bash\n# bench/base.mjs: the tools are this checkout's.\n", { mode: 0o755 });
}

/** Extracts tree-ish `id` and builds its package (LEAN=1 with `lean`); its js/ folder. */
function build(id, lean) {
  const tree = path.join(REPO, "test-output/bench-base", id.slice(0, 12) + (lean ? "-lean" : ""));
  const pkg = path.join(tree, "js");
  if (existsSync(path.join(pkg, "src/saferetry_bg.wasm"))) return pkg;
  extract(id, tree, path.join(REPO, "target/bench-base"));
  console.error(`bench: building the ${lean ? "lean " : ""}package of ${id.slice(0, 12)} in ${path.relative(REPO, tree)}`);
  try {
    execFileSync("bash", ["scripts/build.sh"], { cwd: tree, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, LEAN: lean ? "1" : "" } });
  } catch (error) {
    rmSync(path.join(pkg, "src/saferetry_bg.wasm"), { force: true }); // not reused half-built
    throw error;
  }
  return pkg;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(basePackage().dir);
