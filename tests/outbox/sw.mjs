// The outbox tests' service worker (tests/outbox/sync-chromium.mjs,
// browsers.mjs): saferetry/sw drains the pages' outbox "sync" on its
// Background Sync event. (Import maps do not reach a service worker: the
// package's file by its path.)
import { syncOutbox } from '/pkg/sw.js';

syncOutbox('sync', { policy: { totalMs: 800 } });
// Take over at once: the test's pages need no reload to be controlled.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
