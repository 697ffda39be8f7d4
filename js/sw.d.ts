// saferetry/sw: in a service worker, send an outbox's waiting writes while
// no page of the origin is open (Background Sync's `sync` event; README
// "Outbox", service worker).
import type { RetryOptions } from "./index.js";

/** Checked when the first sync event has loaded the modules (a service worker cannot load them at its top level):
 * any other key, or a bad value (`syncOutbox.ttl`, `syncOutbox.policy.maxAttempts`), rejects that event with the
 * `TypeError`/`RangeError` naming it. */
export interface SyncOutboxOptions {
  /** The `RetryPolicy` options the worker's sends go through. */
  policy?: RetryOptions;
  /** The outbox's `ttl` (1..=2592000000 ms), as the pages open it. */
  ttl?: number;
  /** The outbox's credentials opt-in, as the pages open it. */
  credentials?: boolean;
}

/** Call at the worker script's top level: on the Background Sync event of
 * outbox `name` (the tag its IndexedDB store registers when a page keeps a
 * write), sends what is due; the event's promise rejects while writes still
 * wait, so that the browser fires it again later. */
export declare function syncOutbox(name: string, options?: SyncOutboxOptions): void;
