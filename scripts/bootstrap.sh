#!/usr/bin/env bash
# Installs what `make build`, `make test` and `make demo` need, only when missing.
# Idempotent: a second run on a ready machine takes a second or two.
# Usage: scripts/bootstrap.sh [rust|node|browsers|redis|lean|all]...
# (`lean`, the shipped build's nightly, is not part of `all`: only
# `LEAN=1 scripts/build.sh` / `make ship` needs it.)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'bootstrap: %s\n' "$*" >&2; }

rust() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "adding rustup target wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
  # The CLI must equal the wasm-bindgen crate in Cargo.lock.
  local want
  want=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/"/,"",$3); print $3; exit}' Cargo.lock)
  if ! command -v wasm-bindgen >/dev/null || [ "$(wasm-bindgen --version | awk '{print $2}')" != "$want" ]; then
    say "installing wasm-bindgen-cli $want (about 2 minutes)"
    # --force: cargo's own record may say "installed" while the binary is
    # gone (a cleaned or half-copied ~/.cargo), and would then do nothing.
    cargo install --force wasm-bindgen-cli --version "=$want"
  fi
}

# The shipped build's toolchain (LEAN=1 scripts/build.sh): the pinned
# nightly with std's sources, for -Zbuild-std. Fails (the build then falls
# back to stable) when rustup cannot reach it.
lean() {
  local nightly
  nightly=$(cat scripts/lean-toolchain)
  if ! rustup run "$nightly" rustc --version >/dev/null 2>&1 \
    || ! [ -d "$(rustup run "$nightly" rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
    say "installing $nightly with rust-src (the lean build's toolchain)"
    rustup toolchain install "$nightly" --component rust-src --profile minimal
  fi
}

node() {
  # npm ci when node_modules is missing, older than the lock file, or lacks
  # a tool a tier runs (a half-removed or hand-edited node_modules).
  local bin stale=
  for bin in tsc wasm-opt esbuild vite webpack wrangler bun deno workerd; do
    [ -x "node_modules/.bin/$bin" ] || stale=1
  done
  if [ -n "$stale" ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci"
    npm ci --no-audit --no-fund
  fi
}

apt_install() {
  if [ "$(id -u)" != 0 ]; then
    say "not root: install $* yourself"; return 0
  fi
  # Another apt (unattended upgrades, a second checkout's bootstrap) may hold
  # the dpkg lock: wait for it rather than fail.
  local wait=(-o DPkg::Lock::Timeout=600)
  if [ ! -f /tmp/.saferetry-apt-updated ]; then
    apt-get "${wait[@]}" update -qq && touch /tmp/.saferetry-apt-updated
  fi
  DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq --no-install-recommends "$@" >/dev/null
}

browsers() {
  local need=()
  command -v chromium >/dev/null || need+=(chromium)
  command -v chromedriver >/dev/null || need+=(chromium-driver)
  command -v firefox-esr >/dev/null || need+=(firefox-esr)
  command -v WebKitWebDriver >/dev/null || need+=(webkit2gtk-driver)
  command -v xvfb-run >/dev/null || need+=(xvfb xauth)
  if [ ${#need[@]} -gt 0 ]; then
    say "apt-get install ${need[*]}"
    apt_install "${need[@]}"
  fi
  if ! command -v geckodriver >/dev/null; then
    say "installing geckodriver (about 3 minutes)"
    cargo install --force geckodriver --version '^0.37'
  fi
}

# The fleet-redis tier's redis-server (Debian's package; the tier starts
# its own on a free port and never uses the system service).
redis() {
  if ! command -v redis-server >/dev/null; then
    say "apt-get install redis-server"
    apt_install redis-server
  fi
}

[ $# -gt 0 ] || set -- all
for part in "$@"; do
  case "$part" in
    rust) rust ;;
    node) node ;;
    browsers) browsers ;;
    redis) redis ;;
    lean) lean ;;
    all) rust; node; browsers; redis ;;
    *) say "unknown part $part"; exit 2 ;;
  esac
done
