// The demo's scenarios: what the fault server does, and the call the page makes.
// `request(runId)` resolves to `{ url, init }` for `policy.run(url, init)`;
// every URL carries the run id, so the server counts this run alone.

/** The options of the page's policies (one per scenario: www/demo.js `policyFor`); a scenario's `init.retry` overrides them per call. */
export const POLICY_OPTIONS = { maxAttempts: 3, totalMs: 10_000, attemptMs: 3_000, baseMs: 600, capMs: 2_400 };

/** The load scenarios' policies (one per side, or one per tab): two
 * attempts within 2 s, short backoffs. */
export const LOAD_OPTIONS = { maxAttempts: 2, totalMs: 2_000, attemptMs: 1_000, baseMs: 50, capMs: 200 };

const seq = (runId, ...steps) => `/s/seq/${runId}?steps=${steps.map(encodeURIComponent).join(',')}`;

export const SCENARIOS = [
  {
    id: 'retry-503',
    title: '503 twice, then 200',
    server: 'Answers 503 Service Unavailable to the first two requests, then 200.',
    expect: 'Two backoff waits, then success. The server counts 3 requests.',
    request: (runId) => ({ url: seq(runId, '503', '503', '200'), init: {} }),
  },
  {
    id: 'always-503',
    title: 'Always 503',
    server: 'Answers 503 to every request.',
    expect: 'Three attempts (the limit), then “try later”. The server counts 3.',
    request: (runId) => ({ url: seq(runId, '503'), init: {} }),
  },
  {
    id: 'throttle-429',
    title: '429 with Retry-After: 3',
    server: 'Answers 429 Too Many Requests with Retry-After: 3, then 200.',
    expect: 'A wait of at least 3 s (never shorter), then success. The server counts 2.',
    request: (runId) => ({ url: seq(runId, '429~ra=3', '200'), init: {} }),
  },
  {
    id: 'retry-after-120',
    title: 'Retry-After: 120 against a 10 s budget',
    server: 'Answers 503 with Retry-After: 120; the operation may take 10 s in all.',
    expect: 'No shortened wait: it stops at once with “try again at …”, 120 s from now. The server counts 1.',
    request: (runId) => ({ url: seq(runId, '503~ra=120'), init: { retry: { totalMs: 10_000 } } }),
  },
  {
    id: 'slow-body',
    title: 'Stalled body',
    server: 'Sends the 200 head and the start of a JSON document at once, then nothing for 8 s.',
    expect: 'Each attempt times out after 1.5 s (a document that stops arriving is a timeout, not a success; a body that keeps arriving would be handed over as a stream); three attempts, then “try later”. The server counts 3.',
    request: (runId) => ({ url: `/s/slow-body/${runId}?ms=8000&stall=1&type=application/json`, init: { retry: { attemptMs: 1_500 } } }),
  },
  {
    id: 'post-lost',
    title: 'POST whose response is lost',
    server: 'Reads the whole POST body, then drops the connection without answering.',
    expect: 'Not sent again: the server may have acted on it. The server counts exactly 1.',
    request: (runId) => ({
      url: `/s/reset-after-read/${runId}`,
      init: { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"order":42,"amount":"19.99"}' },
    }),
  },
  {
    id: 'post-redirect',
    title: 'POST redirected (307) to a closed port',
    server: 'Answers the POST with 307 to a port where nothing listens.',
    expect: 'The redirect is followed as fetch follows it, but the refused second hop cannot pass for “never sent”: the first hop already received the POST, so it stops as maybe delivered. The server counts 1 (the first hop).',
    request: async (runId) => {
      const closed = await (await fetch('/control/closed-port')).json();
      const to = encodeURIComponent(`${closed.url}/pay`);
      return {
        url: `/s/redirect/${runId}?status=307&to=${to}`,
        init: { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"order":43}' },
      };
    },
  },
  {
    id: 'offline',
    title: 'Offline',
    server: 'Answers 200, once the browser is back online.',
    expect: 'While the browser is offline no attempt is spent: it waits for the network, then sends. Go offline first (DevTools → Network → Offline), press Start, then go back online.',
    request: (runId) => ({ url: seq(runId, '200'), init: { retry: { totalMs: 30_000 } } }),
  },
  {
    id: 'outage-load',
    title: 'Upstream down 3 s, then back (many calls)',
    load: { calls: 60, everyMs: 100, downMs: 3_000 },
    server: 'Answers 503 to every request for 3 s after the first one, then 200. The page calls it every 100 ms for 6 s, twice side by side: through a policy that throttles (the default) and through one with throttle: false, each against an upstream of its own.',
    expect: 'Once the window has seen the upstream refuse (5 requests or more, most of them failed), the throttling policy sends only a trickle of probes: most calls end at once, “throttled”, with nothing sent. When the upstream is back, a probe gets the first 200 within about a second, but the calls do not all come back at once: the 200s must fill the window first, so in the 3 s left a quarter to a half of the calls are still throttled (the table counts them; “Three tabs, upstream down 5 s” runs long enough to see every call come back). The server counts far fewer requests than without throttling.',
    request: (runId) => ({ url: `/s/outage/${runId}?ms=3000`, init: {} }),
  },
  {
    id: 'tabs-outage',
    title: 'Three tabs, upstream down 5 s, then back',
    tabs: { tabs: 3, calls: 300, everyMs: 50, upMs: 1_000, downMs: 5_000 },
    server: 'Answers 200, then 503 to every request for 5 s (from 1 s into the run), then 200 again: one upstream, down and back at the same moment for every tab. Three tabs (frames of this page: same-origin browsing contexts, which share a tabBudget exactly as tabs do) each call it every 50 ms for 15 s through a policy of their own on one tabBudget; beside them, three more do the same with throttle: false. The server counts each tab\'s requests.',
    expect: 'The tabs elect a leader that keeps their shared budget, so what one tab sees of the outage throttles all three. About a second into the outage most calls end at once, “throttled”, with nothing sent (stats().throttled counts them), and a few probes still go out; the tabs without throttling keep sending every call, and its retry until their shared retry quota runs out (about 100 retries: the step down in the chart). When the upstream is back, a probe gets the first 200 within a few seconds, often within one; the calls then come back over a few more seconds as the 200s fill the window (the table says when each tab was back to full rate). Every call ends within its 2 s deadline.',
    code: 'const policy = new RetryPolicy({ maxAttempts: 2, totalMs: 2000, shared: tabBudget("api") }); // in each tab\n'
      + '// every 50 ms, in each of the three tabs:\n'
      + 'policy.fetch(url).catch((e) => e.reason); // "throttled": nothing was sent\n'
      + 'policy.stats().throttled;                 // the calls that sent nothing',
    request: (runId) => ({ url: `/s/outage/${runId}`, init: {} }),
  },
  {
    id: 'outbox',
    title: 'Outbox: 503 with Retry-After: 3 against a 2 s budget',
    outbox: true,
    server: 'Answers the POST 503 with Retry-After: 3, then 201.',
    expect: 'The operation ends “try later”, and the write is kept in the outbox (IndexedDB, with its idempotency key). 3 s later the outbox sends it, once, with the same key — even if you reload the page meanwhile. The server counts 2 requests, one key.',
    request: (runId) => ({
      url: seq(runId, '503~ra=3', '201'),
      init: { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"order":44}', retry: { totalMs: 2_000, idempotencyKey: true } },
    }),
  },
];

/** The call as a visitor would write it, for display. */
export function codeFor({ url, init }, load) {
  if (load) {
    return `const policy = new RetryPolicy({ maxAttempts: 2, totalMs: 2000 }); // throttles by default\n`
      + `// every ${load.everyMs} ms, ${load.calls} times:\n`
      + `policy.fetch(${JSON.stringify(url)}).catch((e) => e.reason); // "throttled": nothing was sent`;
  }
  const shown = { ...init };
  if (shown.headers) shown.headers = { ...shown.headers };
  const args = Object.keys(shown).length ? `, ${JSON.stringify(shown, null, 2)}` : '';
  const options = Object.entries(POLICY_OPTIONS).map(([k, v]) => `${k}: ${v}`).join(', ');
  return `const policy = new RetryPolicy({ ${options} });\nconst op = policy.run(${JSON.stringify(url)}${args});`;
}
