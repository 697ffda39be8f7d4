// Helpers the adapters share: reading a body the way a caller would.

/** Reads a web ReadableStream to its end, reporting each chunk's size; keeps nothing. */
export async function readChunks(stream, onBytes) {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onBytes(value.byteLength);
    }
  } finally {
    reader.releaseLock();
  }
}

/** Reads an async iterable of SDK events to its end, reporting each. */
export async function readEvents(iterable, onEvent) {
  for await (const _ of iterable) onEvent(1);
}

/** supabase-js answers { data, error } instead of throwing: make an error throw, keeping its status. */
export function unwrap({ data, error, status }) {
  if (error) throw Object.assign(new Error(error.message ?? String(error)), { status: error.status ?? error.statusCode ?? status, name: error.name });
  return { data, status };
}
