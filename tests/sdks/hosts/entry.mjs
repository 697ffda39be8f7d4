// One (SDK, case, fetch) run inside a browser page or a workerd Worker: the
// adapters and perform.mjs as in Node, saferetry as the host's bundler
// resolves it (`browser` → src/web.js, `workerd` → src/workerd.js).
import { RetryPolicy } from 'saferetry';
import * as ai from '../adapters/ai.mjs';
import * as anthropic from '../adapters/anthropic.mjs';
import * as axios from '../adapters/axios.mjs';
import * as ky from '../adapters/ky.mjs';
import * as octokit from '../adapters/octokit.mjs';
import * as ofetch from '../adapters/ofetch.mjs';
import * as openai from '../adapters/openai.mjs';
import * as stripe from '../adapters/stripe.mjs';
import * as supabase from '../adapters/supabase.mjs';
import { clientFor, describe, perform } from '../perform.mjs';

const ADAPTERS = { openai, anthropic, octokit, stripe, ky, ofetch, axios, supabase, ai };

/**
 * Runs the case; resolves with perform's outcome plus `ms`, or `{ harnessError }`
 * when the run could not start (an unknown SDK, a client that would not build).
 * Plain fetch is the platform's, bound to globalThis as a page or Worker hands
 * it over (an unbound `fetch` called with another `this` is an Illegal
 * invocation there, unlike Node); saferetry's is `policy.fetch`, unbound.
 */
export async function runCase({ sdk, kase, mode, origin, runId }) {
  const adapter = ADAPTERS[sdk];
  if (!adapter) return { harnessError: `no adapter ${sdk}` };
  if (mode !== 'plain' && mode !== 'saferetry') return { harnessError: `mode must be plain or saferetry, not ${mode}` };
  let client;
  try {
    const fetchFn = mode === 'saferetry' ? new RetryPolicy().fetch : globalThis.fetch.bind(globalThis);
    client = clientFor(adapter, fetchFn, origin, kase, runId);
  } catch (err) {
    const e = describe(err);
    return { harnessError: `the ${sdk} client did not build (${mode}): ${e.name}: ${e.message}` };
  }
  const out = { startedAt: Date.now() };
  await perform(adapter, kase, client, out);
  out.ms = Date.now() - out.startedAt;
  return out;
}
