// What the fleet tiers (workerd.mjs, redis.mjs) count in their instances' results.

/** The most starts within any window of `ms`. */
export function maxInWindow(starts, ms = 1000) {
  let best = 0;
  for (let i = 0, j = 0; j < starts.length; j++) {
    while (starts[j] - starts[i] >= ms) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

/** The counters `key` of every result, added up. */
export const merge = (results, key) => results.reduce((acc, r) => {
  for (const [k, v] of Object.entries(r[key] ?? {})) acc[k] = (acc[k] ?? 0) + v;
  return acc;
}, {});
