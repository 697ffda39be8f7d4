import type { Attributes, MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { RetryPolicy } from "./index.js";

/** Any other key or value is a `TypeError` naming it (`instrument.attemptSpans`). */
export interface InstrumentOptions {
  /** Default: the global one (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Default: the global one (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
  /** Whether each request handed to `fetch` gets a CLIENT span of saferetry's own, with `traceparent` injected.
   * Default "auto": yes, unless the host `fetch` already makes spans (instrumentation-fetch wrapped the global
   * `fetch`, or instrumentation-undici listens to undici's channel): that span is then the attempt's, nested
   * under the operation's (see `resendAttributes`). */
  attemptSpans?: boolean | "auto";
  /** Set as the attribute `saferetry.policy` on every span this policy's instrumentation makes (operation and
   * attempt spans; an instrumented `fetch`'s own spans keep their attributes) and on every metric point. */
  name?: string;
}

export interface Instrumentation {
  /** Puts the policy's own `fetch`, `run` and `poll` back and stops its gauges. */
  disable(): void;
}

/** Spans for `policy.fetch`, `run`, `poll` (and an outbox's sends) and their attempts; the retry metrics (docs/observability.md). */
export declare function instrument(policy: RetryPolicy, options?: InstrumentOptions): Instrumentation;

/** `{ "http.request.resend_count": n }` for a request a policy resends through an instrumented `fetch`
 * (`startSpanHook` of instrumentation-undici, `applyCustomAttributesOnSpan` of instrumentation-fetch). */
export declare function resendAttributes(request?: unknown): Attributes;

/** `url` as `url.full` shows it: userinfo `REDACTED:REDACTED`, every query value `REDACTED`, no fragment. */
export declare function redactUrl(url: string | URL): string | undefined;
