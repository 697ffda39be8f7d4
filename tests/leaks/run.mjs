// Long-run leak checks (issue 6 item 6).
//   node tests/leaks/run.mjs node       # Node, in a child run with --expose-gc
//   node tests/leaks/run.mjs chromium   # Debian Chromium via playwright-core
// Each prints its figures, one line per check and "N passed, M failed";
// the exit code is non-zero when a check fails. See README.md here.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const target = process.argv[2];
const TARGETS = ['node', 'chromium'];
if (!TARGETS.includes(target)) {
  console.error(`usage: node tests/leaks/run.mjs <${TARGETS.join('|')}>`);
  process.exit(2);
}

if (target === 'node') {
  const script = fileURLToPath(new URL('./node.mjs', import.meta.url));
  const child = spawn(process.execPath, ['--expose-gc', script, ...process.argv.slice(3)], { stdio: 'inherit' });
  const forward = (sig) => child.kill(sig);
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  child.once('exit', (code, signal) => {
    process.exitCode = code ?? (signal ? 1 : 0);
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  });
} else {
  const { runChromium } = await import('./chromium.mjs');
  process.exitCode = (await runChromium(process.argv.slice(3))) ? 0 : 1;
}
