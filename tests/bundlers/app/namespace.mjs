// A namespace import.
import * as saferetry from "saferetry";
import { exercise } from "./check.mjs";

export const run = (base, runId) => exercise(saferetry, base, runId);
