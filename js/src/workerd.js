// Cloudflare workerd: the wasm arrives as a compiled module import.
import wasm from "../pkg/saferetry_bg.wasm";
import { initSync } from "../pkg/saferetry.js";

initSync({ module: wasm });

export * from "./core.js";
