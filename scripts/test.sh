#!/usr/bin/env bash
# Runs every test tier, one summary line per tier, and a final
# "N passed, M failed" over the tiers. Exits non-zero if any tier failed.
# TIERS="fmt native" scripts/test.sh runs a subset.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
mkdir -p test-output

scripts/bootstrap.sh all || { echo "bootstrap failed"; exit 1; }
# Every tool is resolved now, after bootstrap, in one place (scripts/tools.sh).
source scripts/tools.sh
resolve_tools
scripts/build.sh >test-output/build.log 2>&1 || { cat test-output/build.log; echo "build failed"; exit 1; }
tail -n 6 test-output/build.log

ALL="fmt clippy native wasm-node wasm-chromium sdks types pack e2e-node e2e-deno e2e-bun e2e-workerd e2e-chromium e2e-firefox e2e-webkit e2e-bundle fidelity streams fleet-workerd fleet-redis crash-node throttle bundlers browser-errors fleet-browsers leaks-node leaks-chromium outbox demo otel docs"
results=test-output/results
rm -rf "$results" && mkdir -p "$results"

# Each tier leaves its summary line in $results/<name> ("passed"/"FAILED"
# first), so tiers can run in lanes side by side and still be counted here.
# Whether tier $1 is one of those run.
selected() { [[ " ${TIERS:-$ALL} " == *" $1 "* ]]; }

tier() { # name, command...
  local name=$1; shift
  selected "$name" || return 0
  local log="test-output/$name.log" start=$SECONDS missing status detail
  missing=$(need_tools "$name")
  [ -z "$missing" ] || echo "tier $name needs $missing, which bootstrap did not install (scripts/bootstrap.sh)" >"$log"
  if [ -z "$missing" ] && "$@" >"$log" 2>&1; then status=passed; else status=FAILED; fi
  detail=$(grep -E '^(test result:|[0-9]+ passed, [0-9]+ failed|# (pass|fail) )' "$log" | tail -n 2 | tr '\n' ' ')
  printf 'tier %-14s %-7s %4ss  %s\n' "$name" "$status" $((SECONDS - start)) "$detail" | tee "$results/$name"
}

# Waits (bounded) for the package lane's pack tier, when it is one of those
# run, before a tier of the other lane uses the packed project.
after_pack() {
  selected pack || return 0
  local i=0
  while [ ! -f "$results/pack" ] && [ $i -lt 600 ]; do sleep 1; i=$((i + 1)); done
}

# Waits (bounded) until the Rust lane's process has ended, however it ended.
after_rust() {
  local i=0
  while kill -0 "$rust" 2>/dev/null && [ $i -lt 1800 ]; do sleep 1; i=$((i + 1)); done
}

# One line over every native test binary, in cargo's own words.
native_tests() {
  cargo test --all-targets 2>&1 |
    awk '{print} /^test result:/ {p += $4; f += $6} END {printf "test result: %s. %d passed; %d failed\n", (f ? "FAILED" : "ok"), p, f; exit (f > 0)}'
}

# Two lanes side by side (a fresh clone spends ~5 minutes compiling the Rust
# tiers; the package's tiers need only the build above). The Rust lane is
# compilation and table tests, then the SDK and outbox tiers (their own
# packed project and pages), then three runtimes' e2e suites, the bundlers,
# types and docs: none waits on a tight bound. The package lane runs the
# other runtimes, fidelity, leaks and fleets one at a time, and keeps the
# tiers whose bounds are about time for last, when it runs alone.
rust_lane() {
  tier fmt           cargo fmt --check
  tier clippy        bash -c 'cargo clippy --all-targets -- -D warnings && cargo clippy --release --target wasm32-unknown-unknown -- -D warnings && cargo clippy --release --target wasm32-unknown-unknown --features authority -- -D warnings && cargo clippy --release --target wasm32-unknown-unknown --features outbox -- -D warnings && cargo clippy --release --target wasm32-unknown-unknown --features poll -- -D warnings && cargo clippy --release --target wasm32-unknown-unknown --features redis -- -D warnings && cargo clippy --release --target wasm32-unknown-unknown --features browser -- -D warnings'
  tier native        native_tests
  tier wasm-node     cargo test --target wasm32-unknown-unknown --features std --lib --test policy_tables
  tier wasm-chromium env WASM_BINDGEN_USE_BROWSER=1 cargo test --target wasm32-unknown-unknown --features std --lib --test policy_tables
  tier sdks          bash -c 'bash scripts/pack-install.sh test-output/sdks-project >/dev/null || exit 1; node tests/sdks/run.mjs test-output/sdks-project; node=$?; node tests/sdks/hosts.mjs test-output/sdks-project && [ $node -eq 0 ]'
  # the durable outbox: Node stores and restarts, IndexedDB + Web Locks in three browsers, a Durable Object (tests/outbox)
  tier outbox        node tests/outbox/run.mjs
  # Tiers that wait on no tight bound, moved here to even the lanes out (the
  # package lane was ~25 of a fresh clone's ~29 minutes); those on the packed
  # project wait for the package lane's pack first.
  tier types         node_modules/.bin/tsc --strict --noEmit -p tests/types
  # every relative link and #anchor in README.md, BENCHMARKS.md, docs/*.md and the suites' READMEs resolves inside the repository, no doc or source comment cites a file outside it, and the README's examples run as written in Node and workerd (tests/docs)
  tier docs          node --test tests/docs/
  after_pack
  tier bundlers      node tests/bundlers/run.mjs test-output/project
  local rt
  for rt in deno bun bundle; do
    tier "e2e-$rt"   node tests/runtimes/run.mjs "$rt" test-output/project
  done
}
package_lane() {
  tier pack          bash scripts/pack-install.sh test-output/project
  tier e2e-node      bash -c 'cd test-output/project && node run-node.mjs'
  local rt
  for rt in workerd chromium firefox webkit; do
    tier "e2e-$rt"   node tests/runtimes/run.mjs "$rt" test-output/project
  done
  # policy.fetch against the host's fetch, side by side, in all seven runtimes (tests/fidelity)
  tier fidelity      node tests/fidelity/run-all.mjs test-output/project
  tier fleet-workerd node tests/fleet/workerd.mjs
  # no wasm export answers a lone JS value, and four fresh Node processes under load through a Redis outage do not die (tests/fleet/crash.mjs)
  tier crash-node    node tests/fleet/crash.mjs
  # how fetch fails in the three browsers as measured, the offline wait in Chromium, and what a page under a service worker gets
  tier browser-errors bash -c 'node tests/browsers/measure-failures.mjs --check && node tests/browsers/offline.mjs && node tests/browsers/service-worker.mjs'
  tier leaks-node    node tests/leaks/run.mjs node
  tier leaks-chromium node tests/leaks/run.mjs chromium
  tier fleet-browsers node tests/fleet/browsers.mjs
  # saferetry/otel with the real SDKs: Node (sdk-trace-base, sdk-metrics, context-async-hooks, instrumentation-undici), Chromium (sdk-trace-web, instrumentation-fetch), workerd (the API alone) (tests/otel)
  tier otel          node --test --test-concurrency=1 tests/otel/
  # Last, once the Rust lane has ended (waited for): the tiers whose bounds
  # are about time (a hand-over at 250 ms, a deadline plus the timers' lag,
  # a shared rate a second), so that no other tier's load runs beside them.
  after_rust
  # one budget in a real redis-server shared by four Node processes, one Deno and one Bun (tests/fleet/redis.mjs)
  tier fleet-redis   node tests/fleet/redis.mjs
  # slow text streams (six Content-Types, GET and POST) through fetch and policy.fetch side by side, in all seven runtimes (tests/streams)
  tier streams       node tests/streams/run-all.mjs test-output/project
  # adaptive throttling shared by a fleet: an upstream down 30 s, 3 clients per variant — Node processes on redisBudget (beside throttle: false, cockatiel's breaker and an AWS-style limiter), then workerd isolates on durableBudget and Chromium tabs on tabBudget (tests/fleet/throttle.mjs)
  tier throttle      node tests/fleet/throttle.mjs
  tier demo          node --test tests/demo/
}
rust_lane & rust=$!
package_lane & package=$!
wait $rust $package

echo
passed=0; failed=0; failed_names=()
for name in $ALL; do
  selected "$name" || continue
  # A tier asked for that left no line never ran (its lane died): failed.
  if [ ! -f "$results/$name" ]; then
    printf 'tier %-14s %-7s %4ss  %s\n' "$name" FAILED 0 "did not run" >"$results/$name"
    # Worded as a failure line, so that the lines beside the count name it too.
    echo "FAIL: did not run: its lane ended before it (see the lines above the table)" >"test-output/$name.log"
  fi
  if [ "$(awk '{print $3}' "$results/$name")" = passed ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); failed_names+=("$name"); echo "---- $name failed; last lines of test-output/$name.log:"; tail -n 40 "test-output/$name.log"; fi
done
for name in $ALL; do [ -f "$results/$name" ] && cat "$results/$name"; done
# The failed tiers' own failure lines last, beside the count: a CI that shows
# only the end of this output still names what failed (a case, a test).
for name in "${failed_names[@]}"; do
  grep -E '^[[:space:]]*(FAIL|not ok|test .* FAILED|✖)' "test-output/$name.log" | head -n 6 | cut -c1-400 | sed "s/^/$name: /"
done
echo "tiers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
