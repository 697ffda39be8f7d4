// The spike in Node, Deno and Bun: the wasm bytes from disk, compiled synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./saferetry_sansio.js";

initSync({ module: readFileSync(new URL("./saferetry_sansio_bg.wasm", import.meta.url)) });

export * from "./executor.js";
