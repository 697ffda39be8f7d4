# The two commands that matter: `make demo` and `make test`. Both install
# what is missing first (scripts/bootstrap.sh) and are quick when it is there.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo test build ship bench profile bootstrap worker clean fuzz

demo: build
	node www/demo.mjs

test:
	scripts/test.sh

build:
	scripts/build.sh

# The shipped build: the same package from the pinned nightly with std
# rebuilt for `panic=immediate-abort` (BENCHMARKS.md "Lean build"); stable
# when that nightly cannot be installed.
ship:
	LEAN=1 scripts/build.sh

# Figures, not pass/fail: size, overhead in Node, page load in Chromium,
# workerd cold start and CPU per request, where a successful call's time
# goes (BENCHMARKS.md), each for the package at BENCH_BASE (default
# ee5cc5a, issue 26's base; built by bench/base.mjs) beside this checkout,
# both as the lean build where its toolchain installs, ending with one
# before/after table (bench/table.mjs runs run.mjs, pageload.mjs,
# workerd-cpu.mjs and profile.mjs); bench/coldstart.mjs says where a
# Worker's cold start goes, step by step, bench/page-split.mjs how
# small a page's wasm could get by loading only what a successful call runs,
# bench/page-weights.mjs what each guarantee weighs in it,
# and bench/runtimes.mjs what a successful call costs beside fetch in Node,
# Deno, Bun, Chromium, Firefox and WebKit.
bench: build
	scripts/bootstrap.sh browsers redis
	node bench/fleet.mjs
	node bench/redis.mjs
	node bench/coldstart.mjs
	node bench/page-split.mjs
	node bench/page-weights.mjs
	node bench/runtimes.mjs
	node bench/table.mjs

# Just the profile of the success path (issue 37): µs per call by group
# (wasm, executor/glue, Request, Response, AbortSignal, timers, promise
# jobs, sockets, GC, idle) beside raw fetch, the smallest wrapper and ky,
# with and without a caller's signal, in Node and workerd (~5 minutes;
# bench/profile.mjs; BENCH_BEFORE=<a built js/ folder, e.g. from `node
# bench/base.mjs`> adds a package beside).
profile: build
	node bench/profile.mjs

worker: build
	node www/worker/run.mjs

# The SDK tier (tests/sdks/README.md): eight SDKs on plain fetch vs policy.fetch.
.PHONY: sdks
sdks: build
	bash scripts/pack-install.sh test-output/sdks-project
	node tests/sdks/run.mjs test-output/sdks-project

# The fidelity tier (tests/fidelity/README.md): policy.fetch against the
# host's fetch, side by side, in all seven runtimes.
.PHONY: fidelity
fidelity: build
	scripts/bootstrap.sh browsers
	bash scripts/pack-install.sh test-output/project
	node tests/fidelity/run-all.mjs test-output/project

# The streams tier (tests/streams/README.md): slow text streams through
# fetch and policy.fetch side by side, in all seven runtimes (~2 minutes).
.PHONY: streams
streams: build
	scripts/bootstrap.sh browsers
	bash scripts/pack-install.sh test-output/project
	node tests/streams/run-all.mjs test-output/project

bootstrap:
	scripts/bootstrap.sh all

# Every policy fuzz target for FUZZ_SECONDS (default 60) each, on stable.
fuzz:
	scripts/fuzz.sh

clean:
	rm -rf target js/pkg test-output
