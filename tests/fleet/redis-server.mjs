// The redis-server of the Redis tiers (tests/fleet/redis.mjs, crash.mjs):
// Debian's package (scripts/bootstrap.sh installs it), started on 127.0.0.1
// in a directory of its own, never the system service; killed by the tier.
import { mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '../runtimes/procs.mjs';

/** A redis-server on 127.0.0.1:`port` in `dir`: without persistence, or with an fsync'd append-only file. */
export async function startRedis(dir, port, { persist = false } = {}) {
  mkdirSync(dir, { recursive: true });
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', persist ? 'yes' : 'no'];
  if (persist) args.push('--appendfsync', 'always');
  const p = start('redis-server', 'redis-server', args, { echo: false });
  const until = Date.now() + 10_000;
  while (!p.lines.some((l) => l.includes('Ready to accept connections'))) { // bounded by `until`
    if (p.child.exitCode !== null || Date.now() > until) throw new Error(`redis-server did not start:\n${p.lines.join('\n')}\n${p.tail}`);
    await sleep(20);
  }
  return p;
}

export async function killRedis(p) {
  try { process.kill(-p.child.pid, 'SIGKILL'); } catch { /* gone */ }
  await Promise.race([p.exited, sleep(3000)]);
}
