// The durable outbox's rules, `OutboxRules`, in workerd: a compiled module
// import (Wrangler's default rule for `.wasm`), instantiated when the first
// outbox opens (outbox-workerd.js). Imported statically, as workerd.js
// imports the poll's module (poll-workerd.js says why). A Worker that does
// not use an outbox drops this file and the wasm with it.
import wasm from "./saferetry_outbox_bg.wasm";
import { OutboxRules as Rules, initSync } from "./saferetry_outbox.js";
import { instantiated } from "./load.js";

class OutboxRules extends Rules {}

/** The rules' class, its wasm instantiated (once: the glue keeps its instance). */
export function outboxRules() {
  instantiated(initSync, wasm, "./saferetry_outbox_bg.wasm");
  return OutboxRules;
}
