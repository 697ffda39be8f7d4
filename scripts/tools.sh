# Sourced by scripts/test.sh *after* scripts/bootstrap.sh: resolves, in one
# place, every tool a tier runs, so nothing is looked up before it was
# installed. `need_tools TIER` prints the tools that tier needs and lacks;
# the tier then fails naming them instead of running with an empty path.

# tool name -> how it is found (a PATH command, or a file in the repo)
declare -A TOOL_PATH=()
resolve_tools() {
  local t
  for t in cargo rustup wasm-bindgen wasm-bindgen-test-runner chromium chromedriver \
           firefox-esr geckodriver WebKitWebDriver Xvfb xvfb-run npm redis-server; do
    TOOL_PATH[$t]=$(command -v "$t" || true)
  done
  for t in tsc wasm-opt esbuild vite webpack wrangler bun deno workerd; do
    TOOL_PATH[$t]=$([ -x "node_modules/.bin/$t" ] && echo "$PWD/node_modules/.bin/$t" || true)
  done
  # wasm-bindgen-test-runner drives the browser whose driver variable is
  # set: only Chromium's, and only to a real path (an empty one makes it
  # spawn ""). The JS browser tiers find their drivers on PATH themselves.
  unset CHROMEDRIVER
  [ -z "${TOOL_PATH[chromedriver]}" ] || export CHROMEDRIVER=${TOOL_PATH[chromedriver]}
}

# What each tier runs besides node (always there: the scripts run on it).
declare -A TIER_TOOLS=(
  [fmt]="cargo" [clippy]="cargo" [native]="cargo"
  [wasm-node]="cargo wasm-bindgen-test-runner"
  [wasm-chromium]="cargo wasm-bindgen-test-runner chromium chromedriver"
  [types]="tsc" [pack]="npm" [e2e-node]=""
  [e2e-deno]="deno" [e2e-bun]="bun" [e2e-workerd]="workerd"
  [e2e-chromium]="chromium chromedriver" [e2e-firefox]="firefox-esr geckodriver"
  [e2e-webkit]="WebKitWebDriver Xvfb" [e2e-bundle]="esbuild chromium chromedriver"
  [fidelity]="deno bun workerd chromium chromedriver firefox-esr geckodriver WebKitWebDriver Xvfb"
  [streams]="deno bun workerd chromium chromedriver firefox-esr geckodriver WebKitWebDriver Xvfb"
  [fleet-workerd]="wrangler workerd"
  [fleet-redis]="redis-server deno bun" [crash-node]="redis-server" [throttle]="redis-server wrangler workerd chromium chromedriver"
  [bundlers]="esbuild vite webpack wrangler bun deno workerd chromium chromedriver"
  [sdks]="npm esbuild workerd chromium chromedriver"
  [browser-errors]="chromium chromedriver firefox-esr geckodriver WebKitWebDriver Xvfb"
  [fleet-browsers]="chromium chromedriver firefox-esr geckodriver WebKitWebDriver Xvfb"
  [leaks-node]="" [leaks-chromium]="chromium" [demo]="chromium"
  [otel]="esbuild wrangler workerd chromium"
  [docs]="wrangler workerd"
  [outbox]="deno bun wrangler workerd chromium chromedriver firefox-esr geckodriver WebKitWebDriver Xvfb"
)

need_tools() {
  local t missing=()
  for t in ${TIER_TOOLS[$1]-}; do
    [ -n "${TOOL_PATH[$t]:-}" ] || missing+=("$t")
  done
  echo "${missing[*]}"
}
