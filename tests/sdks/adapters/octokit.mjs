// @octokit/core: `new Octokit({ request: { fetch } })`; core has no retries.
import { Octokit } from '@octokit/core';
import { readChunks } from '../support.mjs';

const repo = { owner: 'o', repo: 'r' };

export const client = (fetch, { base }) => new Octokit({ baseUrl: base, request: { fetch } });

/** GET /repos/o/r → full_name. */
export const call = async (c) => (await c.request('GET /repos/{owner}/{repo}', repo)).data.full_name;

/** GET the tarball with parseSuccessResponseBody: false, which hands back the body stream. */
async function tarball(c, signal, onBytes) {
  const res = await c.request('GET /repos/{owner}/{repo}/tarball/{ref}', {
    ...repo, ref: 'main', request: { parseSuccessResponseBody: false, signal },
  });
  await readChunks(res.data, onBytes);
}

export const stream = (c, { signal, onUnits }) => tarball(c, signal, (n) => onUnits(n / 1024));
export const download = (c, { onBytes }) => tarball(c, undefined, onBytes);

/** POST /repos/o/r/issues → "<status> <title>". */
export async function redirectedPost(c) {
  const res = await c.request('POST /repos/{owner}/{repo}/issues', { ...repo, title: 'hello' });
  return `${res.status} ${res.data.title}`;
}
