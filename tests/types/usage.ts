// Compiled by `tsc --strict --noEmit`: the declarations accept real usage
// and reject wrong usage (each @ts-expect-error must be an error).
import { RetryPolicy, RetryError, retryFetch, reportOf } from "saferetry";
import type { Outcome, Report, State } from "saferetry";

const policy = new RetryPolicy({
  maxAttempts: 3,
  totalMs: 4000,
  attemptMs: 1000,
  baseMs: 50,
  capMs: 200,
  retryOn: { statuses: [429, 503], timeouts: true },
  quota: { capacity: 100 },
  random: () => 0.5,
  onRetry: ({ attempt, waitMs, reason }) => console.log(attempt, waitMs, reason),
});

export async function demo(signal: AbortSignal): Promise<string> {
  try {
    const res: Response = await policy.fetch("http://127.0.0.1/x", { signal, retry: { idempotencyKey: true } });
    const report: Report | undefined = reportOf(res);
    return `${res.status} ${report?.attempts.length}`;
  } catch (e) {
    if (e instanceof RetryError) return `${e.reason} ${e.retryAt ?? "unknown"} ${e.report.elapsedMs}`;
    throw e;
  }
}

export async function ui(): Promise<Outcome> {
  const op = policy.run(new Request("http://127.0.0.1/y"));
  const stop = op.subscribe((s: State) => {
    if (s.state === "waiting") console.log(s.until, s.why);
    if (s.state === "try-later") console.log(s.retryAt, s.message);
  });
  stop();
  op.cancel();
  return op.result;
}

export const once = retryFetch(new URL("http://127.0.0.1/z"), { retry: { maxAttempts: 2 } });

// @ts-expect-error maxAttempts is a number
new RetryPolicy({ maxAttempts: "3" });
// @ts-expect-error an unknown state name
export const bad: State = { state: "spinning" };

// `policy.fetch` is a `typeof fetch`: it can be handed to an SDK unbound.
export const asFetch: typeof fetch = policy.fetch;
const { fetch: unbound } = policy;
export const called: Promise<Response> = unbound("http://127.0.0.1/z", { retry: { maxAttempts: 2 } });
