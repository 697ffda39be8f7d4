// Helpers shared by the otel tier's runtimes: a span tree as text (docs/observability.md
// "Observability" shows one), and the secrets no attribute may hold.

export const SECRETS = ["pa55word", "s3cr3t-token", "tok-SECRET-1234", "sid-SECRET-5678", "body-SECRET-90"];

/** Finished spans (ReadableSpan-like: name, kind, attributes, events,
 * spanContext(), parentSpanContext, startTime) as an indented tree. */
export function render(spans, { times = true } = {}) {
  const id = (s) => s.spanContext().spanId;
  const parentOf = (s) => s.parentSpanContext?.spanId ?? s.parentSpanId;
  const ms = (t) => t[0] * 1e3 + t[1] / 1e6;
  const byParent = new Map();
  for (const s of spans) {
    const p = spans.some((o) => id(o) === parentOf(s)) ? parentOf(s) : undefined;
    if (!byParent.has(p)) byParent.set(p, []);
    byParent.get(p).push(s);
  }
  const lines = [];
  const walk = (parent, depth, t0) => {
    const children = (byParent.get(parent) ?? []).sort((a, b) => ms(a.startTime) - ms(b.startTime));
    for (const s of children) {
      const origin = t0 ?? ms(s.startTime);
      const at = times ? ` +${Math.round(ms(s.startTime) - origin)}ms` : "";
      const attrs = Object.entries(s.attributes)
        .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : v}`)
        .join(" ");
      lines.push(`${"  ".repeat(depth)}${s.name}${at}  ${attrs}`);
      for (const e of s.events ?? []) {
        const when = times ? ` +${Math.round(ms(e.time) - origin)}ms` : "";
        const ea = Object.entries(e.attributes ?? {}).map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : v}`).join(" ");
        lines.push(`${"  ".repeat(depth + 1)}event ${e.name}${when}  ${ea}`);
      }
      walk(id(s), depth + 1, origin);
    }
  };
  walk(undefined, 0);
  return lines.join("\n");
}
