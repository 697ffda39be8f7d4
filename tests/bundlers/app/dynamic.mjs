// A dynamic import(), as code-splitting apps load it.
import { exercise } from "./check.mjs";

export const run = async (base, runId) => exercise(await import("saferetry"), base, runId);
