// `policy.poll()`'s loop (js/src/poll.js over src/host/extra/poller.rs) in
// browsers and bundlers: a wasm module of its own, fetched at the first
// poll (web.js hands the core an `import()` of this file), so a page that
// never polls loads none of it. Its wasm file sits beside it, as the
// package's own does.
import { initSync, Poller as Machine } from "./saferetry_poll.js";
import { compiled } from "./compile.js";
import { loadFailed } from "./load.js";
import { polling } from "./poll.js";

const wasm = new URL("./saferetry_poll_bg.wasm", import.meta.url);
try {
  initSync({ module: await compiled(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}

// A class of this file's own (not a re-export of the glue's), so that no
// bundler links the glue directly and drops the initialisation above.
class Poller extends Machine {}

/** Runs a poll (js/src/core.js `poll`) on this module's machine. */
export const poll = (ctx) => polling(Poller, ctx);
