// The dropped-response case of the leak tier (README.md here): 100 chunked
// 5 MiB JSON documents fetched and dropped — (a) untouched, (b) after reading
// the first chunk — through plain `fetch` and through `policy.fetch` (auto:
// 1 MiB read inside the attempt, the rest handed over), in the same run;
// and (c) 100 5 MiB texts whose first chunk comes 60 s after the head
// (after the round), dropped untouched: auto hands each over 250 ms after
// its head, its read still waiting for that chunk, which must not keep it.
// After GC, what each side still holds (memory, and connections the server
// still has open) is compared: saferetry's must be back to plain fetch's
// figures within MARGIN. Web-standard APIs only; each runtime's front end
// passes what differs (GC, memory figures, client-side sockets).
//
//   const r = await runDropped({ saferetry, bases, env });   // bases: 7 doc-server origins
//   r.lines: figures to print; r.checks: [{ name, ok, detail }]

const KiB = 1024;
const MiB = 1024 * KiB;

/** What a dropped saferetry response may hold beyond a dropped fetch response, per call. */
export const MARGIN_PER_CALL = 16 * KiB;

const fmt = (bytes) => `${(bytes / MiB).toFixed(2)} MiB`;
const MODES = ['untouched', 'first-chunk', 'waiting'];

/**
 * env: {
 *   gc(): void | Promise,        a full GC (called several times, with pauses)
 *   sleep(ms): Promise,          an untracked sleep
 *   memory(): Promise<{ [name]: bytes }> | { [name]: bytes },
 *   key: string,                 the memory figure the check compares
 *   clientSockets?(): number,    sockets the client process has open
 *   gcEachCall?: boolean,        GC after each call (browsers: 6 connections per origin)
 *   warmRounds?: boolean,        first one unmeasured round per side (a process-wide figure
 *                                such as RSS keeps its high-water mark: reach it first)
 *   log(line)
 * }
 */
export async function runDropped({ saferetry, bases, env, count = 100, bytes = 5 * MiB, callMs = 10_000, settleMs = 8000 }) {
  const policy = new saferetry.RetryPolicy({ maxAttempts: 1 });
  const sides = {
    fetch: (url) => fetch(url),
    'policy.fetch': (url) => policy.fetch(url),
  };
  let base = bases[0];
  // Asked of the first server (used only for whole reads): the round's own
  // origin may have all its connections held by dropped responses.
  const open = async () => (await (await fetch(`${bases[0]}/open?port=${new URL(base).port}`)).json());
  const gcs = async (n = 3) => {
    for (let i = 0; i < n; i += 1) {
      await env.gc();
      await env.sleep(40);
    }
  };
  /** GC until the server's open connections are back to `target` or have
   * not changed for 1.5 s (finalizers run some time after a GC). */
  const settle = async (target) => {
    const t0 = Date.now();
    let o = await open();
    let since = Date.now();
    for (let i = 0; i < 400 && Date.now() - t0 < settleMs; i += 1) { // bounded in count and time
      if (o.open <= target) break;
      await gcs(1);
      await env.sleep(60);
      const next = await open();
      if (next.open !== o.open) since = Date.now();
      o = next;
      if (Date.now() - since > 1500) break;
    }
    await gcs(3);
    return o;
  };

  const rounds = [];
  const lines = [];
  const checks = [];
  // A warm-up call per side: the first call of each loads code and pools.
  for (const f of Object.values(sides)) {
    const r = await f(`${base}/doc?bytes=${2 * MiB}`);
    await r.arrayBuffer();
  }
  const drop = async (f, mode, i) => {
    const res = await f(`${base}/doc?bytes=${bytes}&n=${i}${mode === 'waiting' ? '&type=text&wait=60000' : ''}`);
    if (mode === 'first-chunk') {
      const first = await res.body.getReader().read();
      if (first.done || !(first.value?.length > 0)) throw new Error('no first chunk');
    }
    return res;
  };
  if (env.warmRounds) {
    for (const f of Object.values(sides).reverse()) {
      base = bases[bases.length - 1];
      for (let i = 0; i < count; i += 1) await drop(f, 'untouched', i).then(() => env.gc(), () => env.gc());
      await settle(0);
    }
  }
  for (const mode of MODES) {
    // policy.fetch first: plain fetch's first-chunk round leaves its
    // connections open for good (undici cancels only an untouched body).
    for (const [side, f] of Object.entries(sides).reverse()) {
      // Each round its own origin (a browser allows 6 connections per origin).
      base = bases[1 + rounds.length] ?? bases[bases.length - 1];
      const openBefore = (await settle(0)).open;
      const before = await env.memory();
      const socketsBefore = env.clientSockets?.();
      let failures = 0;
      let stalled = null;
      let streamed = 0;
      const t0 = Date.now();
      for (let i = 0; i < count; i += 1) {
        let timer;
        const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), callMs); });
        const call = drop(f, mode, i).then((res) => {
          if (side === 'policy.fetch' && saferetry.reportOf(res)?.responseBody === 'stream') streamed += 1;
          return 'ok';
        }, (e) => `error ${e?.name}: ${e?.message}`);
        const how = await Promise.race([call, timeout]);
        clearTimeout(timer);
        // A browser opens at most 6 connections per origin: without a GC
        // between calls, the 7th would wait for one of the dropped ones.
        if (env.gcEachCall) await env.gc();
        if (how !== 'ok') {
          failures += 1;
          if (failures <= 3) env.log(`${side} ${mode} call ${i}: ${how}`);
          // Two calls in a row without an answer: the connections the
          // dropped responses hold have run out (a browser's per-origin
          // limit); the rest would wait as long.
          if (how === 'timeout' && failures >= 2) {
            stalled = i + 1;
            failures += count - i - 1;
            break;
          }
        }
      }
      const callsMs = Date.now() - t0;
      const server = await settle(openBefore);
      const after = await env.memory();
      const round = { side, mode, failures, stalled, streamed, callsMs, open: server.open - openBefore, sockets: server.sockets, delta: {} };
      for (const k of Object.keys(after)) round.delta[k] = after[k] - before[k];
      if (env.clientSockets) round.clientSockets = env.clientSockets() - socketsBefore;
      rounds.push(round);
      const mem = Object.entries(round.delta).map(([k, v]) => `${k} ${v >= 0 ? '+' : ''}${fmt(v)}`).join(', ');
      lines.push(`dropped ${mode.padEnd(11)} ${side.padEnd(12)} ${count} × ${fmt(bytes)}: ${mem}` +
        ` (${(round.delta[env.key] / count / KiB).toFixed(1)} KiB/call); connections still open ${round.open} (server sockets ${round.sockets})` +
        (round.clientSockets !== undefined ? `, client sockets ${round.clientSockets}` : '') +
        `; calls ${callsMs} ms${failures ? `; ${failures} unanswered${stalled ? ` (stalled after ${stalled} calls)` : ''}` : ''}`);
    }
  }
  for (const mode of MODES) {
    const plain = rounds.find((r) => r.side === 'fetch' && r.mode === mode);
    const ours = rounds.find((r) => r.side === 'policy.fetch' && r.mode === mode);
    checks.push({ name: `dropped ${mode}: policy.fetch answered every call (${count - ours.failures}/${count}; fetch ${count - plain.failures}/${count})`,
      ok: ours.failures === 0 });
    checks.push({ name: `dropped ${mode}: policy.fetch handed each document over as a stream (${ours.streamed}/${count})`,
      ok: ours.streamed === count });
    const bound = plain.delta[env.key] + MARGIN_PER_CALL * count;
    checks.push({ name: `dropped ${mode}: ${env.key} after GC ${fmt(ours.delta[env.key])} ≤ plain fetch's ${fmt(plain.delta[env.key])} + ${fmt(MARGIN_PER_CALL * count)}`,
      ok: ours.delta[env.key] <= bound });
    checks.push({ name: `dropped ${mode}: connections still open ${ours.open} ≤ plain fetch's ${plain.open}`,
      ok: ours.open <= plain.open });
  }
  return { rounds, lines, checks };
}
