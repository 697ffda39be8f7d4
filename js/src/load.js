// Whether the wasm module is ready, and the errors when it is not. Each
// runtime's entry instantiates its module — the full one (saferetry.js) or,
// in browsers, the one without redirect hops (saferetry_web.js) — and
// calls `loaded()` with its glue; the API checks `assertLoaded()` so that a
// build which lost the entry's initialisation says so instead of failing
// deep inside the glue.
const BUNDLING = 'see "Install and bundle" in saferetry\'s README';
let ready = false;
let hops; // hops.js's `follow`: a browser's `fetch` follows redirects itself (src/policy/redirect.rs)

/** The classes of the module the entry loaded (core.js reads them). */
export let Policy, Outcome;

/** Called by the runtime's entry once its wasm module is instantiated, with
 * the module's glue and, outside browsers, hops.js's `follow`. */
export function loaded(glue, follow) {
  ({ Policy, Outcome } = glue);
  ready = true;
  hops ??= follow;
}

/** hops.js's `follow`, for the attempts of the full module (which follows
 * redirects only where an entry gave it hops.js). */
export function follower() {
  return hops;
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
