// The README's import: named bindings.
import { RetryPolicy, reportOf } from "saferetry";
import { exercise } from "./check.mjs";

export const run = (base, runId) => exercise({ RetryPolicy, reportOf }, base, runId);
