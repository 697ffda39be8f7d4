// The SDK tier: nine SDKs that take a custom fetch, each against a local fake
// of its API, once on plain `fetch` and once on saferetry's `policy.fetch`.
//
//   node tests/sdks/run.mjs <projectDir> [filter] [--matrix <file.md>]
//
// projectDir holds the packed package (scripts/pack-install.sh). filter keeps
// the (SDK, case) pairs whose "<sdk> <case>" contains it. Prints one line per
// pair — `ok` when saferetry is at least as good as plain, `FAIL` otherwise,
// `n/a` when the SDK cannot do the case — then "N passed, M failed"; exits 1
// on any failure. Each run is its own child process (case.mjs).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFake } from './fake-server.mjs';
import { CASES, SDKS, matrix, notApplicable, runPair, verdictLine } from './judge.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD_TIMEOUT_MS = 60_000;
const args = process.argv.slice(2);
const matrixAt = args.indexOf('--matrix');
const matrixFile = matrixAt >= 0 ? args.splice(matrixAt, 2)[1] : null;
const [projectDir, filter = ''] = args;
if (!projectDir || !fs.existsSync(path.join(projectDir, 'node_modules/saferetry/package.json'))) {
  console.error('usage: node tests/sdks/run.mjs <projectDir with saferetry installed> [filter] [--matrix file.md]');
  process.exit(2);
}

/** Runs case.mjs in a child; resolves with its JSON line (or a harness error). */
function runChild(sdk, kase, mode, origin, runId) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', path.join(here, 'case.mjs'), sdk, kase, mode, projectDir, origin, runId], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop();
      try {
        resolve(JSON.parse(line));
      } catch {
        const said = (stderr || stdout).split('\n').find((l) => /error/i.test(l)) ?? stderr.trim().slice(-300);
        resolve({ harnessError: `child ${mode} ended ${signal ?? code}: ${said}` });
      }
    });
  });
}

// ---- the run -----------------------------------------------------------------

const fake = await startFake();
const rows = [];
let passed = 0;
let failed = 0;
try {
  for (const sdk of SDKS) {
    const adapter = await import(`./adapters/${sdk}.mjs`);
    for (const kase of CASES) {
      if (!`${sdk} ${kase}`.includes(filter)) continue;
      const na = notApplicable(adapter, kase);
      if (na) {
        console.log(`n/a ${sdk} ${kase} — ${na}`);
        rows.push({ sdk, kase, na });
        continue;
      }
      const j = await runPair(fake, kase, `${sdk}-${kase}`, (mode, runId) => runChild(sdk, kase, mode, fake.origin, runId));
      if (j.ok) passed += 1; else failed += 1;
      console.log(verdictLine(sdk, kase, j));
      rows.push({ sdk, kase, ...j });
    }
  }
} finally {
  await fake.close();
}

if (matrixFile) fs.writeFileSync(matrixFile, matrix(rows, CASES));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
