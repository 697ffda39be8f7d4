// The runner's side of the crash-point cases of the IndexedDB and Durable
// Object stores (tests/outbox/browsers-crash.mjs, workerd.mjs): each round
// stops one drainer at each of the four points at once
// (tests/outbox/crash-points.mjs), crashes them, and lets contenders take
// over; what went wrong is kept per point, and each point is a case.
import { assert, until } from './node.mjs';
import { POINTS } from './crash-points.mjs';

export const points = Object.keys(POINTS);

/** Waits until the drainer of every point's `key(p)` has told `server` it
 * stopped there; resolves with the server's request counts by key then. A
 * drainer that sent other than its point says (once from mid-send on,
 * never before) goes to `problems` as round `r`'s. */
export async function stopped(server, key, r, problems) {
  await until('every drainer at its crash point', 15_000, async () => {
    const { at } = await server.counts();
    return points.every((p) => at[key(p)] === p);
  });
  const before = (await server.counts()).requests;
  for (const p of points) {
    const n = before[key(p)] ?? 0;
    if (n !== (p.includes('send') ? 1 : 0)) problems[p].push(`round ${r}: the crashed drainer sent ${n} times`);
  }
  return before;
}

/** One case per point, named by `sentence(pointWords)`: the first runs
 * every round (`round(r, problems)`; `recover()` after one that throws,
 * which ends the rounds), and each says what went wrong at its point. */
export function crashCases({ server, rounds, round, recover, sentence }) {
  let all;
  const results = () => (all ??= (async () => {
    const problems = Object.fromEntries(points.map((p) => [p, []]));
    await server().reset();
    await server().open(0);
    try {
      for (let r = 0; r < rounds; r++) await round(r, problems);
    } catch (error) {
      for (const p of points) problems[p].push(String(error?.message ?? error));
      await recover();
    }
    return problems;
  })());
  return points.map((point) => [`${sentence(POINTS[point])} (${rounds} rounds)`, async () => {
    const problems = (await results())[point];
    assert(problems.length === 0, `not exactly once (${rounds} rounds): ${problems.join('; ')}`);
  }]);
}
