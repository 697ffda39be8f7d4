// One client of the throttle tier (tests/fleet/throttle.mjs): a Node process
// issuing a steady load (steady.mjs) — one operation every `everyMs` from
// `t0` (epoch ms) for `durationMs`, each started on time whatever the
// others do — at `url`, through one of:
//   saferetry  a RetryPolicy (`options`) on a `redisBudget` named `name`
//              (adaptive throttling shared through Redis, or
//              `throttle: false`)
//   cockatiel  cockatiel's circuit breaker (its README's settings: open
//              after 5 consecutive failures, half-open after 10 s), one
//              attempt per operation
//   aws        a hand-written AWS-SDK-style adaptive rate limiter (below),
//              one attempt per operation
// Spec as JSON in argv[2]: { kind, redisUrl, name, fleetSize, url, t0,
// durationMs, everyMs, totalMs, options }. Prints "ready" once set up, then one JSON
// line: per operation [start ms after t0, duration ms, outcome, requests
// it sent], outcome
// "ok", a status, a saferetry stop reason, "open" (breaker) or "limited"
// (limiter: its wait would pass the deadline). Glue only: each library
// decides.
import { RetryPolicy, reportOf } from '../../js/src/node.js';
import { redisBudget } from '../../js/src/redis.js';
import { sleep } from './operate.mjs';
import { policyOp, steadyLoad } from './steady.mjs';

const spec = JSON.parse(process.argv[2]);
const { kind, url, totalMs = 2000 } = spec;

/** An AWS-SDK-style adaptive limiter (the SDKs' `adaptive` retry mode,
 * DefaultRateLimiter, in 30 lines): no limit until a throttling answer;
 * then a token bucket whose fill rate drops to 0.7 × the measured send
 * rate on each throttle and grows back on a CUBIC curve on successes,
 * never above twice the measured rate. A 503 counts as throttling (S3's
 * SlowDown). A send waits for its token; one whose wait would pass the
 * deadline is refused. */
function adaptiveLimiter({ beta = 0.7, scale = 0.4, minRate = 0.5 } = {}) {
  let enabled = false, fillRate = minRate, tokens = 1, lastFill = 0, lastMax = 0, lastThrottle = 0;
  const now = () => Date.now() / 1000;
  let measured = 0, bucket = Math.floor(now() * 2) / 2, count = 0;
  const refill = (t) => { if (lastFill) tokens = Math.min(Math.max(fillRate, 1), tokens + (t - lastFill) * fillRate); lastFill = t; };
  const measure = (t) => {
    count += 1;
    const b = Math.floor(t * 2) / 2;
    if (b > bucket) { measured = 0.8 * (count / (b - bucket)) + 0.2 * measured; count = 0; bucket = b; }
  };
  return {
    /** Seconds to wait for a token (taken now), or Infinity past `budget` seconds. */
    acquire(budget) {
      if (!enabled) return 0;
      const t = now(); refill(t); tokens -= 1;
      const wait = tokens >= 0 ? 0 : -tokens / fillRate;
      if (wait > budget) { tokens += 1; return Infinity; }
      return wait;
    },
    update(throttled) {
      const t = now(); measure(t);
      let rate;
      if (throttled) {
        lastMax = enabled ? Math.min(measured, fillRate) : measured; lastThrottle = t; enabled = true;
        rate = lastMax * beta;
      } else {
        const k = Math.cbrt((lastMax * (1 - beta)) / scale);
        rate = scale * (t - lastThrottle - k) ** 3 + lastMax;
      }
      refill(t); fillRate = Math.max(minRate, Math.min(rate, 2 * measured));
    },
  };
}

async function setup() {
  if (kind === 'saferetry') {
    const { createClient } = await import('redis');
    const client = createClient({ url: spec.redisUrl });
    client.on('error', () => {});
    await client.connect();
    const policy = new RetryPolicy({ totalMs, ...spec.options, shared: redisBudget(client, spec.name, { fleetSize: spec.fleetSize }) });
    return { op: policyOp(policy, reportOf, url), close: () => client.destroy() };
  }
  const once = async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(totalMs) });
    await res.body?.cancel();
    return res.status;
  };
  if (kind === 'cockatiel') {
    const { circuitBreaker, handleAll, ConsecutiveBreaker, BrokenCircuitError } = await import('cockatiel');
    const breaker = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
    const op = async () => {
      try {
        return await breaker.execute(async () => {
          const status = await once();
          if (status >= 500) throw new Error(String(status));
          return ['ok', 1];
        });
      } catch (e) {
        return e instanceof BrokenCircuitError ? ['open', 0] : [e.message, 1];
      }
    };
    return { op, close: () => {} };
  }
  const limiter = adaptiveLimiter();
  const op = async () => {
    const started = Date.now();
    const wait = limiter.acquire(totalMs / 1000);
    if (wait === Infinity) return ['limited', 0];
    await sleep(wait * 1000);
    try {
      const status = await once();
      limiter.update(status === 503 || status === 429);
      return [status < 500 ? 'ok' : String(status), 1];
    } catch {
      limiter.update(false);
      return [`error after ${Date.now() - started} ms`, 1];
    }
  };
  return { op, close: () => {} };
}

const { op, close } = await setup();
console.log('ready');
const ops = await steadyLoad(op, spec);
close();
console.log(JSON.stringify({ ops }));
