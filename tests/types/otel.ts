// saferetry/otel's types (docs/observability.md).
import { trace, metrics, type Attributes } from "@opentelemetry/api";
import { RetryPolicy } from "saferetry";
import { instrument, redactUrl, resendAttributes, type Instrumentation } from "saferetry/otel";

const policy = new RetryPolicy();
const handle: Instrumentation = instrument(policy, { tracerProvider: trace.getTracerProvider(), meterProvider: metrics.getMeterProvider(), name: "api" });
handle.disable();
instrument(policy);
instrument(policy, { attemptSpans: false });
// @ts-expect-error the policy's own fetch option is the one wrapped: instrument takes none
instrument(policy, { fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init) });
// @ts-expect-error a policy is required
instrument();
// @ts-expect-error attemptSpans is a boolean
instrument(policy, { attemptSpans: "no" });
const attrs: Attributes = resendAttributes({});
const full: string | undefined = redactUrl("https://u:p@example.com/?token=x");
export { attrs, full };
