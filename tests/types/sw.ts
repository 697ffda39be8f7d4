// saferetry/sw's types (docs/outbox.md, service worker), and write-ahead's.
import { syncOutbox } from "saferetry/sw";
import { outbox, memoryStore, RetryPolicy } from "saferetry";
import type { OutboxDurable, OutboxResult } from "saferetry";

syncOutbox("orders", { policy: { totalMs: 4000 }, ttl: 3_600_000 });
// @ts-expect-error a name is required
syncOutbox();
// @ts-expect-error policy options are checked
syncOutbox("orders", { policy: { totalMs: "4s" } });

export async function aheadUsage(): Promise<boolean> {
  const durable: OutboxDurable = "before-send";
  const box = await outbox(new RetryPolicy(), "orders", { store: memoryStore(), durable });
  const r: OutboxResult = await box.send("http://127.0.0.1/orders", { method: "PUT", body: "{}", durable: "after-try-later" });
  // @ts-expect-error durable is one of two names
  await box.send("http://127.0.0.1/orders", { durable: "always" });
  // @ts-expect-error durable is one of two names
  await outbox(new RetryPolicy(), "orders", { durable: true });
  return r.ahead;
}
