// Compiled by `tsc --strict --noEmit`: the declarations accept real usage
// and reject wrong usage (each @ts-expect-error must be an error).
import { BudgetAuthority, RetryPolicy, RetryError, retryFetch, reportOf, tabBudget } from "saferetry";
import type { BudgetMode, LeaseGrant, LeaseRequest, Outcome, Reason, Report, SharedBudget, State } from "saferetry";

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
    const streamedAfter: number | undefined = report?.responseBody === "stream" ? report.handedOverMs : undefined;
    // @ts-expect-error responseBody is "buffer" or "stream"
    const wrongMode: Report["responseBody"] = "auto";
    return `${res.status} ${report?.attempts.length} ${streamedAfter} ${wrongMode}`;
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

// Fleet budgets: a policy leasing from an authority through any carrier.
const authority = new BudgetAuthority();
const carrier: SharedBudget = { scope: "test", fleetSize: 8, exchange: (r: LeaseRequest) => authority.grant(r) };
const fleetPolicy = new RetryPolicy({ rate: { requests: 100 }, shared: carrier });
export const mode: BudgetMode | undefined = fleetPolicy.stats().shared?.mode;
// The calls adaptive throttling ended without sending anything.
export const saved: number = fleetPolicy.stats().throttled;
// Its client's counters, once it has one (the client's module may be loading, or have failed to load).
const shared = fleetPolicy.stats().shared;
export const held: number | undefined = shared && "tokensHeld" in shared ? shared.tokensHeld : undefined;
export const noClient: string | undefined = shared?.mode === "fallback" ? shared.reason : undefined;
// @ts-expect-error the counters are there only with a client
export const unchecked: number = shared!.tokensHeld;
export const released: Promise<void> = fleetPolicy.release();
// What the authority keeps in force, and how often policies offered something else.
export const inForce: number | undefined = authority.config()?.quota?.capacity;
export const differing: number = authority.stats().differingConfigs;
export const grant: LeaseGrant | undefined = undefined;
// @ts-expect-error an exchange takes a lease request
new RetryPolicy({ shared: { exchange: (r: string) => r } });
// Browser tabs: one budget per origin and name.
const tabs = tabBudget("api.example.com", { staleMs: 4000 });
new RetryPolicy({ quota: { capacity: 100 }, shared: tabs });
export const tabScope: "origin" | "tab" = tabs.scope;
export const leads: boolean = tabs.status().leader;
export const tabMode: "authority" | "fallback" = tabs.status().mode;
tabs.addEventListener("error", (e) => { const why: string = e.message; e.preventDefault(); return why; });
// A carrier of your own may say that no authority can run here.
new RetryPolicy({ shared: { exchange: () => ({ unavailable: "no authority here" }) } });
// @ts-expect-error `unavailable` is the reason, a string
new RetryPolicy({ shared: { exchange: () => ({ unavailable: true }) } });
// @ts-expect-error a budget needs a name
tabBudget();
// @ts-expect-error staleMs is a number of milliseconds
tabBudget("x", { staleMs: "2s" });

// The transport option takes any fetch, and the policy's own fetch fits the global slot.
export const pinned = new RetryPolicy({ fetch: globalThis.fetch });
globalThis.fetch = pinned.fetch;
// @ts-expect-error the transport is a function
new RetryPolicy({ fetch: "https://example.com" });
// A refused request rejects with the host's error, whose report reportOf finds.
export const refusedReport = (error: unknown): Report | undefined => reportOf(error);
export const refused: Reason = "refused";

// ---- the outbox ----
import { outbox, memoryStore, fileStore, indexedDBStore } from "saferetry";
import type { NotKept, OutboxEntry, OutboxResult, OutboxStore } from "saferetry";

export async function outboxUsage(): Promise<string> {
  const box = await outbox(policy, "orders", { store: memoryStore(), ttl: 3_600_000 });
  box.addEventListener("sent", (e) => console.log(e.detail.entry?.key, e.detail.report?.reason));
  const r: OutboxResult = await box.send("http://127.0.0.1/orders", { method: "POST", body: "{}", retry: { idempotencyKey: true } });
  const why: NotKept | undefined = r.notKept;
  const waiting: OutboxEntry[] = await box.pending();
  const stores: OutboxStore[] = [fileStore("/tmp/outbox"), indexedDBStore("orders")];
  await box.flush();
  await box.close();
  // @ts-expect-error a name is required
  await outbox(policy);
  // @ts-expect-error ttl is a number of milliseconds
  await outbox(policy, "orders", { ttl: "1h" });
  // @ts-expect-error an unknown option (refused at run time too)
  await outbox(policy, "orders", { tll: 5 });
  const held: OutboxStore = { ...memoryStore(), lock: async (_name, fn, signal) => (signal?.aborted ? undefined : fn()) };
  return `${r.kept} ${why} ${waiting.length} ${stores.length} ${typeof held.lock}`;
}

// Adaptive throttling: tuned or off on a policy, opted out of per call; its stop reason.
new RetryPolicy({ throttle: { k: 1.5, windowMs: 120_000 } });
new RetryPolicy({ throttle: false });
export const mustTry: Promise<Response> = policy.fetch("http://127.0.0.1/pay", { retry: { throttle: false } });
export const throttledReason: Reason = "throttled";
// @ts-expect-error k is a number
new RetryPolicy({ throttle: { k: "2" } });
// @ts-expect-error the window is `windowMs`
new RetryPolicy({ throttle: { window: 1500 } });
