#!/usr/bin/env bash
# Builds the npm package in js/: the wasm module, its wasm-bindgen
# glue (at the CLI version pinned in Cargo.lock) and `wasm-opt -Oz`; then
# prints the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/bootstrap.sh rust node

# Two modules from one crate (src/host/mod.rs): the package's default one
# (`saferetry`: the policy, the engine, the host, the leased client) and the
# fleet's authority (`saferetry_authority`, `--features authority`), which
# only `saferetry/cloudflare`, a leader tab and `import { BudgetAuthority }`
# load.
# wasm-bindgen's output lands in js/src beside the entries, so the wasm is
# always "./saferetry_bg.wasm" from the code that loads it: a bundler that
# does not copy assets needs just that one file copied next to its output.
rm -rf js/pkg js/src/saferetry.js js/src/saferetry_bg.wasm js/src/saferetry_authority.js js/src/saferetry_authority_bg.wasm
module() { # <out-name> [cargo flags]
  local name=$1
  shift
  cargo build --quiet --release --target wasm32-unknown-unknown "$@"
  wasm-bindgen --target web --no-typescript --out-dir js/src --out-name "$name" \
    target/wasm32-unknown-unknown/release/saferetry.wasm
  node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue --strip-debug --strip-producers \
    -o "js/src/${name}_bg.wasm" "js/src/${name}_bg.wasm"
}
module saferetry
module saferetry_authority --features authority
node scripts/size.mjs
