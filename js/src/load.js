// Whether the wasm module is ready, and the errors when it is not. Each
// runtime's entry instantiates the module and calls `loaded()`; the API
// checks `assertLoaded()` so that a build which lost the entry's
// initialisation says so instead of failing deep inside the glue.
const BUNDLING = 'see "Install and bundle" in saferetry\'s README';
let ready = false;
let hops; // hops.js's `follow`: a browser's `fetch` follows redirects itself (src/policy/redirect.rs)

/** Called by the runtime's entry once the wasm module is instantiated,
 * with hops.js's `follow` outside browsers. */
export function loaded(follow) {
  ready = true;
  hops ??= follow;
}

/** hops.js's `follow`; without one, the attempt fails before sending. */
export function follower() {
  return hops ?? noHops;
}

function noHops(chain) {
  chain.free();
  throw new Error(`saferetry: this entry cannot follow redirects hop by hop (the browser entry, src/web.js, loaded outside a browser?); ${BUNDLING}`);
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
