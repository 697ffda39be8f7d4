// What each guarantee weighs in a page's wasm (issue 37: "page import ≤ 35
// KB gzip"). A page's module is mostly the logic of what saferetry
// promises; which logic? Each row builds the page's module (saferetry_web)
// from HEAD with one piece's code made unreachable — `options::read`
// answering the defaults, `FloorHeaders::floor` answering no floor, and so
// on — so that the linker and wasm-opt drop it, and prints the module's
// bytes beside HEAD's. One row keeps every piece's logic and takes out the
// futures' suspension instead (each `.await` on the operation's path one
// poll with a no-op waker): what an explicit state machine in place of the
// operation's future could save at most. A throwaway copy is built, never
// this checkout's files. Deterministic; figures, not pass/fail.
//
//   node bench/page-weights.mjs     (one build per row, ~1 minute each)
//
// HEAD is extracted into test-output/page-weights/ (its cargo artifacts in
// target/page-weights, kept between runs) as bench/base.mjs extracts a
// base, and built there with its own scripts/build.sh (`NAMES=web`: the
// page's module with its names, whose name section is dropped before it
// is measured: the code is the shipped module's). A row whose edit no
// longer finds its anchor in the source says so instead of a figure.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { parse } from "../scripts/wasm-profile.mjs";
import { extract } from "./base.mjs";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const TREE = path.join(REPO, "test-output/page-weights");

// Each edit: [file, text found, text put in its place]. A piece's code is
// made unreachable with an unconditional `return` or a value in place of a
// call (not `if true`: inside an `async fn` the generator keeps the states
// after it); rustc's warnings about the code after it are expected.
// `call` polled once: its output as `ready` makes it (`x`), else `pending`.
const once = (call, pending, ready = "x") => `match crate::engine::once(${call}) { core::task::Poll::Ready(x) => ${ready}, core::task::Poll::Pending => ${pending} }`;
const PIECES = {
  options: {
    label: "reading and checking options (a policy's, a call's `retry`, every `checkOptions` schema)",
    edits: [
      ["src/host/api/options.rs", "    let reader: &Reader = glue.unchecked_ref();",
        "    return { let _ = (glue, js, per_call); Ok((base.clone(), hooks.clone())) };\n    let reader: &Reader = glue.unchecked_ref();"],
      ["src/host/api/read.rs", "    let Some((path, schema, per_call)) = named(name) else {",
        "    return { let _ = (name, options, reader); Ok(Array::new()) };\n    let Some((path, schema, per_call)) = named(name) else {"],
    ],
  },
  floor: {
    label: "`Retry-After` (seconds, every HTTP-date form) and the rate-limit headers",
    edits: [["src/policy/rate_limit.rs", "        if self.retry_after.is_none() && self.retry_after_ms.is_none() && !throttling(status) {",
      "        return { let _ = (status, now_ms); None };\n        if self.retry_after.is_none() && self.retry_after_ms.is_none() && !throttling(status) {"]],
  },
  admission: {
    label: "the admission: the offline wait, the concurrency queue, a rate's slots",
    edits: [
      ["src/engine.rs", "    let waiting = |op: &mut Op, until_ms: u64, why| {",
        "    return Ok((None, known.unwrap_or_else(|| clock.now_ms())));\n    let waiting = |op: &mut Op, until_ms: u64, why| {"],
    ],
  },
  snippet: {
    label: "a failed response's snippet and its redaction",
    edits: [["src/host/attempt/transport.rs", "        let length = body.buffered?;",
      "        return { let _ = body; None };\n        let length = body.buffered?;"]],
  },
  leased: {
    label: "a shared budget's leased client",
    edits: [["src/host/api/exports.rs", "        let fleet = hooks.shared.take().map(|exchange| Rc::new(Leased::new(&options, exchange, &glue)));",
      "        let _ = hooks.shared.take();\n        let fleet: Option<Rc<Leased>> = None;"]],
  },
  chunks: {
    label: "`\"auto\"`'s read of a chunked document",
    edits: [["src/host/attempt/transport.rs", "(false, Handling::BufferUpTo(inside), _) => match self.read_up_to(id, inside).await {",
      "(false, Handling::BufferUpTo(inside), _) => match { let _ = inside; Ok::<Result<u32, u64>, Failed<Held>>(Err(0)) } {"]],
  },
  replay: {
    label: "a request body's replay copy",
    edits: [["src/host/attempt/replay.rs", "    if !needed(prepared) {",
      "    return { let _ = prepared; false };\n    if !needed(prepared) {"]],
  },
};

// The futures' suspension: every `.await` on the operation's path (eleven)
// one poll with a no-op waker, a pending one taken as the timer's or a
// failure's branch, so the code of both stays.
const SUSPENSION = [
  ["src/engine.rs", "pub fn race<A: Future, B: Future>(a: A, b: B) -> Race<A, B> {",
    "pub fn once<F: Future>(f: F) -> Poll<F::Output> {\n    let mut f = core::pin::pin!(f);\n    f.as_mut().poll(&mut Context::from_waker(core::task::Waker::noop()))\n}\n\npub fn race<A: Future, B: Future>(a: A, b: B) -> Race<A, B> {"],
  ["src/engine.rs", "if clock.sleep(ms).await == Slept::Cancelled {", "if { let _ = ms; Slept::Elapsed } == Slept::Cancelled {"],
  ["src/engine.rs", "match admit(&mut op, clock, budget, attempt, deadline, known.take()).await {",
    `match ${once("admit(&mut op, clock, budget, attempt, deadline, known.take())", "Err((Reason::Cancelled, None))")} {`],
  ["src/engine.rs", "match race(transport.send(attempt), clock.sleep(timer_ms)).await {",
    `match ${once("race(transport.send(attempt), clock.sleep(timer_ms))", "Either::Right(Slept::Elapsed)")} {`],
  ["src/engine.rs", "if clock.until_online(remaining).await == Slept::Cancelled {", "if { let _ = remaining; Slept::Elapsed } == Slept::Cancelled {"],
  ["src/engine.rs", "match race(acquire, clock.sleep(remaining)).await {",
    `match ${once("acquire", "{ let _ = remaining; Either::Right(Slept::Elapsed) }", "Either::Left(x)")} {`],
  ["src/engine.rs", "if clock.sleep(until - now).await == Slept::Cancelled {", "if { let _ = until - now; Slept::Elapsed } == Slept::Cancelled {"],
  ["src/host/api/exports.rs", "match race(step(prepared.call), ctx.clock.sleep(options.limits.attempt_ms)).await {",
    `match ${once("race(step(prepared.call), ctx.clock.sleep(options.limits.attempt_ms))", "Either::Right(crate::engine::Slept::Elapsed)")} {`],
  ["src/host/attempt/transport.rs", "let facts = match step(id).await {", `let facts = match ${once("step(id)", "return Err(too_large())")} {`],
  ["src/host/attempt/transport.rs", "Ok(whole) => self.read_step(id).await.and_then(", `Ok(whole) => (${once("self.read_step(id)", "Err(too_large())")}).and_then(`],
  ["src/host/attempt/transport.rs", "match self.read_up_to(id, inside).await {", `match ${once("self.read_up_to(id, inside)", "Err(too_large())")} {`],
  ["src/host/attempt/transport.rs", "let raced = race(self.read_step(id), fired).await;", `let raced = ${once("race(self.read_step(id), fired)", "return Err(too_large())")};`],
];

const ROWS = [
  { label: "nothing (HEAD)", edits: [] },
  ...Object.values(PIECES),
  { label: "every suspension of the operation, the logic kept (the bound of an explicit state machine)", edits: SUSPENSION },
  { label: "**all but the suspension, at once**", edits: Object.values(PIECES).flatMap((p) => p.edits) },
];

const sh = (cmd, opts = {}) => execFileSync("bash", ["-c", cmd], { cwd: REPO, encoding: "utf8", ...opts });

/** `edits` applied to HEAD's src/ in TREE; the anchors not found. */
function edit(edits) {
  rmSync(path.join(TREE, "src"), { recursive: true, force: true });
  sh(`git archive --format=tar HEAD src | tar -x -m -C "${TREE}"`);
  const missing = [];
  for (const [file, from, to] of edits) {
    const full = path.join(TREE, file);
    const text = readFileSync(full, "utf8");
    if (!text.includes(from)) missing.push(`${file}: ${from.trim().slice(0, 60)}`);
    else writeFileSync(full, text.replace(from, to));
  }
  return missing;
}

/** A module's bytes without its custom "name" section (the names build's
 * only difference from the shipped module), by scripts/wasm-profile.mjs's
 * reading of its sections. */
function withoutNames(wasm) {
  const kept = parse(wasm).sections.filter((s) => s.label !== 'custom "name"');
  return Buffer.concat([wasm.subarray(0, 8), ...kept.map((s) => wasm.subarray(s.start, s.end))]);
}

function build() {
  sh("NAMES=web bash scripts/build.sh", { cwd: TREE, stdio: ["ignore", "ignore", "pipe"] });
  const wasm = withoutNames(readFileSync(path.join(TREE, "target/names/saferetry_web_bg.wasm")));
  return { raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length };
}

const kb = (n) => (n / 1000).toFixed(1);
const commit = sh("git rev-parse --short HEAD").trim();
extract("HEAD", TREE, path.join(REPO, "target/page-weights"));
console.log(`\n## What each guarantee weighs in a page's wasm (saferetry_web, HEAD ${commit}, ${new Date().toISOString().slice(0, 16)} UTC)\n`);
console.log("| taken out of the page's wasm | raw bytes | gzip -9 | − HEAD |");
console.log("|---|---:|---:|---:|");
let head;
for (const row of ROWS) {
  const missing = edit(row.edits);
  if (missing.length) {
    console.log(`| ${row.label} | — | — | its edit's anchor is gone: ${missing.join("; ")} |`);
    continue;
  }
  const size = build();
  head ??= size;
  const delta = size === head ? "" : `${size.gzip > head.gzip ? "+" : "−"}${kb(Math.abs(head.gzip - size.gzip))} KB`;
  console.log(`| ${row.label} | ${size.raw.toLocaleString("en").replace(/,/g, " ")} | ${size.gzip.toLocaleString("en").replace(/,/g, " ")} | ${delta} |`);
}
const shipped = readFileSync(path.join(REPO, "js/src/saferetry_web_bg.wasm"));
if (head && shipped.length !== head.raw) {
  console.log(`\n(this checkout's js/src/saferetry_web_bg.wasm is ${shipped.length} bytes, not HEAD's ${head.raw}: \`make build\` after the last commit?)`);
}
