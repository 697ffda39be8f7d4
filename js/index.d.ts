/** Why an operation ended (`report.reason`, `RetryError.reason`). */
export type Reason =
  | "succeeded"
  | "http-stop"
  | "attempts-exhausted"
  | "wait-exceeds-budget"
  | "unsupported-retry-after"
  | "attempt-timeout"
  | "deadline"
  | "cancelled"
  | "maybe-delivered"
  | "network-error"
  | "retry-quota-exhausted"
  | "queue-exceeds-budget"
  | "body-not-replayable"
  | "body-too-large"
  | "invalid-random"
  | "task-failed"
  | "offline"
  | "refused"
  | "throttled";

export type Stage = "not-sent" | "maybe-delivered";
export type WaitKind = "backoff" | "throttle" | "retry-after";
export type WaitWhy = WaitKind | "rate-limit" | "queue" | "offline" | "poll";

export interface RetryOn {
  /** Statuses retried for idempotent (or keyed) requests, each 100..=599, at most 1000. Default 408, 429, 500, 502, 503, 504. */
  statuses?: number[];
  /** Retry after our per-attempt timeout. Default true. */
  timeouts?: boolean;
  /** Retry after network errors. Default true. */
  networkErrors?: boolean;
}

export interface QuotaOptions {
  /** 0..=1000000, default 500. */
  capacity?: number;
  /** 0..=1000000, default 5. */
  retryCost?: number;
  /** 0..=1000000, default 10. */
  timeoutCost?: number;
  /** 0..=1000000, default 1. */
  successRefund?: number;
}

export interface ThrottleOptions {
  /** `K` in the SRE formula `max(0, (requests - K·accepts) / (requests + 1))`: nothing is throttled while at least 1 in K requests is accepted. A number in 1..=100, default 2. */
  k?: number;
  /** The sliding window requests and accepts are counted over. 10..=600000 ms, default 1500. */
  windowMs?: number;
}

/** A policy's options, and a call's `init.retry`. Any other key, a value of the wrong type or one out of its
 * range throws a `TypeError`/`RangeError` naming the option by its path (`retryOn.statuses[]`; per call
 * `retry.<key>`) and what it accepts (docs/options.md). */
export interface RetryOptions {
  /** Attempts, counting the first. 1..=100, default 3. */
  maxAttempts?: number;
  /** The whole operation: requests, body reads, waits. 1..=2147483647 ms, default 30000. */
  totalMs?: number;
  /** One request and its body read. 1..=2147483647 ms, default 10000. */
  attemptMs?: number;
  /** Backoff base. 0..=2147483647 ms, default 100. */
  baseMs?: number;
  /** Backoff cap. 0..=2147483647 ms, default 20000. */
  capMs?: number;
  /** Base for 429 without Retry-After and for hidden Retry-After. 0..=2147483647 ms, default 1000. */
  throttleBaseMs?: number;
  retryOn?: RetryOn;
  /** Add jitter on top of a Retry-After floor. Default true. */
  retryAfterSpread?: boolean;
  /** Largest response body buffered. 0..=4294967296 bytes, default 16 MiB. */
  maxBodyBytes?: number;
  /** The shared retry quota; false disables it. */
  quota?: boolean | QuotaOptions;
  /** Adaptive throttling (docs/rules.md): a first attempt the upstream has been refusing is not sent and ends `try-later` with reason `throttled`. On a policy: false turns it off; per call only `false` (send whatever the window says). Default on. */
  throttle?: boolean | ThrottleOptions;
  /** Policy only: at most this many requests in flight at once (FIFO queue), 1..=10000. Default unlimited. */
  concurrency?: number;
  /** Policy only: starts spaced evenly, retries included (GCRA); `requests` and `burst` 1..=1000000, `perMs` 1..=2147483647. Default unlimited. */
  rate?: { requests: number; perMs?: number; burst?: number };
  /** Returns a number in [0, 1). Default Math.random. */
  random?: () => number;
  onRetry?: (info: { attempt: number; waitMs: number; reason: WaitKind }) => void;
  /** The transport to use instead of the global `fetch` (which is looked up at each call). */
  fetch?: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
  /** Per call: no request starts before this epoch time (ms, 0..=2^53-1). */
  notBefore?: number;
  /** Per call: a key sent unchanged with every attempt (1..=255 visible ASCII characters); `true` generates one. On a policy: a boolean. */
  idempotencyKey?: string | boolean;
  /** Policy only: share the quota and the start rate with a fleet (docs/fleet-budgets.md). */
  shared?: SharedBudget;
}

/** Where a policy's shared budget lives: `durableBudget` (saferetry/cloudflare), `tabBudget`, or your own carrier. */
export interface SharedBudget {
  /** Carries a request to the fleet's authority (e.g. `BudgetAuthority.grant`) and resolves with its grant, or with `{ unavailable: reason }` when no authority can run for this client (the policy then retries on a budget of its own: capacity / fleetSize). */
  exchange(request: LeaseRequest): LeaseAnswer | Promise<LeaseAnswer>;
  /** Clients expected to share the budget: the fallback start rate is `rate` divided among them. 1..=10000, default 4. */
  fleetSize?: number;
  /** Echoed in `stats().shared.scope` (e.g. "fleet", "origin", "tab"). */
  scope?: string;
  /** Called once by each policy that takes this budget, with a function that gives the policy's held tokens back at once (tabBudget calls it as its tab leaves). */
  attach?(release: () => void): void;
}

export interface LeaseRequest {
  client: number;
  seq: number;
  wantTokens: number;
  holdingTokens: number;
  returnedTotal: number;
  refundedTotal: number;
  /** Every token this client spent, a running total (absent: 0). What the authority gives back for a client silent two ttls is what it held and had not reported spent. */
  spentTotal?: number;
  wantSlots: number;
  /** The client holds a grant that has not expired (absent: false). An authority that does not know such a client lost its state, and starts its schedule a horizon (1 s) after its first request. */
  leased?: boolean;
  /** The policy's quota and rate, offered: the authority keeps the strictest offered within a grant's lifetime (docs/fleet-budgets.md "One budget name, one budget"). */
  config: FleetConfig;
  /** Adaptive throttling, when the policy throttles (absent: no counts): its `K` and window, and running totals of the requests it counted and of those the upstream accepted; the authority adds each increase once to the fleet's window. */
  throttle?: { k: number; windowMs: number; requests: number; accepts: number };
}

/** A fleet's quota and start rate (`null`: none offered, or none kept). */
export interface FleetConfig {
  quota: Required<QuotaOptions> | null;
  rate: { requests: number; perMs: number; burst: number } | null;
}

export interface LeaseGrant {
  client: number;
  seq: number;
  duplicate: boolean;
  tokens: number;
  slots: number;
  firstSlotMs: number;
  lastSlotMs: number;
  ttlMs: number;
  /** The fleet's throttling window, to a request that reported counts: its requests and accepts, and the epoch ms from which it would reject fewer than half. */
  window?: { requests: number; accepts: number; retryMs: number };
}

/** What an exchange answers: the authority's grant, or word that no authority can run here. */
export type LeaseAnswer = LeaseGrant | { unavailable: string };

export type BudgetMode = "local" | "leased" | "fallback";

/** `stats().shared`: the counters of the policy's leased client, or, while it has none, why (docs/fleet-budgets.md). */
export type SharedStats = LeaseClientStats | NoLeaseClientStats;

/** The policy has no leased client (it runs in the fleet's wasm module): that module is loading (a browser fetches it when the policy is made), or could not be loaded. Its budget meanwhile: no retry tokens and `rate` / fleetSize while it loads; a budget of its own (capacity / fleetSize) once it failed. */
export interface NoLeaseClientStats {
  scope?: string;
  mode: "fallback";
  /** That the module is loading, or why it could not be loaded (the error, naming the wasm file). */
  reason: string;
}

export interface LeaseClientStats {
  scope?: string;
  /** local: no answer yet; leased: spending grants; fallback: the authority is unreachable. */
  mode: BudgetMode;
  requests: number;
  roundTrips: number;
  unreachable: number;
  /** Answers `{ unavailable }`: no authority can run; retries then spend a budget of this policy's own. */
  unavailable: number;
  /** The last `{ unavailable }` answer's reason, until an authority answers. */
  reason?: string;
  staleAnswers: number;
  tokensHeld: number;
  slotsHeld: number;
  debt: number;
  tokensSpent: number;
  tokensExpired: number;
  slotStarts: number;
  /** Reserved starts given up because their wait ended more than perMs / 50 late (the process stalled); another slot was taken. */
  lateStarts: number;
  /** Slots dropped unused: slept through by a stall, or let pass and then wanted faster than the schedule hands them out. */
  slotsMissed: number;
  localStarts: number;
  refusedStarts: number;
}

/** The fleet's authority, a wasm module of its own: run it where the fleet meets (a Durable Object, a leader tab). In a browser, import it from "saferetry/authority" (the browser's "saferetry" does not load the fleet's module); in Node, Deno, Bun and workerd "saferetry" exports it too. */
export declare class BudgetAuthority {
  constructor();
  grant(request: LeaseRequest, nowMs?: number): LeaseGrant;
  /** A plain snapshot to persist; undefined before the first request. */
  state(): object | undefined;
  restore(state: object): void;
  /** Tokens in the shared bucket; undefined before a request offered a quota. */
  readonly quotaLevel: number | undefined;
  /** The quota and rate in force; undefined before the first request. */
  config(): FleetConfig | undefined;
  stats(): AuthorityStats;
}

/** An authority's counters. */
export interface AuthorityStats {
  requests: number;
  duplicates: number;
  tokensGranted: number;
  tokensCredited: number;
  tokensRefunded: number;
  /** Tokens given back for clients silent two ttls (killed): what they held and had not reported spent. */
  tokensReclaimed: number;
  slotsGranted: number;
  /** Requests that offered a quota or a rate other than the one in force. */
  differingConfigs: number;
  /** Times the configuration in force changed. */
  configChanges: number;
}

/** Any other key, or a value out of its range, is a `TypeError`/`RangeError` naming it (`tabBudget.staleMs`). */
export interface TabBudgetOptions {
  /** How often the leader tab sends a heartbeat (with the authority's state). 1..=600000 ms, default 1000. */
  heartbeatMs?: number;
  /** A follower that hears nothing from the leader this long pings it, and steals the lock 500 ms later if still nothing. 1..=600000 ms, default 2500. */
  staleMs?: number;
  /** Passed on as the SharedBudget's `fleetSize` (the fallback start rate is `rate` divided by it). 1..=10000. */
  fleetSize?: number;
}

export interface TabBudgetStatus {
  scope: "origin" | "tab";
  /** This tab runs the authority. */
  leader: boolean;
  /** The newest leadership heard of (each new leader adds one). */
  term: number;
  /** Epoch ms this tab last became leader, or null. */
  leaderSince: number | null;
  /** The shared bucket's level in tokens: the authority's own in the leader tab; in a follower, the level in the newest state the leader sent (at most a heartbeat old); undefined before any policy of the origin offered a quota. */
  quotaLevel: number | undefined;
  /** How often this tab became leader. */
  handovers: number;
  /** "fallback" once this tab could not load the authority's module (its policies then keep budgets of their own). */
  mode: "authority" | "fallback";
  /** Why "fallback": the load error, naming the URL that failed; null otherwise. */
  reason: string | null;
}

/** A tabBudget's `error` event: the authority's module could not be loaded. `preventDefault()` silences the console warning. */
export interface TabBudgetErrorEvent extends Event {
  readonly error: unknown;
  /** Names the URL that failed. */
  readonly message: string;
}

export interface TabBudget extends SharedBudget, EventTarget {
  readonly scope: "origin" | "tab";
  addEventListener(type: "error", listener: (event: TabBudgetErrorEvent) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  /** Diagnostics: this tab's part in the election. */
  status(): TabBudgetStatus;
  /** Leaves for good: releases the lock, closes the channel. */
  close(): void;
}

/** One budget for every tab of this origin using `name` (Web Locks elect a leader tab that runs the authority; BroadcastChannel carries the grants). Without those APIs, a budget of this tab alone (`scope: "tab"`). */
export declare function tabBudget(name: string, options?: TabBudgetOptions): TabBudget;

export interface AttemptReport {
  startMs: number;
  durationMs: number;
  status?: number;
  error?: { stage: Stage; code: string; name: string };
  plannedWaitMs?: number;
  waitKind?: WaitKind;
  retryAfterMs?: number;
  /** Set on the polls of `policy.poll` (the submit has none). */
  phase?: "poll";
}

export interface Report {
  reason: Reason;
  retryAt?: number;
  elapsedMs: number;
  attempts: AttemptReport[];
  /** How the final response's body reached the caller (absent when none did): read inside the attempt, or streamed (rule 13). */
  responseBody?: "buffer" | "stream";
  /** A streamed body: ms after the final response's headers at which it was handed over (0 at the headers; more when `"auto"` read the start of it first). */
  handedOverMs?: number;
  retryAfterHidden?: boolean;
  snippet?: string;
  /** With a shared budget: where it came from when the operation ended. */
  budget?: BudgetMode;
}

export type State =
  | { state: "idle" }
  | { state: "requesting"; attempt: number; maxAttempts: number }
  | { state: "waiting"; attempt: number; until: number; waitMs: number; why: WaitWhy }
  | { state: "succeeded" }
  | { state: "try-later"; retryAt: number | null; reason: Reason; message: string }
  | { state: "failed"; reason: Reason; message: string }
  | { state: "cancelled" };

export type PollVerdict = "done" | "pending" | "transient" | "fatal";

export interface PollSpec {
  /** The task's status URL or Request, or a function of the submit's Response returning one. */
  status: string | URL | Request | ((submitted: Response) => string | URL | Request | Promise<string | URL | Request>);
  /** Judges each poll's response (a clone). Default: 202 pending, other 2xx done, else fatal. 502/503/504 and network errors are always transient. */
  verdict?: (response: Response) => PollVerdict | Promise<PollVerdict>;
  /** 1..=100 phases, each duration 1..=2147483647 ms. Default: every 1000 ms for 30000 ms, then every 2000 ms. */
  phases?: { everyMs: number; forMs?: number }[];
  /** Polling's own budget. 1..=2147483647 ms, default 300000 (5 minutes). */
  budgetMs?: number;
}

export interface Outcome {
  kind: "succeeded" | "try-later" | "failed" | "cancelled";
  reason: Reason;
  message: string;
  retryAt?: number;
  /** Epoch ms before which the server asked not to be asked again. */
  notBefore?: number;
  report: Report;
  response?: Response;
  cause?: unknown;
}

export interface RetryInit extends RequestInit {
  retry?: RetryOptions;
}

export interface Operation {
  readonly result: Promise<Outcome>;
  readonly state: State;
  getSnapshot(): State;
  subscribe(listener: (state: State) => void): () => void;
  cancel(reason?: unknown): void;
  /** A fresh operation under the same budgets; never before the server's Retry-After unless forced. Any other key is a `TypeError` naming it. */
  retryNow(options?: { force?: boolean }): Promise<Outcome>;
}

export declare class RetryPolicy {
  constructor(options?: RetryOptions);
  /** Like `fetch`, and bound: pass it unbound to any SDK (`fetch: policy.fetch`). */
  readonly fetch: typeof fetch & ((input: RequestInfo | URL, init?: RetryInit) => Promise<Response>);
  run(input: RequestInfo | URL, init?: RetryInit): Operation;
  /** Submit-then-poll; throws at once for a bad `spec`. The poll's loop is a module of its own, loaded at the first poll: its `result` rejects only when that module cannot be loaded. */
  poll(input: RequestInfo | URL, init: RetryInit | undefined, spec: PollSpec): Operation;
  readonly runtime: "node" | "bun" | "deno" | "workerd" | "browser";
  stats(): Stats;
  /** Gives a shared budget's held tokens back (pagehide, shutdown). */
  release(): Promise<void>;
}

export interface Stats {
  operations: number;
  /** Operations that ended after 1, 2, 3, 4 and 5+ attempts. */
  attempts: [number, number, number, number, number];
  retries: number;
  /** Operations that ended with attempts-exhausted. */
  exhausted: number;
  /** Operations that adaptive throttling ended try-later (reason throttled) without sending anything: the requests saved. */
  throttled: number;
  /** Tokens in the quota; with a shared budget, the tokens this client holds. */
  quotaLevel?: number;
  queued: number;
  inFlight: number;
  shared?: SharedStats;
}

export declare class RetryError extends TypeError {
  readonly name: "RetryError";
  readonly reason: Reason;
  readonly report: Report;
  readonly retryAt: number | null;
}

export declare function retryFetch(input: RequestInfo | URL, init?: RetryInit): Promise<Response>;
export declare function reportOf(response: Response | unknown): Report | undefined;

// ---- The durable outbox (docs/outbox.md) ----

/** Why a write was not kept. */
export type NotKept =
  | "not-try-later"
  | "maybe-delivered"
  | "no-idempotency-key"
  | "body-not-replayable"
  | "body-too-large"
  | "credentials"
  | "expires-first"
  | "storage";

/** A kept write as a store holds it. */
export interface OutboxRecord {
  id: string;
  method: string;
  url: string;
  /** As sent, the idempotency key included. */
  headers: [string, string][];
  body: Uint8Array | null;
  key: string | null;
  credentials?: RequestCredentials;
  mode?: RequestMode;
  /** Epoch ms before which it is not sent. */
  retryAt: number;
  /** Epoch ms from which it is never sent. */
  expiresAt: number;
  /** Sends so far, the first one included. */
  sends: number;
  keptAt: number;
}

/** A kept write as a UI sees it (no headers, no body). */
export type OutboxEntry = Pick<OutboxRecord, "id" | "method" | "url" | "key" | "retryAt" | "expiresAt" | "sends" | "keptAt">;

/** Where an outbox keeps its writes: `memoryStore()`, `fileStore(dir)`
 * (Node, Deno, Bun), `indexedDBStore(name)` (browsers, the default there),
 * `durableStore(storage)` (saferetry/cloudflare), or your own. */
export interface OutboxStore {
  list(): Promise<OutboxRecord[]>;
  put(entry: OutboxRecord): Promise<void>;
  delete(id: string): Promise<void>;
  /** Runs `fn` exclusively across every tab, process or isolate sharing
   * the store; when `signal` aborts the wait (the outbox closed), resolves
   * with `undefined` without running it. */
  lock?<T>(name: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T | undefined>;
  /** Wakes the runtime at `at` (epoch ms) even if it was stopped meanwhile (a Durable Object's alarm; IndexedDB: a Background Sync registration for saferetry/sw). */
  wake?(at: number): Promise<void> | void;
  close?(): Promise<void> | void;
}

/** Any other key, or a value of the wrong type or out of its range, is a `TypeError`/`RangeError` naming it (`outbox.ttl`). */
export interface OutboxOptions {
  /** Required in Node, Deno, Bun and workerd (an object with `list`, `put` and `delete`); IndexedDB by default in browsers. */
  store?: OutboxStore;
  /** How long a write is kept, in ms: 1..=2592000000 (30 days); default 86400000 (a day). */
  ttl?: number;
  /** Opt-in: write `Authorization`, `Cookie`, `Proxy-Authorization` and URL userinfo to the store. Default false (such a write is not kept). */
  credentials?: boolean;
  /** When a write goes into the store: `"after-try-later"` (default: only once it ended try-later) or
   * `"before-send"` (write-ahead: a write that qualifies is stored, claimed, before its first send,
   * and leaves the store when its outcome is final). A send's own `durable` overrides it. */
  durable?: OutboxDurable;
}

/** When an outbox writes a write to its store (docs/outbox.md, write-ahead). */
export type OutboxDurable = "before-send" | "after-try-later";

/** `send`'s init: a call's, plus `durable` (this send's write-ahead choice). */
export interface OutboxSendInit extends RetryInit {
  durable?: OutboxDurable;
}

/** What `send` resolves with: the operation's outcome, and whether the write was kept. */
export interface OutboxResult extends Outcome {
  kept: boolean;
  /** It was in the store before its first send (write-ahead). */
  ahead: boolean;
  /** Why not, when not kept. */
  notKept?: NotKept;
  /** The entry's id, when kept. */
  id?: string;
  /** The store's error, when `notKept` is "storage". */
  storeError?: unknown;
}

export interface OutboxEventDetail {
  entry?: OutboxEntry;
  report?: Report | null;
  /** `sent`: the final response. */
  response?: Response;
  notKept?: NotKept;
  method?: string;
  url?: string;
  error?: unknown;
}

export interface OutboxEvent extends Event {
  readonly detail: OutboxEventDetail;
}

/** Events: `kept`, `not-kept`, `retry` (re-sent, kept for later), `sent`,
 * `expired`, `failed`, `change` (what waits changed), `error`. */
export declare class Outbox extends EventTarget {
  readonly name: string;
  send(input: RequestInfo | URL, init?: OutboxSendInit): Promise<OutboxResult>;
  pending(): Promise<OutboxEntry[]>;
  /** Sends what is due now, ends what expired. */
  flush(): Promise<void>;
  /** Releases its timer and listener; a re-send in flight is cancelled and its entry kept. */
  close(): Promise<void>;
  addEventListener(type: "kept" | "not-kept" | "retry" | "sent" | "expired" | "failed" | "change" | "error", listener: (event: OutboxEvent) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
}

/** A durable outbox whose sends and re-sends go through `policy`. */
export declare function outbox(policy: RetryPolicy, name: string, options?: OutboxOptions): Promise<Outbox>;
export declare function memoryStore(): OutboxStore;
/** Node, Deno, Bun: one JSON file per entry in `dir`, written atomically;
 * drains take the directory's lock (an owner id and a heartbeat). */
export declare function fileStore(dir: string): OutboxStore;
/** Browsers: IndexedDB, with a Web Lock around each drain. */
export declare function indexedDBStore(name: string): OutboxStore;
