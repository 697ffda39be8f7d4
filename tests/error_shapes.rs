//! Every rejection the fidelity tier measured from the host's own `fetch`
//! (tests/fidelity/error-shapes.json: seven runtimes, with how many
//! requests the server received), through the refusal rule: a refusal is
//! called unsent (the report's `not-sent` stage) only where nothing reached
//! the server, and every measured refusal that sent nothing is called so,
//! except the few whose message names a redirect (the rule cannot tell those
//! from a redirect refused after it arrived, so it keeps `maybe-delivered`).

use saferetry::policy::runtime::{refused, ErrorShape, Refusal, Runtime};
use serde_json::Value;

const SHAPES: &str = include_str!("fidelity/error-shapes.json");

fn runtime(name: &str) -> Runtime {
    match name {
        "node" => Runtime::Node,
        "deno" => Runtime::Deno,
        "bun" => Runtime::Bun,
        "workerd" => Runtime::Workerd,
        "chromium" | "firefox" | "webkit" => Runtime::Browser,
        other => panic!("a runtime the rules do not know: {other}"),
    }
}

#[test]
fn a_measured_refusal_is_unsent_exactly_when_the_server_received_nothing() {
    let shapes: Value = serde_json::from_str(SHAPES).expect("error-shapes.json parses");
    let mut unsent = 0;
    let mut kept = Vec::new();
    for (name, cases) in shapes["runtimes"].as_object().expect("runtimes") {
        for case in cases.as_array().expect("cases").iter().filter(|c| c["rejects"] == true) {
            let text = |key: &str| case[key].as_str();
            let shape = ErrorShape {
                name: text("name").expect("name"),
                message: text("message"),
                has_cause: !case["causeName"].is_null(),
                code: text("code"),
                cause_code: text("causeCode"),
                cause_syscall: None,
                cause_message: text("causeMessage"),
            };
            let received = case["received"].as_u64().expect("received");
            let what = format!("{name}: {} ({:?})", text("case").unwrap_or_default(), shape.message);
            match refused(runtime(name), &shape) {
                Some(Refusal::Unsent) => {
                    assert_eq!(received, 0, "called unsent, yet the server received it: {what}");
                    unsent += 1;
                }
                Some(Refusal::Other) if received == 0 => {
                    let message = shape.message.unwrap_or_default();
                    assert!(message.contains("redirect"), "sent nothing, yet not called unsent: {what}");
                    kept.push(what);
                }
                _ => {}
            }
        }
    }
    // Not vacuous: most refusals the hosts make are of requests never sent.
    assert!(unsent >= 120, "{unsent} measured refusals called unsent");
    assert!(kept.len() <= 2, "refusals that sent nothing kept maybe-delivered: {kept:#?}");
}
