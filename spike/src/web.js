// The spike in a page or a bundle: the wasm file beside this one, fetched.
import init from "./saferetry_sansio.js";

await init({ module_or_path: new URL("./saferetry_sansio_bg.wasm", import.meta.url) });

export * from "./executor.js";
