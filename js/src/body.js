// Bodies as the machine reads them (src/host/attempt/transport.rs, replay.rs):
// whole up to a bound, chunk by chunk, or handed over to the caller as a
// stream of the chunks read followed by the rest. These functions read,
// count and build; what the counts mean (too large, read on, hand over) is
// decided in Rust (`policy::body`).

/** The chunks as one buffer. */
function concat(chunks, total) {
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all.buffer;
}

/** The bytes of `source`'s body (a Response's or a Request's): an
 * `ArrayBuffer`, or `null` as soon as more than `max` bytes arrived (the
 * rest is cancelled). A read's rejection rejects. */
export async function readAll(source, max) {
  const body = source.body;
  if (!body) return new ArrayBuffer(0);
  const reader = body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concat(chunks, total);
    chunks.push(value);
    total += value.byteLength;
    if (total > max) {
      reader.cancel().catch(() => {});
      return null;
    }
  }
}

/** A reader of `response`'s body that keeps the chunks it read. */
export function reader(response) {
  return { reader: response.body.getReader(), chunks: [], total: 0, pending: undefined };
}

/** The next chunk, kept: resolves to its length in bytes, or -1 at the end.
 * A read the body is handed over with while it waits (`joined`) is the
 * caller's: its chunk is kept no more (the length it resolves to is
 * nobody's). */
export function chunk(r) {
  const read = r.reader.read();
  r.pending = read;
  return read.then(({ done, value }) => {
    if (r.pending !== read) return 0;
    r.pending = undefined;
    if (done) return -1;
    r.chunks.push(value);
    r.total += value.byteLength;
    return value.byteLength;
  });
}

/** The chunks read, as one `ArrayBuffer`. */
export function whole(r) {
  return concat(r.chunks, r.total);
}

// A hand-over whose stream the caller dropped is collected with its state;
// then its host body is cancelled, which releases the connection (Node and
// Chromium keep a locked body's connection otherwise: tests/leaks/README.md).
const unread =
  typeof FinalizationRegistry === "function" ? new FinalizationRegistry((held) => held.cancel().catch(() => {})) : null;

const weakly = typeof WeakRef === "function" ? (value) => new WeakRef(value) : (value) => ({ deref: () => value });

/** The host's body (`reader`'s) errors whether or not anyone reads it: so
 * does the stream of `controller`. Held weakly, by a closure made out here
 * (one made in `joined` would keep its scope, the chunks with it): the
 * reader, the registry's held value, must not keep the stream alive. */
function erring(reader, controller) {
  const ref = weakly(controller);
  reader.closed.catch((error) => {
    try {
      ref.deref()?.error(error);
    } catch {
      // Already closed or errored.
    }
  });
}

/** A stream of the chunks `r` read, then the chunk of the read it was
 * waiting for when handed over (if any), then the rest of its body, pulled
 * as the caller reads (high-water mark 0: nothing is read ahead, the host's
 * stream applies its backpressure): every byte once, in order. The host's
 * error (a body cut short, the caller's abort) errors it as it errors the
 * host's body, read or not (a caller waiting on `closed` sees it); the
 * caller's cancel cancels the host's body; `signal` (the caller's) also
 * stops the chunks read earlier, as it would have stopped them in the
 * host's body (`follows`: the host's body follows `signal` too). Not a tee
 * of the body: undici's tee costs ~100 µs on every chunked answer.
 * `keep` (the attempt's controller) lives as long as the stream. */
export function joined(r, signal, follows, keep) {
  const { reader } = r;
  // The registry's target: reachable only from this stream's algorithms
  // (the held reader knows nothing of it).
  const chunks = r.chunks;
  r.chunks = [];
  let pending = r.pending;
  r.pending = undefined;
  const read = () => {
    const next = pending ?? reader.read();
    pending = undefined;
    return next;
  };
  unread?.register(chunks, reader, chunks);
  const done = () => unread?.unregister(chunks);
  const source = {
    start: (controller) => erring(reader, controller),
    pull(controller) {
      if (signal?.aborted) {
        // The chunks read earlier go as the host's queue would. A host body
        // that follows the signal fails the read as the host's own read
        // fails (the reason in Node and Chromium, an AbortError of its own
        // in workerd, WebKit and Firefox), even when a chunk came in just
        // before the abort; otherwise, with the reason.
        done();
        chunks.length = 0;
        const fail = () => controller.error(signal.reason);
        return follows ? read().then(fail, (error) => controller.error(error)) : fail();
      }
      if (chunks.length > 0) return controller.enqueue(chunks.shift());
      return read().then(({ done: end, value }) => {
        if (!end) return controller.enqueue(value);
        done();
        controller.close();
      });
    },
    cancel: (reason) => reader.cancel(reason),
    keep,
  };
  return new ReadableStream(source, { highWaterMark: 0 });
}
