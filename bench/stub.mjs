// The `fetch` the own-CPU figures stub in (bench/cpu.mjs and bench/wasm-time.mjs
// in Node; bench/workerd-cpu.mjs copies it beside its Worker), and the
// compile traces' policies (bench/lazy-compile.mjs, page-split.mjs): it answers
// at once with a fresh small JSON `Response`, so no socket, server or
// network is left in a figure, only each client's work around `fetch`.
//
// A package takes the host's `fetch` when it loads; a `fetch` found later
// in the global slot is a wrapper it calls through (js/src/core.js
// `throughWrapper`: a URL parsed and counted per call), unless it carries
// the mark a policy's own `fetch` carries: then it is the transport
// beneath, called as the host's would be. So the stub is marked, and the
// figures are those of a real call's path.
const BODY = '{"ok":true}';
const INIT = { status: 200, headers: { "content-type": "application/json", "content-length": String(BODY.length) } };

export const stubFetch = () => Promise.resolve(new Response(BODY, INIT));
stubFetch[Symbol.for("saferetry.fetch")] = stubFetch;
