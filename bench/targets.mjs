// Issue 37's Node targets, in one place for the benches that print them
// (bench/run.mjs, bench/profile.mjs, bench/table.mjs): a successful call's
// median × raw fetch, per body mode, each also below ky's ratio.
const NODE_TARGET = { auto: 1.3, stream: 1.15, buffer: 1.3 };

/** Mode `mode`'s target as printed: "≤ 1.15". */
export const atMost = (mode) => `≤ ${NODE_TARGET[mode].toFixed(2)}`;
