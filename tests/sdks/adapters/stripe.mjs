// stripe: `httpClient: Stripe.createFetchHttpClient(fetch)`, retries off with
// maxNetworkRetries: 0. Stripe's paths are fixed, so the run travels in the API key.
import Stripe from 'stripe';

export const client = (fetch, { port, token }) => new Stripe(`sk_test_${token}`, {
  httpClient: Stripe.createFetchHttpClient(fetch),
  host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0,
});

/** POST /v1/customers (form body) → the customer's id. */
export const call = async (c) => (await c.customers.create({ email: 'a@example.com' })).id;

export const notApplicable = {
  stream: 'stripe-node has no streaming API: every response is parsed as JSON',
  abort: 'stripe-node has no streaming API to abort mid-stream',
  big: 'stripe-node has no raw-body API: every response is parsed as JSON',
};

export const redirectedPost = call;
