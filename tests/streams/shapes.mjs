// What the streams tier's server sends and its suite expects: the six
// Content-Types of issue 25, the two ways the head goes out, and the body
// of every stream, chunk by chunk (deterministic, so both sides compare
// against the same bytes). Web-standard JavaScript: the server (Node) and the
// suite (every runtime) import it.

/** The six shapes: a key for URLs and lines, and the Content-Type sent (null: none). */
export const SHAPES = [
  { key: 'text', type: 'text/plain; charset=utf-8' },
  { key: 'html', type: 'text/html; charset=utf-8' },
  { key: 'rsc', type: 'text/x-component' },
  { key: 'turbo', type: 'text/vnd.turbo-stream.html' },
  { key: 'none', type: null },
  { key: 'ndjson', type: 'application/x-ndjson' },
];

/** How the head goes out: `flush` (res.flushHeaders() at once, then the
 * chunks) or `first` (Node's default: the head with the first chunk). */
export const HEADS = ['flush', 'first'];

export const CHUNKS = 24;
export const EVERY_MS = 500;

/** The gaps between chunks, and the head shapes run with each: 24 chunks
 * every 500 ms (12 s); 2 chunks 5 s apart with the head sent with the first
 * (10 s: a first chunk held for the second would be 5 s late). */
export const GAPS = [{ every: EVERY_MS, n: CHUNKS, heads: HEADS }, { every: 5000, n: 2, heads: ['first'] }];

/** Chunk `i` (1-based) of a stream of shape `key`: small, UTF-8 beyond ASCII. */
export function chunk(key, i) {
  const n = String(i).padStart(2, '0');
  switch (key) {
    case 'html': return `<p>chunk ${n} · é</p>\n`;
    case 'rsc': return `${i}:["$","p",null,{"children":"chunk ${n} · é"}]\n`;
    case 'turbo': return `<turbo-stream action="append" target="m"><template>chunk ${n} · é</template></turbo-stream>\n`;
    case 'ndjson': return `${JSON.stringify({ i, text: `chunk ${n} · é` })}\n`;
    default: return `chunk ${n} · é\n`;
  }
}

/** The whole body of a stream of `count` chunks. */
export function wholeBody(key, count = CHUNKS) {
  let s = '';
  for (let i = 1; i <= count; i++) s += chunk(key, i);
  return s;
}

/** The stalled-JSON control's document: the server sends its first half, then nothing. */
export const STALL_JSON = JSON.stringify({ id: 'doc-1', items: Array.from({ length: 20 }, (_, i) => ({ i, name: `item ${i}` })) });
