// Helpers the adapters share: reading a body the way a caller would.

// The fake sends at most 40 MiB (640+ reads) or 20 events: these bounds are far above that.
const MAX_READS = 100_000;
const MAX_EVENTS = 1_000;

/** Reads a web ReadableStream to its end, reporting each chunk's size; keeps nothing. */
export async function readChunks(stream, onBytes) {
  const reader = stream.getReader();
  try {
    for (let reads = 0; reads < MAX_READS; reads += 1) {
      const { done, value } = await reader.read();
      if (done) return;
      onBytes(value.byteLength);
    }
    throw new Error(`the body did not end within ${MAX_READS} reads`);
  } finally {
    reader.releaseLock();
  }
}

/** Reads an async iterable of SDK events to its end, reporting each. */
export async function readEvents(iterable, onEvent) {
  let events = 0;
  for await (const _ of iterable) {
    onEvent(1);
    if (++events > MAX_EVENTS) throw new Error(`the stream did not end within ${MAX_EVENTS} events`);
  }
}

/** supabase-js answers { data, error } instead of throwing: make an error throw, keeping its status. */
export function unwrap({ data, error, status }) {
  if (error) throw Object.assign(new Error(error.message ?? String(error)), { status: error.status ?? error.statusCode ?? status, name: error.name });
  return { data, status };
}
