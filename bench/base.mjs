// The "before" package of `make bench`'s before/after table: the package as
// built at a baseline commit (BENCH_BASE, default issue 19's base, 3c83535),
// from this clone's own history, so it works on a fresh clone.
//
// The commit's tree is extracted with `git archive` into
// test-output/bench-base/<commit>/ and built there with that commit's own
// scripts/build.sh (stable Rust; its cargo artifacts in target/bench-base,
// kept between runs), with two changes to the throwaway copy: node_modules
// is a link to this checkout's, and its scripts/bootstrap.sh does nothing
// (this checkout's bootstrap already installed the tools, and an `npm ci`
// there would empty the linked node_modules). A package already built for
// that commit is reused. (The wasm-bindgen CLI is this checkout's: a base
// whose Cargo.lock pins another wasm-bindgen version does not build here.)
//
//   node bench/base.mjs            prints the built package's folder (js/)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
export const BASE = process.env.BENCH_BASE ?? "3c83535";

const git = (...args) => execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();

/** The base commit's package folder (its `js/`), built if needed:
 * `{ dir, commit, ref }`. */
export function basePackage(ref = BASE) {
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const tree = path.join(REPO, "test-output/bench-base", commit.slice(0, 12));
  const pkg = path.join(tree, "js");
  if (existsSync(path.join(pkg, "src/saferetry_bg.wasm"))) return { dir: pkg, commit, ref };
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  execFileSync("bash", ["-c", `git archive --format=tar ${commit} | tar -x -C "${tree}"`], { cwd: REPO, stdio: "inherit" });
  symlinkSync(path.join(REPO, "node_modules"), path.join(tree, "node_modules"));
  const target = path.join(REPO, "target/bench-base");
  mkdirSync(target, { recursive: true });
  symlinkSync(target, path.join(tree, "target"));
  writeFileSync(path.join(tree, "scripts/bootstrap.sh"), "#!/usr/bin/env bash\n# bench/base.mjs: the tools are this checkout's.\n", { mode: 0o755 });
  console.error(`bench: building the before package at ${ref} (${commit.slice(0, 12)}) in ${path.relative(REPO, tree)}`);
  execFileSync("bash", ["scripts/build.sh"], { cwd: tree, stdio: ["ignore", "ignore", "inherit"] });
  return { dir: pkg, commit, ref };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(basePackage().dir);
