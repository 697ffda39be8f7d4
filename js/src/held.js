// A buffered response that holds its bytes (js/src/attempts.js `rebuild`,
// where the machine says the host allows it: src/policy/runtime.rs
// `holding`). Given to js/src/load.js by the entries of the runtimes it can
// be (js/src/node.js, workerd.js), so a page's bundle does not carry it.
import { FROM_BYTES, Rebuilt, failed, rebuilt } from "./attempts.js";

/** A buffered response whose bytes are held where the machine says the
 * host allows it (src/policy/runtime.rs `holding`): `text()`, `json()`,
 * `arrayBuffer()` and `bytes()`, read first, answer from the bytes where
 * the host's read would answer the same (js/src/attempts.js
 * `FROM_BYTES`); its `body`, `blob()`, `formData()`, `clone()`, any later
 * read and any read only the host can answer are those of the Response
 * `rebuilt` makes around them, made then (already read if this one was).
 * So a caller who reads the whole body builds no body stream (~25 µs in
 * Node 20) and no host's read of one (workerd: 15–27 µs, with or without
 * a caller's signal). Built without a body
 * (Node), or with the bytes as well (`beside`: workerd, whose
 * `respondWith` and Cache API read the body a Response was built with,
 * not its getters). With `abort` 1 or 2 a read
 * once the caller's signal aborted fails as `SignalledResponse`'s. */
export class HeldResponse extends Rebuilt {
  #bytes;
  #response;
  #signal;
  #abort;
  #read = false;
  #full = undefined;

  constructor(bytes, response, signal, abort, beside) {
    super(beside ? bytes : null, response);
    this.#bytes = bytes;
    this.#response = response;
    this.#signal = signal;
    this.#abort = abort;
  }

  /** The Response around the bytes, made at the first ask (read, when this one was). */
  #made() {
    if (this.#full === undefined) {
      const bytes = this.#read ? new ArrayBuffer(0) : this.#bytes;
      this.#bytes = undefined;
      this.#full = rebuilt(this.#response, bytes, this.#signal, this.#abort);
      if (this.#read) this.#full.arrayBuffer().catch(() => {});
    }
    return this.#full;
  }

  get body() {
    return this.#made().body;
  }

  get bodyUsed() {
    return this.#read || (this.#full !== undefined && this.#full.bodyUsed);
  }

  clone() {
    return this.#made().clone();
  }

  blob() {
    return this.#made().blob();
  }

  formData() {
    return this.#made().formData();
  }

  static {
    for (const [name, answer] of Object.entries(FROM_BYTES)) {
      if (!Response.prototype[name]) continue;
      const value = function () {
        if (this.#full !== undefined || this.#read) return this.#made()[name]();
        const aborted = this.#abort && this.#signal.aborted;
        const out = aborted ? undefined : answer(this.#bytes);
        // What only the host's read can say: its read of the bytes.
        if (!aborted && out === undefined) return this.#made()[name]();
        this.#read = true;
        this.#bytes = undefined;
        return aborted ? Promise.reject(failed(this.#signal, this.#abort === 1)) : Promise.resolve(out);
      };
      Object.defineProperty(this.prototype, name, { value, writable: true, configurable: true });
    }
  }
}
