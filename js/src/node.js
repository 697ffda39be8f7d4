// Node, Deno and Bun: the wasm bytes come from disk, compiled synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "../pkg/saferetry.js";

initSync({ module: readFileSync(new URL("../pkg/saferetry_bg.wasm", import.meta.url)) });

export * from "./core.js";
