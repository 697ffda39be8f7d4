// Browsers and bundlers: the bundler or the browser fetches the wasm file.
import init from "../pkg/saferetry.js";

await init({ module_or_path: new URL("../pkg/saferetry_bg.wasm", import.meta.url) });

export * from "./core.js";
