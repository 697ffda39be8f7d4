//! The JSON writer that hands reports, states and stats to JavaScript
//! (`saferetry::json`): a table of exact texts, and the same values as
//! serde_json reads them for the types the package writes.

use saferetry::json::to_string;
use saferetry::policy::budget::Stats;
use saferetry::policy::classify::{Stage, WaitKind};
use saferetry::policy::reason::Reason;
use saferetry::policy::report::{AttemptRecord, ErrorInfo, Report};
use saferetry::policy::state::{Phase, WaitWhy};
use serde::Serialize;
use serde_json::Value;

#[derive(Serialize)]
enum Shape {
    Unit,
    New(u8),
    Tuple(u8, bool),
    Struct { a: u8 },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fields {
    some_name: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u32>,
    list: Vec<i64>,
    unit: (),
}

#[test]
fn values_are_written_as_the_json_text_a_host_parses_back() {
    let table: [(String, &str); 22] = [
        (to_string(&true), "true"),
        (to_string(&0u64), "0"),
        (to_string(&u64::MAX), "18446744073709551615"),
        (to_string(&-42i32), "-42"),
        (to_string(&i64::MIN), "-9223372036854775808"),
        (to_string(&1500.0f64), "1500"),
        (to_string(&-0.25f64), "-0.25"),
        (to_string(&0.1f64), "0.1"),
        (to_string(&f64::NAN), "null"),
        (to_string(&f64::INFINITY), "null"),
        // 2^64 as `f64`: written as u64::MAX, which JavaScript reads as 2^64.
        (to_string(&(u64::MAX as f64)), "18446744073709551615"),
        (to_string("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\u0001é\""),
        (to_string(&'x'), "\"x\""),
        (to_string(&None::<u8>), "null"),
        (to_string(&Some(3u8)), "3"),
        (to_string(&Shape::Unit), "\"Unit\""),
        (to_string(&Shape::New(1)), "{\"New\":1}"),
        (to_string(&Shape::Tuple(1, false)), "{\"Tuple\":[1,false]}"),
        (to_string(&Shape::Struct { a: 2 }), "{\"Struct\":{\"a\":2}}"),
        (to_string(&[1u8, 2, 3]), "[1,2,3]"),
        (to_string(&Vec::<u8>::new()), "[]"),
        (
            to_string(&Fields { some_name: None, skipped: None, list: vec![-1, 2], unit: () }),
            "{\"someName\":null,\"list\":[-1,2],\"unit\":null}",
        ),
    ];
    for (got, want) in table {
        assert_eq!(got, want);
    }
}

#[test]
fn a_map_with_a_key_that_is_not_a_string_is_written_as_null() {
    let mut map = std::collections::BTreeMap::new();
    map.insert(1u8, 2u8);
    assert_eq!(to_string(&map), "null");
    let mut named = std::collections::BTreeMap::new();
    named.insert("k", 2u8);
    assert_eq!(to_string(&named), "{\"k\":2}");
}

/// Numbers compared as numbers: serde_json writes `1500.0` for an `f64`
/// where the writer writes `1500`; JavaScript reads both as 1500.
fn numbers_as_f64(v: Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64()),
        Value::Array(a) => Value::Array(a.into_iter().map(numbers_as_f64).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, numbers_as_f64(v))).collect()),
        other => other,
    }
}

fn same_as_serde_json<T: Serialize>(value: &T) {
    let ours: Value = serde_json::from_str(&to_string(value)).expect("the writer's text is JSON");
    let theirs = serde_json::to_value(value).expect("serde_json writes it");
    assert_eq!(numbers_as_f64(ours), numbers_as_f64(theirs));
}

#[test]
fn reports_states_and_stats_read_back_as_serde_json_writes_them() {
    let mut report = Report::new();
    report.reason = Reason::AttemptsExhausted;
    report.retry_at = Some(1_700_000_000_000);
    report.elapsed_ms = 1234;
    report.snippet = Some(String::from("busy \"now\""));
    report.streamed = Some(false);
    report.attempts.push(AttemptRecord {
        start_ms: 0,
        duration_ms: 12,
        status: Some(503),
        planned_wait_ms: Some(40),
        wait_kind: Some(WaitKind::RetryAfter(1000)),
        retry_after_ms: Some(1000),
        ..AttemptRecord::default()
    });
    report.attempts.push(AttemptRecord {
        start_ms: 52,
        duration_ms: 3,
        error: Some(ErrorInfo {
            stage: Stage::MaybeDelivered,
            code: String::from("ECONNRESET"),
            name: String::from("TypeError"),
        }),
        poll: true,
        ..AttemptRecord::default()
    });
    same_as_serde_json(&report);
    for phase in [
        Phase::Idle,
        Phase::Requesting { attempt: 2, max: 3 },
        Phase::Waiting { attempt: 2, until_ms: 1_700_000_000_040, wait_ms: 40, why: WaitWhy::Backoff },
        Phase::TryLater { retry_at: None, reason: Reason::WaitExceedsBudget },
        Phase::TryLater { retry_at: Some(1_700_000_001_000), reason: Reason::AttemptsExhausted },
        Phase::Failed { reason: Reason::HttpStop, redirect: false },
        Phase::Succeeded,
        Phase::Cancelled,
    ] {
        same_as_serde_json(&phase);
    }
    let stats = Stats::default();
    stats.ended(3, Reason::AttemptsExhausted);
    stats.ended(0, Reason::Throttled);
    same_as_serde_json(&stats);
}
