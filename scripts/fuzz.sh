#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for FUZZ_SECONDS (default 60) each and
# prints libFuzzer's final line per target; exits non-zero if any target
# found a crash (the input is in fuzz/artifacts/<target>/).
#   FUZZ_SECONDS=600 scripts/fuzz.sh            # longer runs
#   FUZZ_TARGETS="rate quota" scripts/fuzz.sh   # a subset
# Works on the stable toolchain: libFuzzer's coverage instrumentation is
# plain `-C` flags; only sanitizers need nightly, so they are off (`-s none`).
# See fuzz/README.md.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTUP_TOOLCHAIN="${FUZZ_TOOLCHAIN:-stable}"
seconds="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-retry_after rate backoff_limits quota classify_options rate_limit}"

if ! command -v cargo-fuzz >/dev/null; then
  echo "fuzz: installing cargo-fuzz (about 2 minutes)" >&2
  cargo install --force cargo-fuzz --version '^0.13' || exit 1
fi
mkdir -p test-output
(cd fuzz && cargo fuzz build -s none) || { echo "fuzz: build failed"; exit 1; }

failed=0
for t in $targets; do
  log="test-output/fuzz-$t.log"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=("-dict=$t.dict")
  if (cd fuzz && cargo fuzz run -s none "$t" -- -max_total_time="$seconds" "${dict[@]}") >"$log" 2>&1; then
    status=ok
  else
    status=CRASH; failed=$((failed + 1))
    grep -E -A12 "panicked|ERROR: libFuzzer" "$log" | head -n 30
  fi
  printf 'fuzz %-17s %-5s %s\n' "$t" "$status" "$(grep -E '^#[0-9]+.*DONE' "$log" | tail -n 1)"
done
[ "$failed" -eq 0 ]
