//! The folded read's rule is written once in JS (js/src/attempts.js
//! `readsWhole`, applied as the machine's FETCH step asks: src/host/
//! operation/io.rs `WHOLE`, with the bound and JSON flag of
//! `policy::body::folded`), and the decision it stands in for is Rust's
//! (`policy::body::handling`, then src/host/attempt/transport.rs `attempt`
//! and `read_body`). A response JS reads whole in the FETCH step must be
//! one Rust would have read at once from its `Content-Length` anyway: never
//! one it streams, reads while streaming (an encoded or cross-origin body)
//! or reads chunk by chunk. Each row below is a response, what JS decides
//! (the function itself, run under node) and what `handling` decides.

use std::io::Write;
use std::process::{Command, Stdio};

use saferetry::policy::body::{folded, handling, Handling, ResponseBody, AUTO_BUFFER_BYTES};

const ATTEMPTS: &str = include_str!("../js/src/attempts.js");

/// `readsWhole`'s source as attempts.js has it.
fn reads_whole_source() -> &'static str {
    let at = ATTEMPTS.find("function readsWhole(").expect("attempts.js has no readsWhole");
    let len = ATTEMPTS[at..].find("\n}\n").expect("readsWhole's end") + 2;
    &ATTEMPTS[at..at + len]
}

/// A response as the host gives it.
#[derive(Clone, Copy)]
struct Response {
    status: u16,
    /// `Response.type`.
    kind: &'static str,
    body: bool,
    content_length: Option<&'static str>,
    content_type: Option<&'static str>,
    content_encoding: Option<&'static str>,
}

/// What `readsWhole` answers for each `(response, bound, json)`, run under
/// node with the headers read from the host's own `Headers` (which trim
/// values, as `fetch`'s do), as `factsOf` reads them.
fn js_folds(rows: &[(Response, u64, bool)]) -> Vec<bool> {
    let input: Vec<serde_json::Value> = rows
        .iter()
        .map(|(r, bound, json)| {
            let headers: Vec<(&str, &str)> = [("content-length", r.content_length), ("content-type", r.content_type), ("content-encoding", r.content_encoding)]
                .into_iter()
                .filter_map(|(name, value)| Some((name, value?)))
                .collect();
            serde_json::json!({ "status": r.status, "type": r.kind, "body": r.body, "headers": headers, "bound": bound, "json": json })
        })
        .collect();
    let script = format!(
        "{}\nlet input = '';\nprocess.stdin.on('data', (d) => (input += d));\nprocess.stdin.on('end', () => {{\n  const rows = JSON.parse(input);\n  const out = rows.map((r) => {{\n    const h = new Headers(r.headers);\n    const [length, kind, encoding] = ['content-length', 'content-type', 'content-encoding'].map((name) => h.get(name));\n    return readsWhole(r.status, r.type, r.body ? {{}} : null, length, kind, encoding, r.bound, r.json);\n  }});\n  process.stdout.write(JSON.stringify(out));\n}});\n",
        reads_whole_source()
    );
    let mut node = Command::new("node")
        .args(["--input-type=module", "-e", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    node.stdin.take().unwrap().write_all(serde_json::to_string(&input).unwrap().as_bytes()).unwrap();
    let out = node.wait_with_output().unwrap();
    assert!(out.status.success(), "node failed running readsWhole");
    serde_json::from_slice(&out.stdout).expect("readsWhole's answers")
}

/// Statuses whose responses never have a body (transport.rs `null_body`).
fn null_body(status: u16) -> bool {
    matches!(status, 101 | 103 | 204 | 205 | 304)
}

/// Whether Rust reads `r`'s body whole at once from its `Content-Length`
/// under `mode` (transport.rs `attempt` and `read_body`): a readable body
/// `handling` buffers, declared, neither encoded nor cross-origin (a
/// declared length over `max` refused at once too).
fn rust_at_once(r: &Response, mode: ResponseBody) -> bool {
    let declared = r.content_length.and_then(|v| v.trim().parse::<u64>().ok());
    let opaque = matches!(r.kind, "opaque" | "opaqueredirect");
    r.body
        && !opaque
        && !null_body(r.status)
        && rust_handling(r, mode) == Handling::Buffer
        && declared.is_some()
        && r.content_encoding.is_none()
        && r.kind != "cors"
}

fn rust_handling(r: &Response, mode: ResponseBody) -> Handling {
    let declared = r.content_length.and_then(|v| v.trim().parse::<u64>().ok());
    handling(mode, r.content_type, declared)
}

/// Rust's `handling`, in short: B buffer, U read chunk by chunk, S stream.
fn short(h: Handling) -> char {
    match h {
        Handling::Buffer => 'B',
        Handling::BufferUpTo(_) => 'U',
        Handling::Stream => 'S',
    }
}

const fn res(
    status: u16,
    kind: &'static str,
    body: bool,
    cl: Option<&'static str>,
    ct: Option<&'static str>,
    ce: Option<&'static str>,
) -> Response {
    Response { status, kind, body, content_length: cl, content_type: ct, content_encoding: ce }
}

const JSON: Option<&str> = Some("application/json");
const JSON_UTF8: Option<&str> = Some("application/json; charset=utf-8");
const MIB: &str = "1048576";
const MIB_AND_ONE: &str = "1048577";

/// `(response, under auto: JS folds, handling; under buffer: JS folds,
/// handling)`, `maxBodyBytes` 16 MiB.
const TABLE: &[(Response, bool, char, bool, char)] = &[
    (res(200, "basic", true, Some("11"), JSON, None), true, 'B', true, 'B'),
    (res(200, "default", true, Some("11"), JSON, None), true, 'B', true, 'B'),
    (res(200, "basic", true, Some("11"), JSON_UTF8, None), true, 'B', true, 'B'),
    (res(200, "basic", true, Some(" 11 "), JSON, None), true, 'B', true, 'B'),
    (res(206, "basic", true, Some("11"), JSON, None), true, 'B', true, 'B'),
    (res(299, "basic", true, Some("1"), JSON, None), true, 'B', true, 'B'),
    (res(200, "basic", true, Some(MIB), JSON, None), true, 'B', true, 'B'),
    // Larger than auto buffers: streamed by auto, read whole by buffer.
    (res(200, "basic", true, Some(MIB_AND_ONE), JSON, None), false, 'S', true, 'B'),
    // Documents auto buffers but JS leaves to the machine (not JSON).
    (res(200, "basic", true, Some("11"), Some("text/plain"), None), false, 'B', true, 'B'),
    (res(200, "basic", true, Some("11"), None, None), false, 'B', true, 'B'),
    (res(200, "basic", true, Some("11"), Some("application/problem+json"), None), false, 'B', true, 'B'),
    (res(200, "basic", true, Some("11"), Some("APPLICATION/JSON"), None), false, 'B', true, 'B'),
    (res(200, "basic", true, Some("11"), Some("application/jsonx"), None), false, 'S', true, 'B'),
    // Not documents: auto streams them.
    (res(200, "basic", true, Some("11"), Some("text/event-stream"), None), false, 'S', true, 'B'),
    (res(200, "basic", true, Some("11"), Some("application/octet-stream"), None), false, 'S', true, 'B'),
    // Encoded or cross-origin: Rust reads them while streaming, JS never.
    (res(200, "basic", true, Some("11"), JSON, Some("gzip")), false, 'B', false, 'B'),
    (res(200, "basic", true, Some("11"), JSON, Some("identity")), false, 'B', false, 'B'),
    (res(200, "cors", true, Some("11"), JSON, None), false, 'B', false, 'B'),
    // No readable body.
    (res(200, "opaque", false, None, None, None), false, 'U', false, 'B'),
    (res(0, "opaqueredirect", false, None, None, None), false, 'U', false, 'B'),
    (res(204, "basic", false, None, JSON, None), false, 'U', false, 'B'),
    (res(205, "basic", false, Some("0"), JSON, None), false, 'S', false, 'B'),
    (res(200, "basic", true, Some("0"), JSON, None), false, 'S', false, 'B'),
    // No length JS reads as one: chunked, or a value that is not digits.
    (res(200, "basic", true, None, JSON, None), false, 'U', false, 'B'),
    (res(200, "basic", true, Some("abc"), JSON, None), false, 'U', false, 'B'),
    (res(200, "basic", true, Some("11, 11"), JSON, None), false, 'U', false, 'B'),
    (res(200, "basic", true, Some("+11"), JSON, None), false, 'B', false, 'B'),
    (res(200, "basic", true, Some("-1"), JSON, None), false, 'U', false, 'B'),
    (res(200, "basic", true, Some("1.5"), JSON, None), false, 'U', false, 'B'),
    // Not a 2xx: the machine sees its facts first.
    (res(503, "basic", true, Some("11"), JSON, None), false, 'B', false, 'B'),
    (res(404, "basic", true, Some("11"), Some("text/html"), None), false, 'B', false, 'B'),
    (res(301, "basic", true, Some("11"), JSON, None), false, 'B', false, 'B'),
];

#[test]
fn every_response_js_reads_whole_in_the_fetch_step_is_one_rust_reads_at_once_from_its_content_length() {
    let max = 16 << 20;
    let modes = [ResponseBody::Auto, ResponseBody::Buffer];
    let rows: Vec<(Response, u64, bool)> = TABLE
        .iter()
        .flat_map(|row| modes.map(|mode| (row.0, folded(mode, max).unwrap())))
        .map(|(r, (bound, json))| (r, bound, json))
        .collect();
    let js = js_folds(&rows);
    assert_eq!(js.len(), rows.len());
    for (i, (r, auto_folds, auto_handling, buffer_folds, buffer_handling)) in TABLE.iter().enumerate() {
        let line = (r.status, r.kind, r.content_length, r.content_type, r.content_encoding);
        for (j, (mode, folds, handles)) in
            [(modes[0], auto_folds, auto_handling), (modes[1], buffer_folds, buffer_handling)]
                .into_iter()
                .enumerate()
        {
            let js_folds = js[i * 2 + j];
            assert!(
                !js_folds || rust_at_once(r, mode),
                "{mode:?} {line:?}: JS reads whole what Rust would not read at once"
            );
            assert_eq!(js_folds, *folds, "{mode:?} {line:?}: readsWhole");
            assert_eq!(short(rust_handling(r, mode)), *handles, "{mode:?} {line:?}: handling");
        }
    }
}

#[test]
fn the_fold_s_bound_is_what_rust_reads_at_once_and_stream_folds_nothing() {
    // auto: a JSON document up to 1 MiB (less under a smaller maxBodyBytes);
    // buffer: anything up to maxBodyBytes.
    let under = |bytes: &'static str, max: u64| {
        let r = res(200, "basic", true, Some(bytes), JSON, None);
        let rows: Vec<_> = [ResponseBody::Auto, ResponseBody::Buffer]
            .map(|mode| (r, folded(mode, max).unwrap()))
            .into_iter()
            .map(|(r, (b, j))| (r, b, j))
            .collect();
        js_folds(&rows)
    };
    assert_eq!(under("100", 100), [true, true]);
    assert_eq!(under("101", 100), [false, false]);
    assert_eq!(under(MIB, 16 << 20), [true, true]);
    assert_eq!(under(MIB_AND_ONE, 16 << 20), [false, true]);
    assert_eq!(folded(ResponseBody::Auto, u64::MAX), Some((AUTO_BUFFER_BYTES, true)));
    assert_eq!(folded(ResponseBody::Stream, 16 << 20), None);
    // A declared length over maxBodyBytes is refused at once by Rust, never
    // read by JS.
    let r = res(200, "basic", true, Some("101"), JSON, None);
    assert!(rust_at_once(&r, ResponseBody::Buffer));
}
