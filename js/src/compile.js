// How a browser entry compiles its wasm module (js/src/web.js): as it
// streams in, for the glue's `initSync` to instantiate, so that
// wasm-bindgen's own loader (the glue's default export, with its input
// forms and messages) stays out of a page's bundle. Node, Deno, Bun and
// workerd read their modules otherwise and never import this file.

/** The wasm module at `url`, compiled as it streams in; one served
 * without the wasm MIME type, from its bytes (as wasm-bindgen's loader
 * does). */
export async function compiled(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
  try {
    return await WebAssembly.compileStreaming(response);
  } catch (error) {
    if (response.headers.get("Content-Type") === "application/wasm") throw error;
    return WebAssembly.compile(await response.arrayBuffer());
  }
}
