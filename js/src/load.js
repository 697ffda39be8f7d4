// Whether the wasm module is ready, and the errors when it is not. Each
// runtime's entry instantiates its module — the full one (saferetry.js) or,
// in browsers, the one without redirect hops (saferetry_web.js) — and
// calls `loaded()` with its glue; the API checks `assertLoaded()` so that a
// build which lost the entry's initialisation says so instead of failing
// deep inside the glue.
const BUNDLING = 'see "Install and bundle" in saferetry\'s README';
let ready = false;
let hops; // hops.js's `follow`: a browser's `fetch` follows redirects itself (src/policy/redirect.rs)
let held; // held.js's `HeldResponse`: where a buffered body may be held as bytes (src/policy/runtime.rs `holding`)
let pollModule; // the entry's loader of its poll module (js/src/poll-web.js, poll-node.js, poll-workerd.js)
let polling;
let fleetModule; // the entry's loader of the fleet's module for a tabBudget (js/src/tabs.js)

/** The policy class of the module the entry loaded (core.js reads it). */
export let Policy;
let machineExports;
let checkOptions;

/** Called by the runtime's entry once its wasm module is instantiated, with
 * the module's glue (wasm-bindgen's JS module), the instance's exports (its
 * memory), outside browsers hops.js's `follow`, how to load the poll's
 * module (`policy.poll`'s loop: js/src/poll.js and its wasm, loaded at the
 * first poll) and, in Node and workerd, held.js's `HeldResponse`. */
export function loaded(glue, instance, follow, poll, holding) {
  Policy = glue.Policy;
  checkOptions = glue.checkOptions;
  // What js/src/executor.js calls: the machines' events, by number, and the
  // buffer their work is read from.
  const { machineWork, machineChain, onSettled, onNumber, onText, onTimer, onOnline, onEvent, outcomeText } = glue;
  machineExports = { machineWork, machineChain, onSettled, onNumber, onText, onTimer, onOnline, onEvent, outcomeText, memory: instance.memory, workBuffer: glue.workBuffer(), textBuffer: glue.textBuffer(), textBytes: glue.textBytes() };
  views = UNVIEWED;
  ready = true;
  hops ??= follow;
  pollModule ??= poll;
  held ??= holding;
}

/** The poll's module, imported once: WebKit resolves a second `import()` of
 * a module still awaiting its wasm (top-level await) before that module has
 * run. A failed load stays failed, as the module map keeps it. */
export const polls = () => (polling ??= pollModule?.() ?? Promise.reject(new Error(`saferetry: this entry cannot poll (${BUNDLING})`)));

/** How this runtime loads the fleet's module for a `tabBudget`:
 * `load()` answers `{ BudgetAuthority, fleet }` (its class and
 * instantiated glue), or a promise of it. Given by js/src/tabs-web.js (an
 * `import()`) and node.js (authority-node.js); none in workerd, which has
 * no tabs. */
export function fleetFrom(load) {
  fleetModule ??= load;
}

/** The fleet's module for a `tabBudget` (js/src/tabs.js, which loads it
 * once), as `fleetFrom` said: a promise. */
export const fleets = () => Promise.resolve().then(() => {
  if (!fleetModule) throw new Error("saferetry: this runtime's entry has no fleet module for a tabBudget (a Worker has no tabs: its shared budget is durableBudget)");
  return fleetModule();
});

/** The loaded module's option check (js/src/options.js `check`). */
export function checker() {
  assertLoaded();
  return checkOptions;
}

/** The loaded module's machine exports (js/src/executor.js). */
export const machines = () => machineExports;

// The loaded module's memory as its work buffer's 32-bit words (its 32
// work quads, then `execute`'s first answer and call, an ended operation's
// response and cause, where the numbers answered last are), as doubles
// (those numbers) and as its text buffer's bytes (a step's text on its way
// in: src/host/operation/machine.rs `TEXT_IN`, `textBytes` long): made again
// when the memory grew (growing detaches the old buffer: a view of it then
// has no length) or another module loaded, never with a read of
// `memory.buffer` per event (a call into the engine's C++).
const UNVIEWED = { work: new Uint32Array(0), doubles: new Float64Array(0), text: new Uint8Array(0) };
let views = UNVIEWED;

/** The views of the loaded module's memory (js/src/executor.js reads its
 * work and writes a step's text, js/src/shape.js reads an outcome's
 * numbers). */
export function memoryViews() {
  if (views.work.length === 0) {
    const { memory, workBuffer, textBuffer, textBytes } = machineExports;
    const { buffer } = memory;
    views = { work: new Uint32Array(buffer, workBuffer, 134), doubles: new Float64Array(buffer), text: new Uint8Array(buffer, textBuffer, textBytes) };
  }
  return views;
}

/** hops.js's `follow`, for the attempts of the full module (which follows
 * redirects only where an entry gave it hops.js). */
export function follower() {
  return hops;
}

/** held.js's `HeldResponse`, where the entry gave it (js/src/attempts.js `rebuilt`). */
export function holder() {
  return held;
}

/** Instantiates a wasm module by its glue's `initSync` (nothing to do once
 * it is), throwing `loadFailed(file, …)` if that fails: a module an
 * entry instantiates at its first use (poll-workerd.js,
 * outbox-rules-workerd.js). */
export function instantiated(initSync, module, file) {
  try {
    initSync({ module });
  } catch (error) {
    throw loadFailed(file, error);
  }
}

/** The error an entry throws when the wasm file cannot be loaded. It names
 * the file: the usual cause is a bundler that copied the JS but not the wasm. */
export function loadFailed(file, cause) {
  return new Error(`saferetry: could not load its WebAssembly module ${file} (${cause?.message ?? cause}); ${BUNDLING}`, { cause });
}

export function assertLoaded() {
  if (!ready) {
    throw new Error(`saferetry: the WebAssembly module was never initialised: the package was loaded without its runtime entry (src/web.js, node.js or workerd.js); ${BUNDLING}`);
  }
}
