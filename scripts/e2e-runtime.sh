#!/usr/bin/env bash
# Runs the e2e suite against the packed package in the given runtimes (default:
# all of them), one after the other, and prints one summary line per runtime
# and "runtimes: N passed, M failed". Exits non-zero if any runtime failed.
#   scripts/e2e-runtime.sh [deno] [bun] [workerd] [chromium] [firefox] [webkit] [bundle]
# PROJECT (default test-output/project) must hold the installed tarball
# (scripts/pack-install.sh); it is created when missing. FILTER narrows the cases.
set -uo pipefail
cd "$(dirname "$0")/.."
project=${PROJECT:-test-output/project}
[ $# -gt 0 ] || set -- deno bun workerd chromium firefox webkit bundle
if [ ! -f "$project/node_modules/saferetry/package.json" ]; then
  bash scripts/pack-install.sh "$project" || exit 1
fi
mkdir -p test-output
passed=0; failed=0; summary=()
for rt in "$@"; do
  log="test-output/e2e-$rt.log" start=$SECONDS
  if node tests/runtimes/run.mjs "$rt" "$project" ${FILTER:+"$FILTER"} >"$log" 2>&1; then
    passed=$((passed + 1)); status=passed
  else
    failed=$((failed + 1)); status=FAILED
    grep -E '^(FAIL|page failed|run.mjs:)' "$log" | sed "s/^/  $rt: /"
  fi
  detail=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  summary+=("$(printf 'e2e %-9s %-7s %4ss  %s' "$rt" "$status" $((SECONDS - start)) "${detail:-no count line, see $log}")")
  echo "${summary[-1]}"
done
echo
printf '%s\n' "${summary[@]}"
echo "runtimes: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
