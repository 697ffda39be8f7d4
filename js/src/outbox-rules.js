// The durable outbox's rules, `OutboxRules` (docs/outbox.md "Outbox"), in browsers
// and bundlers: a wasm module of its own (src/host/mod.rs), fetched when
// the first outbox opens (outbox-web.js, `import()`). Its wasm file sits
// beside it, as the package's own does.
import { initSync, OutboxRules as Rules } from "./saferetry_outbox.js";
import { compiled } from "./compile.js";
import { loadFailed } from "./load.js";

const wasm = new URL("./saferetry_outbox_bg.wasm", import.meta.url);
try {
  initSync({ module: await compiled(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}

// A class of this file's own (not a re-export of the glue's), so that no
// bundler links the glue directly and drops the initialisation above.
export class OutboxRules extends Rules {}
