// The global slot: `globalThis.fetch = policy.fetch`, a second policy over
// the first, a test tool's wrapper (MSW-style) over the policy or under it,
// and `new RetryPolicy({ fetch })`. The host side of each case does the same
// with the host's fetch. The slot is installed behind a fuse (harness.mjs) and
// restored after every case.
import { installGlobalFetch } from './harness.mjs';
import { retriedNetworkFailure } from './deliberate.mjs';

const hrefOf = (input) => (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
const isMocked = (input) => /[?&]mocked=1/.test(hrefOf(input));

// A test tool's patch of the global: mocked URLs answered here, the rest
// passed to what was there before (as the call, or as a Request).
function installMock({ asRequest = false } = {}) {
  const orig = globalThis.fetch;
  installGlobalFetch((input, init) => (isMocked(input)
    ? Promise.resolve(new Response('mock', { status: 201, headers: { 'X-Mock': 'yes' } }))
    : asRequest ? orig(new Request(input, init)) : orig(input, init)));
}

export function globalCases(h) {
  // Both sides use the one global slot: one after the other.
  const add = (name, scenario, opts = {}) => h.add(name, scenario, { ...opts, serial: true });
  const mine = (t) => (t.side === 'host' ? t.hostFetch : t.policy.fetch);
  const post = { method: 'POST', body: 'via the global', headers: { 'Content-Type': 'text/plain', 'X-Test': 'g' } };

  add('globalThis.fetch = policy.fetch: a GET through the global answers as fetch does', (t) => {
    installGlobalFetch(mine(t));
    return globalThis.fetch(t.u({ body: 'global' }));
  });
  add('globalThis.fetch = policy.fetch: a POST redirected 307 through the global answers as fetch does', (t) => {
    installGlobalFetch(mine(t));
    return globalThis.fetch(t.u({ loc: t.path({ final: 1 }), status: 307 }), post);
  });
  add('globalThis.fetch = policy.fetch: a data: URL through the global answers as fetch does', (t) => {
    installGlobalFetch(mine(t));
    return globalThis.fetch('data:text/plain,through%20the%20global');
  });
  add('globalThis.fetch = policy.fetch: a deterministic failure through the global is sent once', (t) => {
    installGlobalFetch(mine(t));
    return globalThis.fetch(t.u({ loc: t.path({ final: 1 }) }), { redirect: 'error' });
  }, retriedNetworkFailure(h.runtime));
  add('A second policy installed over the first answers as fetch does', (t) => {
    installGlobalFetch(mine(t));
    if (t.side === 'policy') installGlobalFetch(new t.saferetry.RetryPolicy().fetch);
    return globalThis.fetch(t.u({ body: 'second' }));
  });
  for (const asRequest of [false, true]) {
    const how = asRequest ? 'that passes new Request(input, init) on' : 'that passes (input, init) on';
    add(`A mock wrapper ${how}, installed over policy.fetch, answers a mocked URL itself`, (t) => {
      installGlobalFetch(mine(t));
      installMock({ asRequest });
      return globalThis.fetch(t.u({ mocked: 1 }), post);
    });
    add(`A mock wrapper ${how}, installed over policy.fetch, passes another URL to the policy`, (t) => {
      installGlobalFetch(mine(t));
      installMock({ asRequest });
      return globalThis.fetch(t.u({ loc: t.path({ final: 1 }), status: 307 }), post);
    });
    add(`A mock wrapper ${how}, installed after the policy was made, is honoured by policy.fetch for a mocked URL`, (t) => {
      installMock({ asRequest });
      return (t.side === 'host' ? globalThis.fetch : t.policy.fetch)(t.u({ mocked: 1 }), post);
    });
    add(`A mock wrapper ${how}, installed after the policy was made, passes another URL through policy.fetch to the server`, (t) => {
      installMock({ asRequest });
      return (t.side === 'host' ? globalThis.fetch : t.policy.fetch)(t.u({ body: 'passed' }), post);
    });
  }
  add('new RetryPolicy({ fetch }) sends through the given transport, once per attempt', async (t) => {
    let calls = 0;
    const transport = (input, init) => { calls += 1; return t.hostFetch(input, init); };
    const f = t.side === 'host' ? transport : new t.saferetry.RetryPolicy({ fetch: transport }).fetch;
    const res = await f(t.u({ body: 'transport' }));
    return { ...(await t.describe(res)), calls };
  });
  add('new RetryPolicy({ fetch }) answers what a mock transport answers', async (t) => {
    const transport = () => Promise.resolve(new Response('from the transport', { status: 202, statusText: 'Mocked' }));
    const f = t.side === 'host' ? transport : new t.saferetry.RetryPolicy({ fetch: transport }).fetch;
    return f(t.u());
  });
}
