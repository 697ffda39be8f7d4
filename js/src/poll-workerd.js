// `policy.poll()`'s loop (js/src/poll.js over src/host/extra/poller.rs) in
// workerd: a compiled module (Wrangler's default rule for `.wasm`),
// instantiated at the first poll (workerd.js hands the core `instantiate`).
// Imported statically, not with `import()`: Wrangler lists every wasm the
// bundle reaches as a module of the Worker, and workerd compiles each one
// at startup either way; but an `import()` makes esbuild wrap every module
// the target shares with the Worker's entry in a function of its own,
// which V8 then parses twice at startup (BENCHMARKS.md "What a start is
// made of, by V8's accounts").
import wasm from "./saferetry_poll_bg.wasm";
import { Poller as Machine, initSync } from "./saferetry_poll.js";
import { instantiated } from "./load.js";
import { polling } from "./poll.js";

class Poller extends Machine {}

/** What a poll's module answers (js/src/core.js `poll`): a poll run on this module's machine. */
const polls = { poll: (ctx) => polling(Poller, ctx) };

/** The poll's module, its wasm instantiated (at the first poll: js/src/load.js `polls`). */
export function instantiate() {
  instantiated(initSync, wasm, "./saferetry_poll_bg.wasm");
  return polls;
}
