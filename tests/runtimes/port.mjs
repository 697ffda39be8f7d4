// A free loopback port, for the runners and benches that start a server
// or a process which cannot pick its own (a module without side effects:
// tests/runtimes/procs.mjs installs exit and signal handlers).

import { createServer } from 'node:net';

/** A port free on 127.0.0.1 now (another process may take it before the
 * caller binds it: bind with a retry where that matters). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
