#!/usr/bin/env bash
# Builds the npm package in js/: the wasm modules, their wasm-bindgen glue
# (at the CLI version pinned in Cargo.lock) and `wasm-opt -Oz`; then prints
# the sizes.
#
#   scripts/build.sh          stable Rust: what contributors and every test
#                             tier build (`make build`, `make test`)
#   LEAN=1 scripts/build.sh   the shipped build (`make ship`): the nightly
#                             pinned in scripts/lean-toolchain, std rebuilt
#                             with `panic=immediate-abort` (no panic or
#                             formatting machinery in the module; 5.3 KB
#                             gzip less for a page, docs/benchmarks-history.md
#                             "Lean build"); falls back to stable, saying so, when
#                             that toolchain cannot be installed.
#   NAMES=1 scripts/build.sh  only the default module and the browser's
#                             (saferetry_web), with their function names
#                             kept (wasm-opt -g), into target/names/ (or
#                             LEAN=1's target/lean/names/), for
#                             scripts/wasm-profile.mjs; js/ is left as it is.
#   NAMES=all scripts/build.sh  the same for all six modules.
#   NAMES=web scripts/build.sh  the same for the browser's module alone
#                             (bench/page-weights.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/bootstrap.sh rust node

# Source paths kept in the module (std's and the crates' `Location`s) made
# short and machine-independent.
remap=()
for dir in "$HOME"/.cargo/registry/src/*/; do remap+=("--remap-path-prefix=${dir%/}/="); done
remap+=("--remap-path-prefix=$PWD/=")
cargo=(cargo)
target=target
if [ "${LEAN:-}" = 1 ]; then
  nightly=$(cat scripts/lean-toolchain)
  if scripts/bootstrap.sh lean; then
    sysroot=$(rustc "+$nightly" --print sysroot)
    remap+=("--remap-path-prefix=$sysroot/lib/rustlib/src/rust/=")
    # v0 mangling (nightly's default) would lengthen every closure export's name.
    remap+=(-Zunstable-options -Cpanic=immediate-abort -Csymbol-mangling-version=legacy)
    cargo=(cargo "+$nightly" -Zbuild-std=std,panic_abort)
    target=target/lean # its own: the stable build's artifacts stay as they are
  else
    echo "build: $nightly is not available: building with stable (the lean build's figures do not apply)" >&2
  fi
fi
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="${remap[*]}"

# Six modules from one crate (src/host/mod.rs): the package's default one
# (`saferetry`: the policy, the engine, the host) and the same for browsers
# without the redirect hops a browser never runs (`saferetry_web`,
# `--features browser`: js/src/web.js and sw.js load it, Node, Deno, Bun
# and workerd the default one), the fleet's (`saferetry_authority`,
# `--features authority`: the authority and the policies' leased clients),
# which only `saferetry/cloudflare`, a policy with a shared budget and
# `import { BudgetAuthority }` load, and the durable outbox's rules
# (`saferetry_outbox`, `--features outbox`), loaded at a first outbox;
# `policy.poll()`'s loop (`saferetry_poll`, `--features poll`), loaded at a
# first poll; and the Redis budget's (`saferetry_redis`, `--features
# redis`: the fleet's module plus its read–decide–write loop), which only
# `saferetry/redis` loads.
# wasm-bindgen's output lands in js/src beside the entries, so the wasm is
# always "./saferetry_bg.wasm" from the code that loads it: a bundler that
# does not copy assets needs just that one file copied next to its output.
#
# Built for size (rustc `opt-level = "z"`, `wasm-opt -Oz`), but the default
# module (`saferetry`, here and in the names build alike) built for speed
# (`opt-level = 2`, `wasm-opt -O3`): it runs every call in Node, Deno, Bun
# and workerd, whose success path is issue 37's cost, and there its 7 KB
# gzip more buy 4 µs less wasm per call
# (bench/wasm-time.mjs: "stream" 10.1 → 6.1 µs, "buffer" 12.2 → 8.1, "auto"
# 12.7 → 8.4) and 7–9 µs less own CPU (bench/run.mjs); `opt-level = 3` is
# no faster here and 0.6 KB larger, `"s"` saves 1.7 µs. A page's module
# (`saferetry_web`) is bytes first (issue 37's page target), and the others
# run off the success path. BENCHMARKS.md "The default module built for speed".
# Every module with `-ocimfs 1000`: wasm-opt inlines a function with one
# caller only when it is under 1000 bytes (by default it inlines all of
# them). Where wasm compiles a function at its first call (V8 in workerd,
# Node, browsers), the operation's future would otherwise carry every
# function it alone calls — the retry's planning, the facts' text parse,
# a chunked body's read — and the first `policy.fetch` compile them all:
# 58.0 KB of bodies, now 49.1 (bench/lazy-compile.mjs), a Worker's first
# response ~1 ms sooner, no module larger gzipped (the default one −0.5
# KB, the authority's −0.3, the browser's the same), the wasm's µs per
# call unchanged (bench/wasm-time.mjs).
# BENCHMARKS.md "A Worker's cold start, step by step".
module() { # <out-name> [cargo flags]   (into $out, default js/src)
  local name=$1 dir=${out:-js/src}
  shift
  local level=z passes=(-Oz --converge)
  if [ "$name" = saferetry ]; then level=2 passes=(-O3); fi
  CARGO_PROFILE_RELEASE_OPT_LEVEL=$level CARGO_TARGET_DIR=$target "${cargo[@]}" build --quiet --release --target wasm32-unknown-unknown "$@"
  wasm-bindgen --target web --no-typescript --out-dir "$dir" --out-name "$name" \
    "$target/wasm32-unknown-unknown/release/saferetry.wasm"
  # `--converge` (-Oz again until nothing changes) is 0.1 KB gzip less for a
  # page; `--flatten --rereloop` would be 0.3 KB more but rewrites every
  # function's control flow (not measured for speed). Other wasm-opt passes
  # and flags were measured and do not pay (docs/benchmarks-history.md "Lean build").
  # `--low-memory-unused` (constant offsets folded into loads and stores:
  # rustc puts the stack first, so the first 1 KB is never data or heap)
  # and `--merge-similar-functions` (monomorphized copies that differ in a
  # constant merged, the constant a parameter) are 0.3 KB gzip less for a
  # page together and change no behaviour. `--traps-never-happen` would be
  # 0.8 KB more, and `--ignore-implicit-traps` 0.1 KB, but both let a bounds
  # check or an allocation failure run on instead of trapping: not taken.
  # `--strip-target-features`: the features section is for linkers, not for
  # engines (0.1 KB gzip).
  node_modules/.bin/wasm-opt --merge-similar-functions -ocimfs 1000 "${passes[@]}" --low-memory-unused --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue "${strip[@]}" --strip-producers --strip-target-features \
    -o "$dir/${name}_bg.wasm" "$dir/${name}_bg.wasm"
  # Import names without wasm-bindgen's hashes, in the module and its glue
  # alike (scripts/short-imports.mjs: the hashes do not compress).
  node scripts/short-imports.mjs "$dir" "$name"
}
strip=(--strip-debug)
if [ -n "${NAMES:-}" ]; then
  strip=(-g) # the name section stays; the code is the shipped module's
  [ "$NAMES" = web ] || out=$target/names module saferetry
  out=$target/names module saferetry_web --features browser
  if [ "$NAMES" = all ]; then
    out=$target/names module saferetry_authority --features authority
    out=$target/names module saferetry_outbox --features outbox
    out=$target/names module saferetry_poll --features poll
    out=$target/names module saferetry_redis --features redis
  fi
  echo "build: $target/names/*_bg.wasm with their names (node scripts/wasm-profile.mjs)"
  exit 0
fi
rm -rf js/pkg js/src/saferetry.js js/src/saferetry_bg.wasm js/src/saferetry_web.js js/src/saferetry_web_bg.wasm js/src/saferetry_authority.js js/src/saferetry_authority_bg.wasm js/src/saferetry_outbox.js js/src/saferetry_outbox_bg.wasm js/src/saferetry_poll.js js/src/saferetry_poll_bg.wasm js/src/saferetry_redis.js js/src/saferetry_redis_bg.wasm
module saferetry
module saferetry_web --features browser
module saferetry_authority --features authority
module saferetry_outbox --features outbox
module saferetry_poll --features poll
module saferetry_redis --features redis
node scripts/size.mjs
