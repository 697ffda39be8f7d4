// Non-HTTP(S) schemes: data:, blob:, about:, file:. Nothing to retry; the
// policy must hand the call to fetch and give back what fetch gives.
import { ALL_MODES } from './harness.mjs';

export function schemeCases({ add }) {
  const hasBlobUrls = typeof URL.createObjectURL === 'function';
  const noBlob = hasBlobUrls ? {} : { skip: 'this runtime has no URL.createObjectURL, so no blob: URL to fetch' };
  const blobUrl = (t, parts, type) => t.mask(URL.createObjectURL(new Blob(parts, { type })), '<blob: URL>');
  // A file that exists where the suite runs from a file: URL (Node, Deno,
  // Bun): the suite itself; elsewhere (workerd's import.meta.url is no URL) a conventional path.
  const here = URL.canParse?.(import.meta.url) ? new URL('./suite.mjs', import.meta.url) : null;
  const fileUrl = here?.protocol === 'file:' ? here.href : 'file:///etc/hostname';

  add('A data: URL with text gives the same Response', (t) => t.fetch('data:text/plain;charset=utf-8,hello%20data'), { modes: ALL_MODES });
  add('A base64 data: URL gives the same bytes', (t) => t.fetch('data:application/octet-stream;base64,AAEC/f7/'));
  add('A data: URL without a type gives the same Response', (t) => t.fetch('data:,plain'));
  add('A data: URL with a JSON body reads as JSON', async (t) => ({ json: await (await t.fetch('data:application/json,{"d":1}')).json() }));
  add('An invalid base64 data: URL rejects as with fetch', (t) => t.fetch('data:text/plain;base64,%%%not base64'), { shape: true });
  add('A data: URL without a comma rejects as with fetch', (t) => t.fetch('data:text/plain'), { shape: true });
  add('A data: URL fetched with POST gives what fetch gives', (t) => t.fetch('data:text/plain,posted', { method: 'POST', body: 'x' }));
  add('A data: URL with redirect: "error" and an aborted-later signal gives the same Response', (t) =>
    t.fetch('data:text/plain,opts', { redirect: 'error', signal: new AbortController().signal }));
  add('A data: URL as a Request object gives the same Response', (t) => t.fetch(new Request('data:text/plain,from%20request')));
  add('A blob: URL gives the same Response (type, headers, body)', (t) => t.fetch(blobUrl(t, ['blob text'], 'text/x-test')), { ...noBlob, modes: ALL_MODES });
  add('A blob: URL of binary bytes gives the same bytes', (t) => t.fetch(blobUrl(t, [new Uint8Array([0, 1, 254, 255])], '')), noBlob);
  add('A revoked blob: URL rejects as with fetch', (t) => {
    const u = blobUrl(t, ['gone'], 'text/plain');
    URL.revokeObjectURL(u);
    return t.fetch(u);
  }, { ...noBlob, shape: true });
  add('A blob: URL fetched with POST rejects or resolves as with fetch', (t) => t.fetch(blobUrl(t, ['posted'], 'text/plain'), { method: 'POST', body: 'x' }), noBlob);
  add('about:blank gives what fetch gives', (t) => t.fetch('about:blank'), { shape: true });
  add('about:invalid gives what fetch gives', (t) => t.fetch('about:invalid'), { shape: true });
  add('A file: URL gives what fetch gives', (t) => t.fetch(fileUrl), { shape: true });
  add('A missing file: URL gives what fetch gives', (t) => t.fetch('file:///no/such/file/saferetry'), { shape: true });
}
