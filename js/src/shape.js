// An operation's outcome (with its report), a state for `subscribe`,
// `onRetry`'s argument and `stats()` as the wasm side hands them over
// (src/host/shared/convert.rs): numbers in its memory — codes, times,
// counts; `NaN` for an absent value — and a report's strings joined in one
// (their lengths among the numbers). Shaping only: every value, and which
// are present, was decided in Rust; the codes index the tables below.
import { memoryViews } from "./load.js";

const words = (s) => s.split(" ");
// `policy::state::Phase`, `policy::reason::Reason`, `WaitWhy` (a report's
// `waitKind`: its first three), `classify::Stage`, `rate_limit::FloorHeader`,
// `budget::Mode`, in their codes' order (convert.rs).
const STATES = words("idle requesting waiting succeeded try-later failed cancelled");
const REASONS = words("succeeded http-stop attempts-exhausted wait-exceeds-budget unsupported-retry-after attempt-timeout deadline cancelled maybe-delivered network-error retry-quota-exhausted queue-exceeds-budget body-not-replayable body-too-large invalid-random task-failed offline refused throttled");
const WHY = words("backoff throttle retry-after rate-limit queue offline poll");
const STAGES = words("not-sent maybe-delivered");
const FLOORS = words("retry-after retry-after-ms ratelimit x-ratelimit-reset x-ratelimit-reset-after");
const MODES = words("local leased fallback");
const BODY = words("buffer stream");
// `policy::runtime::Runtime`, in its codes' order.
export const RUNTIMES = words("node bun deno workerd browser");
// A terminal state's sentence, per reason; the last: a redirect that was
// deliberately not followed (`policy::state::phase_message`).
const MESSAGES = [
  "Done.",
  "The server refused the request; trying again will not help.",
  "The server is not answering properly right now.",
  "The server asked us to wait longer than this operation may take.",
  "The server asked us to wait, in a form we cannot read.",
  "The server took too long to answer.",
  "This took too long.",
  "Cancelled.",
  "The connection broke after the request was sent; it may have been received, so it was not sent again.",
  "The network is not reachable right now.",
  "Too many requests are failing; retries are paused for now.",
  "Too busy to start this request in time.",
  "The request body could not be sent again.",
  "The response was larger than allowed.",
  "The configured random() returned a value outside [0, 1).",
  "The task failed.",
  "You are offline; nothing was sent.",
  "The request cannot succeed as it is; trying again would fail the same way.",
  "The server is refusing most requests right now; this one was not sent.",
  "The server redirected the request, and the redirect was not followed, as the request asked.",
];

// Where the wasm side's work buffer says the numbers it answered last are:
// their address and count, past its work (src/host/operation/machine.rs
// `answer_numbers`).
const NUMBERS_AT = 132;
const NUMBERS_LEN = 133;

/** The numbers the wasm side just answered, copied into a plain array (a
 * typed array would allocate a buffer of its own). */
export function numbers() {
  const { work, doubles } = memoryViews();
  const from = work[NUMBERS_AT] >>> 3;
  const out = new Array(work[NUMBERS_LEN]);
  for (let i = 0; i < out.length; i++) out[i] = doubles[from + i];
  return out;
}

/** Sets `o[key]` to `value` unless it is absent (`undefined`, `NaN`). */
function put(o, key, value) {
  if (value !== undefined && value === value) o[key] = value;
}

/** An outcome's data (`outcomeOf`'s answer: the numbers taken with it and
 * the report's strings) as `{ kind, reason, message, retryAt?,
 * notBefore?, report }`. */
export function outcome([n, text]) {
  let at = 12;
  let cut = 0;
  const string = (units) => (units === units ? text.slice(cut, (cut += units)) : undefined);
  const snippet = string(n[10]);
  const attempts = [];
  for (let i = 0; i < n[11]; i++, at += 11) {
    const a = { startMs: n[at], durationMs: n[at + 1] };
    put(a, "status", n[at + 2]);
    if (n[at + 3] === n[at + 3]) a.error = { stage: STAGES[n[at + 3]], code: string(n[at + 4]), name: string(n[at + 5]) };
    put(a, "plannedWaitMs", n[at + 6]);
    put(a, "waitKind", WHY[n[at + 7]]);
    put(a, "retryAfterMs", n[at + 8]);
    put(a, "floorHeader", FLOORS[n[at + 9]]);
    if (n[at + 10]) a.phase = "poll";
    attempts.push(a);
  }
  const reason = REASONS[n[1]];
  const report = { reason };
  put(report, "retryAt", n[3]);
  report.elapsedMs = n[5];
  report.attempts = attempts;
  put(report, "responseBody", BODY[n[6]]);
  put(report, "handedOverMs", n[7]);
  if (n[8]) report.retryAfterHidden = true;
  put(report, "snippet", snippet);
  put(report, "budget", MODES[n[9]]);
  const data = { kind: STATES[n[0]], reason, message: MESSAGES[n[2]] };
  put(data, "retryAt", n[3]);
  put(data, "notBefore", n[4]);
  data.report = report;
  return data;
}

/** A state (`convert::phase`'s numbers) as `subscribe` shows it: `{ state,
 * … }` with what that state has (`retryAt` of `try-later` is `null` when
 * unknown). */
export function state(n) {
  const s = { state: STATES[n[0]] };
  put(s, "attempt", n[1]);
  put(s, "maxAttempts", n[2]);
  put(s, "until", n[3]);
  put(s, "waitMs", n[4]);
  put(s, "why", WHY[n[5]]);
  if (n[0] === 4) s.retryAt = n[6] === n[6] ? n[6] : null;
  put(s, "reason", REASONS[n[7]]);
  put(s, "message", MESSAGES[n[8]]);
  return s;
}

/** `onRetry`'s argument, of the waiting state before a retry. */
export const retryInfo = (n) => ({ attempt: n[1], waitMs: n[4], reason: WHY[n[5]] });

/** `stats()`: the counters (`convert::stats`'s numbers) and, with a
 * shared budget, its stats: `shared(client)`, the client's number its
 * last (absent: NaN). */
export function stats(n, shared) {
  const s = { operations: n[0], attempts: n.slice(1, 6), retries: n[6], exhausted: n[7], throttled: n[8], queued: n[9], inFlight: n[10] };
  put(s, "quotaLevel", n[11]);
  if (!Number.isNaN(n[12])) s.shared = shared(n[12]);
  return s;
}
