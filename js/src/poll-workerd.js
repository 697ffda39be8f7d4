// `policy.poll()`'s loop (js/src/poll.js over src/host/extra/poller.rs) in
// workerd: a compiled module (Wrangler's default rule for `.wasm`),
// imported and instantiated at the first poll (workerd.js hands the core an
// `import()` of this file). The wasm is imported with `import()` too: a
// bundler that inlines this file (Wrangler) would hoist a static import of
// it to the Worker's top, and the Worker would load it at start.
import { Poller as Machine, initSync } from "./saferetry_poll.js";
import { loadFailed } from "./load.js";
import { polling } from "./poll.js";

try {
  initSync({ module: (await import("./saferetry_poll_bg.wasm")).default });
} catch (error) {
  throw loadFailed("./saferetry_poll_bg.wasm", error);
}

class Poller extends Machine {}

/** Runs a poll (js/src/core.js `poll`) on this module's machine. */
export const poll = (ctx) => polling(Poller, ctx);
