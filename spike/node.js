// The spike in Node, Deno and Bun: the wasm bytes from disk, compiled synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./pkg/saferetry_sansio.js";

initSync({ module: readFileSync(new URL("./pkg/saferetry_sansio_bg.wasm", import.meta.url)) });

export * from "./executor.js";
