// `policy.poll()`'s loop (js/src/poll.js over src/host/extra/poller.rs) in Node,
// Deno and Bun: its wasm read from disk and compiled at the first poll
// (node.js hands the core an `import()` of this file), so a process that
// never polls reads none of it.
import { readFileSync } from "node:fs";
import { Poller as Machine, initSync } from "./saferetry_poll.js";
import { loadFailed } from "./load.js";
import { polling } from "./poll.js";

const wasm = new URL("./saferetry_poll_bg.wasm", import.meta.url);
try {
  initSync({ module: readFileSync(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}

class Poller extends Machine {}

/** Runs a poll (js/src/core.js `poll`) on this module's machine. */
export const poll = (ctx) => polling(Poller, ctx);
