// A suite (suite.mjs beside this file: e2e or fidelity) in Node, Deno or
// Bun, against the installed package (bare import `saferetry`, so the
// runtime's own resolver picks the export condition). run.mjs copies this
// file next to suite.mjs and runs, from the project folder:
//
//   deno run --no-prompt --allow-net=127.0.0.1 --allow-read=<project> \
//     --node-modules-dir=manual --no-lock runner.mjs deno <url> <altUrl> [filter] [mode]
//   bun run runner.mjs bun <url> <altUrl> [filter] [mode]
//   node runner.mjs node <url> <altUrl> [filter] [mode]
//
// The fault server runs in a separate Node process (its CLI); its URLs come in
// as arguments. Prints "entry <resolved URL of saferetry>", "detected <the
// policy's runtime>", one line per case
// and "N passed, M failed"; exits 1 on any failure.
import * as saferetry from 'saferetry';
// The fleet's entry as this runtime resolves it (the e2e suite checks it
// gives the root entry's BudgetAuthority; the fidelity suite ignores it).
import * as authority from 'saferetry/authority';
import { runSuite } from './suite.mjs';

const args = globalThis.Deno ? Deno.args : process.argv.slice(2);
const exit = (code) => (globalThis.Deno ? Deno.exit(code) : process.exit(code));
const [runtime, url, altUrl, filter, mode] = args;

let code = 1;
try {
  if (!runtime || !url || !altUrl) throw new Error('usage: runner.mjs <runtime> <url> <altUrl> [filter] [mode]');
  // The file the runtime's own resolver maps `saferetry` to (the same resolver
  // as the import above).
  console.log(`entry ${import.meta.resolve('saferetry')}`);
  // Which runtime's fetch-error rules the wasm applies here.
  console.log(`detected ${new saferetry.RetryPolicy({}).runtime}`);
  const { failed } = await runSuite({ saferetry, server: { url, altUrl }, runtime, filter: filter || undefined, mode: mode || undefined, modules: { authority } });
  code = failed === 0 ? 0 : 1;
} catch (err) {
  console.error('suite crashed:', err);
}
// Exit explicitly: a library timer left behind must not keep the run waiting.
exit(code);
