# workerd config for the saferetry Worker example (www/worker/worker.js).
#
#   UPSTREAM=http://127.0.0.1:PORT node_modules/.bin/workerd serve www/worker/config.capnp
#
# (www/worker/run.mjs does this with a fault server as the upstream, on a free
# port: --socket-addr http=127.0.0.1:0 --control-fd 3.) Run `make build` first:
# the wasm module and its glue come from js/src/ (generated there).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # Outbound fetch may reach loopback addresses only.
    (name = "loopback", network = (allow = ["127.0.0.0/8", "::1/128"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

# workerd resolves `import ... from "saferetry"` in "worker/worker.js" as the
# module named "worker/saferetry", and that module's own relative imports
# against the same folder: so the package's modules are named as siblings
# of its entry. Every module the entry can reach is listed, the ones it
# imports only when used too (workerd cannot load a module it was not
# given): the fleet's (authority-*.js, lease-relay.js, saferetry_authority*),
# instantiated at a first `new BudgetAuthority()` or shared budget; the
# poll's (poll*.js, saferetry_poll*), at a first poll; the outbox's
# (outbox*.js, saferetry_outbox*), at a first outbox. The demo tier checks
# this list against the entry's imports (tests/demo/worker.test.mjs).
const worker :Workerd.Worker = (
  modules = [
    (name = "worker/worker.js", esModule = embed "worker.js"),
    (name = "worker/saferetry", esModule = embed "../../js/src/workerd.js"),
    (name = "worker/core.js", esModule = embed "../../js/src/core.js"),
    (name = "worker/executor.js", esModule = embed "../../js/src/executor.js"),
    (name = "worker/attempts.js", esModule = embed "../../js/src/attempts.js"),
    (name = "worker/body.js", esModule = embed "../../js/src/body.js"),
    (name = "worker/hops.js", esModule = embed "../../js/src/hops.js"),
    (name = "worker/held.js", esModule = embed "../../js/src/held.js"),
    (name = "worker/packed.js", esModule = embed "../../js/src/packed.js"),
    (name = "worker/shape.js", esModule = embed "../../js/src/shape.js"),
    (name = "worker/kept.js", esModule = embed "../../js/src/kept.js"),
    (name = "worker/request.js", esModule = embed "../../js/src/request.js"),
    (name = "worker/options.js", esModule = embed "../../js/src/options.js"),
    (name = "worker/load.js", esModule = embed "../../js/src/load.js"),
    (name = "worker/lease.js", esModule = embed "../../js/src/lease.js"),
    (name = "worker/tabs.js", esModule = embed "../../js/src/tabs.js"),
    (name = "worker/saferetry.js", esModule = embed "../../js/src/saferetry.js"),
    (name = "worker/saferetry_bg.wasm", wasm = embed "../../js/src/saferetry_bg.wasm"),
    (name = "worker/authority-workerd.js", esModule = embed "../../js/src/authority-workerd.js"),
    (name = "worker/authority-lazy.js", esModule = embed "../../js/src/authority-lazy.js"),
    (name = "worker/authority-api.js", esModule = embed "../../js/src/authority-api.js"),
    (name = "worker/authority.js", esModule = embed "../../js/src/authority.js"),
    (name = "worker/lease-relay.js", esModule = embed "../../js/src/lease-relay.js"),
    (name = "worker/saferetry_authority.js", esModule = embed "../../js/src/saferetry_authority.js"),
    (name = "worker/saferetry_authority_bg.wasm", wasm = embed "../../js/src/saferetry_authority_bg.wasm"),
    (name = "worker/poll-workerd.js", esModule = embed "../../js/src/poll-workerd.js"),
    (name = "worker/poll.js", esModule = embed "../../js/src/poll.js"),
    (name = "worker/saferetry_poll.js", esModule = embed "../../js/src/saferetry_poll.js"),
    (name = "worker/saferetry_poll_bg.wasm", wasm = embed "../../js/src/saferetry_poll_bg.wasm"),
    (name = "worker/outbox-workerd.js", esModule = embed "../../js/src/outbox-workerd.js"),
    (name = "worker/outbox.js", esModule = embed "../../js/src/outbox.js"),
    (name = "worker/outbox-rules-workerd.js", esModule = embed "../../js/src/outbox-rules-workerd.js"),
    (name = "worker/saferetry_outbox.js", esModule = embed "../../js/src/saferetry_outbox.js"),
    (name = "worker/saferetry_outbox_bg.wasm", wasm = embed "../../js/src/saferetry_outbox_bg.wasm"),
    (name = "worker/outbox-stores/memory.js", esModule = embed "../../js/src/outbox-stores/memory.js"),
  ],
  compatibilityDate = "2025-06-01",
  bindings = [(name = "UPSTREAM", fromEnvironment = "UPSTREAM")],
  globalOutbound = "loopback",
);
