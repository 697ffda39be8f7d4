//! An attempt's facts go from js/src/attempts.js to the machine in one of
//! two forms: packed as text (`Facts::parse`), or, for the usual response,
//! as one number (`Facts::coded`), which spares the success path the
//! packing, the copy into the module's memory and the parse. Both must say
//! the same. Each row below is a response (its headers in node's own
//! `Headers`), the headers the step reads, and the length of a body read
//! whole in the same step; attempts.js answers it (`factsOf`, then
//! `withRead`), and what the machine reads of that answer must equal what
//! it reads of the facts packed in full, in `Facts::parse`'s order. The
//! table also says which rows are answered as a number, so the short form
//! is known to be taken where it should be, and only there.

use std::io::Write;
use std::process::{Command, Stdio};

use saferetry::packed::Facts;

// FETCH's bits that say which headers the step reads (src/host/operation/
// io.rs, js/src/attempts.js): `redirect: "manual"` (the `Location`), the
// body's length and encoding, its type; and whether it has a body.
const MANUAL: u32 = 4;
const LENGTH: u32 = 16;
const TYPE: u32 = 32;
const HAS_BODY: u32 = 128;
// What a Node call reads in each body mode: "stream", "buffer", "auto".
const STREAM: u32 = MANUAL | HAS_BODY;
const BUFFER: u32 = MANUAL | LENGTH | HAS_BODY;
const AUTO: u32 = MANUAL | LENGTH | TYPE | HAS_BODY;
// Deno's, Bun's and a browser's "auto": whether it has a body is not asked
// (the machine knows: `policy::runtime::body_known`), and is packed as
// present.
const AUTO_UNASKED: u32 = MANUAL | LENGTH | TYPE;

/// A response (`status` as JSON gives it: a number, or anything a fake
/// `fetch` may answer), its type, whether it has a body, its headers; the
/// bits of the step; the length of the body read whole, if it was; whether
/// the answer is a number.
type Row =
    (&'static str, &'static str, bool, &'static [(&'static str, &'static str)], u32, Option<u64>, bool);

const JSON_11: &[(&str, &str)] = &[("content-type", "application/json"), ("content-length", "11")];

const TABLE: &[Row] = &[
    // The usual success, in every body mode: one number.
    ("200", "default", true, &[], STREAM, None, true),
    ("200", "basic", true, JSON_11, STREAM, None, true),
    ("200", "basic", true, JSON_11, BUFFER, None, true),
    ("200", "basic", true, JSON_11, AUTO, None, true),
    ("200", "basic", true, JSON_11, AUTO, Some(11), true),
    ("200", "default", true, &[("content-length", "5")], LENGTH, Some(5), true),
    ("204", "basic", false, &[], AUTO, None, true),
    ("204", "basic", false, &[], AUTO_UNASKED, None, true),
    ("200", "basic", true, JSON_11, AUTO_UNASKED, Some(11), true),
    ("503", "basic", true, &[("content-length", "0")], AUTO, None, true),
    ("1023", "default", true, &[], STREAM, None, true),
    // Headers the step does not read do not matter.
    ("302", "basic", true, &[("location", "/there")], LENGTH, None, true),
    ("200", "basic", true, &[("content-type", "text/plain")], BUFFER, None, true),
    ("200", "basic", true, &[("content-encoding", "gzip")], STREAM, None, true),
    // Lengths: as many digits as 12, leading zeros, spaces the host trims.
    ("200", "basic", true, &[("content-length", "064")], BUFFER, Some(64), true),
    ("200", "basic", true, &[("content-length", " 11 ")], BUFFER, None, true),
    ("200", "basic", true, &[("content-length", "999999999999")], BUFFER, None, true),
    ("200", "basic", true, &[("content-length", "4294967296")], BUFFER, Some(4294967296), true),
    // Anything else is packed: a header the machine reads there,
    ("503", "basic", true, &[("retry-after", "5")], STREAM, None, false),
    ("429", "basic", true, &[("retry-after-ms", "250")], STREAM, None, false),
    ("302", "basic", true, &[("location", "/there")], STREAM, None, false),
    ("200", "basic", true, &[("content-encoding", "gzip"), ("content-length", "11")], BUFFER, None, false),
    ("200", "basic", true, &[("content-type", "application/json; charset=utf-8")], AUTO, None, false),
    ("200", "basic", true, &[("content-type", "text/html")], AUTO, None, false),
    // a length that is not 1 to 12 digits,
    ("200", "basic", true, &[("content-length", "1234567890123")], BUFFER, None, false),
    ("200", "basic", true, &[("content-length", "1e3")], BUFFER, None, false),
    ("200", "basic", true, &[("content-length", "+5")], BUFFER, None, false),
    // a body read whole that is not as long as its length says,
    ("200", "basic", true, JSON_11, AUTO, Some(10), false),
    ("200", "default", true, &[("content-length", "5")], LENGTH, Some(7), false),
    // another type, a status that is not an integer below 1024.
    ("200", "cors", true, &[], STREAM, None, false),
    ("0", "opaque", false, &[], STREAM, None, false),
    ("0", "opaqueredirect", false, &[], STREAM, None, false),
    ("1024", "default", true, &[], STREAM, None, false),
    ("200.5", "default", true, &[], STREAM, None, false),
    ("\"200\"", "default", true, &[], STREAM, None, false),
    ("-1", "default", true, &[], STREAM, None, false),
];

/// For each row, attempts.js's answer (a number or packed text) and the
/// facts packed in full from the same `Headers` (`-` for a header the
/// step does not read, the location's place kept before a length read).
fn answers() -> Vec<(serde_json::Value, String)> {
    let rows: Vec<String> = TABLE
        .iter()
        .map(|&(status, kind, body, headers, bits, read, _)| {
            let headers: Vec<String> = headers.iter().map(|(k, v)| format!("[{k:?}, {v:?}]")).collect();
            let read = read.map_or("null".to_string(), |n| n.to_string());
            format!("{{ \"status\": {}, \"type\": {:?}, \"body\": {}, \"headers\": [{}], \"bits\": {}, \"read\": {read} }}", status, kind, body, headers.join(", "), bits)
        })
        .collect();
    let script = r#"
const { factsOf, withRead } = await import(process.argv[1] + "/js/src/attempts.js");
const { packed } = await import(process.argv[1] + "/js/src/packed.js");
let input = "";
for await (const d of process.stdin) input += d;
const out = JSON.parse(input).map((r) => {
  const headers = new Headers(r.headers);
  const response = { status: r.status, type: r.type, body: r.body ? {} : null, headers };
  let answer = factsOf(response, false, r.bits, { whole: undefined });
  if (r.read !== null) answer = withRead(answer, r.read, r.bits & 4);
  const read = (name, bit) => (bit ? headers.get(name) : null);
  let full = packed(r.status) + packed(r.type) + (r.body || !(r.bits & 128) ? "1:1" : "-");
  full += packed(read("content-length", r.bits & 16)) + packed(read("content-type", r.bits & 32)) + packed(read("content-encoding", r.bits & 16));
  full += packed(headers.get("retry-after")) + packed(headers.get("retry-after-ms"));
  if (r.bits & 4 || r.read !== null) full += packed(read("location", r.bits & 4));
  if (r.read !== null) full += packed(r.read);
  return [answer, full];
});
process.stdout.write(JSON.stringify(out));
"#;
    let mut node = Command::new("node")
        .args(["--input-type=module", "-e", script, env!("CARGO_MANIFEST_DIR")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    node.stdin.take().unwrap().write_all(format!("[{}]", rows.join(", ")).as_bytes()).unwrap();
    let out = node.wait_with_output().unwrap();
    assert!(out.status.success(), "node failed running factsOf");
    serde_json::from_slice(&out.stdout).expect("factsOf's answers")
}

#[test]
fn the_usual_response_s_facts_come_as_one_number_and_say_what_the_packed_facts_say() {
    let answers = answers();
    assert_eq!(answers.len(), TABLE.len());
    for (i, (&(status, kind, .., coded), (answer, full))) in TABLE.iter().zip(&answers).enumerate() {
        let facts = match answer {
            serde_json::Value::Number(n) => Facts::coded(n.as_f64().unwrap()),
            serde_json::Value::String(text) => Facts::parse(text),
            other => panic!("row {i}: answered {other}"),
        };
        assert_eq!(answer.is_number(), coded, "row {i} ({status} {kind}): answered {answer}");
        assert_eq!(
            facts,
            Facts::parse(full),
            "row {i} ({status} {kind}): answered {answer}, packed in full {full}"
        );
    }
}

#[test]
fn a_coded_answer_s_length_and_read_are_the_numbers_it_was_given() {
    // 11 bytes of JSON read whole with a 200: what `coded` reads, field by field.
    let code = 200.0 + 1024.0 + 2048.0 + 4096.0 + 12.0 * 8192.0;
    let f = Facts::coded(code);
    assert_eq!((f.status, f.has_body, f.content_length, f.read), (200, true, Some(11), Some(11)));
    assert_eq!(f.content_type.as_deref(), Some("application/json"));
    assert!(!f.cors && !f.opaque && !f.content_encoding && f.location.is_none());
    // Any number reads as some facts, never a trap: NaN and a negative as
    // 0 (none at all), a huge one as every bit set.
    assert_eq!(Facts::coded(f64::NAN), Facts::default());
    assert_eq!(Facts::coded(-1.0), Facts::default());
    let huge = Facts::coded(1e300);
    assert_eq!((huge.status, huge.has_body, huge.read), (1023, true, None));
}
