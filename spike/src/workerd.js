// The spike in Cloudflare workerd: the wasm as a compiled module import.
import wasm from "./saferetry_sansio_bg.wasm";
import { initSync } from "./saferetry_sansio.js";

initSync({ module: wasm });

export * from "./executor.js";
