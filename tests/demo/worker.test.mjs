// The Worker example end to end: the fault server, workerd serving
// www/worker/worker.js over the built package, and requests through it.
//   node --test tests/demo/worker.test.mjs     (after `make build`)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startWorkerExample } from '../../www/worker/run.mjs';

let w;
before(async () => { w = await startWorkerExample(); });
after(async () => { await w?.close(); });

const call = (path, init = {}) => fetch(`${w.url}/proxy?u=${encodeURIComponent(path)}`, { ...init, signal: AbortSignal.timeout(15_000) });
const count = async (runId) => (await fetch(`${w.fault.url}/count/${runId}`, { signal: AbortSignal.timeout(5_000) })).json();

/** Every file of the package `entry` reaches: static and dynamic imports
 * and `new URL(...)` assets, relative to each file. */
function reachable(entry) {
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    if (file.endsWith('.wasm')) return;
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|new URL\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      walk(path.join(path.dirname(file), m[1]));
    }
  };
  walk(entry);
  return seen;
}

test('the example config names every module the workerd entry can reach, so none is missing at its first use', () => {
  const config = readFileSync('www/worker/config.capnp', 'utf8');
  const embedded = new Set([...config.matchAll(/embed "\.\.\/\.\.\/(js\/src\/[^"]+)"/g)].map((m) => m[1]));
  const reached = [...reachable('js/src/workerd.js')].map((f) => path.relative('.', f)).filter((f) => f !== 'js/src/workerd.js');
  assert.ok(reached.length > 20, `the walk found the package's modules (${reached.length})`);
  assert.deepEqual(reached.filter((f) => !embedded.has(f)), [], 'modules the config does not give workerd');
});

test('503, 503, 200 upstream: the worker answers 200 after 3 attempts; the server counted 3', async () => {
  const run = randomUUID();
  const res = await call(`/s/seq/${run}?steps=503,503,200`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'status 200 (request 3)');
  assert.equal(res.headers.get('x-saferetry-attempts'), '3');
  assert.equal(res.headers.get('x-saferetry-reason'), 'succeeded');
  const report = JSON.parse(res.headers.get('x-saferetry-report'));
  assert.deepEqual(report.attempts.map((a) => a.status), [503, 503, 200]);
  assert.equal((await count(run)).requests, 3);
});

test('POST whose connection drops after the server read it: maybe-delivered, sent once', async () => {
  const run = randomUUID();
  const res = await call(`/s/reset-after-read/${run}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"order":42}' });
  assert.equal(res.status, 502);
  assert.equal(res.headers.get('x-saferetry-attempts'), '1');
  assert.equal(res.headers.get('x-saferetry-reason'), 'maybe-delivered');
  const body = await res.json();
  assert.equal(body.reason, 'maybe-delivered');
  assert.equal(body.report.attempts[0].error.stage, 'maybe-delivered');
  const c = await count(run);
  assert.equal(c.requests, 1);
  assert.equal(c.bodiesRead, 1);
});

test('Retry-After beyond the budget: the upstream 503 and its Retry-After pass through, unshortened', async () => {
  const run = randomUUID();
  const res = await call(`/s/seq/${run}?steps=${encodeURIComponent('503~ra=120')}`);
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '120');
  assert.equal(res.headers.get('x-saferetry-reason'), 'wait-exceeds-budget');
  await res.arrayBuffer();
  assert.equal((await count(run)).requests, 1);
});

test('only paths on the upstream are proxied', async () => {
  const res = await fetch(`${w.url}/proxy?u=${encodeURIComponent('http://127.0.0.1:1/')}`, { signal: AbortSignal.timeout(5_000) });
  assert.equal(res.status, 400);
  await res.arrayBuffer();
});
