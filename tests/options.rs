//! Every options object's schema (`policy::schema`) and the one reader, as
//! tables: for each object and each key, values it takes and values it
//! refuses — a misspelled key, a wrong type, one out of range — with the
//! path and class the caller's error is made from; defaults; what a read
//! policy makes of `Options`, a poll's schedule and an outbox's config.
//! The values are JavaScript-like (`fuzz/src/checks/plain.rs`, as
//! js/src/options.js reads them: a throwing getter is absent, a Proxy's
//! key listing may throw).
#![cfg(not(target_arch = "wasm32"))]

#[path = "../fuzz/src/checks/plain.rs"]
mod plain;

use plain::{num, obj, Plain, PlainSource, Trapped};
use saferetry::policy::body::ResponseBody;
use saferetry::policy::budget::quota::QuotaConfig;
use saferetry::policy::budget::rate::RateConfig;
use saferetry::policy::options::{Options, POLICY};
use saferetry::policy::outbox::{
    Config, Durable, DEFAULT_TTL_MS, MAX_TTL_MS, OUTBOX, OUTBOX_OBJECT_SEND, OUTBOX_STORE, SEND, SYNC_OUTBOX,
};
use saferetry::policy::poll::{PollPhase, PollSchedule, POLL};
use saferetry::policy::schema::{
    self, code, describe, Class, Failure, Kind, Schema, Unit, Value, DURABLE_BUDGET, INSTRUMENT,
    REDIS_BUDGET, RETRY_NOW, TAB_BUDGET,
};
use saferetry::policy::throttle::{ThrottleConfig, WINDOW_MS};

const T: Class = Class::Type;
const R: Class = Class::Range;
const U: Class = Class::Unknown;

fn s(text: &str) -> Plain {
    Plain::Str(String::from(text))
}

fn arr(items: &[Plain]) -> Plain {
    Plain::Arr(items.to_vec())
}

fn read(
    schema: &'static Schema,
    root: &str,
    per_call: bool,
    v: &Plain,
) -> Result<Vec<Value<Plain>>, Failure<Trapped>> {
    schema::read(&PlainSource, schema, v, root, per_call)
}

/// One row: an object given to a schema, and what the reader does: `None`
/// takes it, else the refusal's class and path (for an unknown key, the
/// object's path and the key).
type Row = (Plain, Option<(Class, &'static str)>);

fn check(schema: &'static Schema, root: &str, per_call: bool, rows: &[Row]) {
    for (input, want) in rows {
        let got = read(schema, root, per_call, input);
        match (want, got) {
            (None, Ok(values)) => assert_eq!(values.len(), schema.fields.len()),
            (Some((class, path)), Err(Failure::Refused(r))) => {
                let at =
                    if r.class == Class::Unknown { schema::join(&r.path, &r.key) } else { r.path.clone() };
                assert_eq!((r.class, at.as_str()), (*class, *path), "{root}: {input:?}");
            }
            (want, got) => panic!("{root} per_call={per_call}: {input:?}: expected {want:?}, got {got:?}"),
        }
    }
}

fn one(key: &str, v: Plain) -> Plain {
    obj(&[(key, v)])
}

#[test]
fn a_policys_options_take_each_key_in_range_and_refuse_a_misspelling_a_wrong_type_and_a_value_out_of_range() {
    let fun = Plain::Fun;
    let rows: Vec<Row> = vec![
        (Plain::Undefined, None),
        (Plain::Null, None),
        (obj(&[]), None),
        (num(3.0), Some((T, ""))),
        (one("maxAttemps", num(3.0)), Some((U, "maxAttemps"))),
        (one("maxAttempts", num(1.0)), None),
        (one("maxAttempts", num(100.0)), None),
        (one("maxAttempts", num(0.0)), Some((R, "maxAttempts"))),
        (one("maxAttempts", num(101.0)), Some((R, "maxAttempts"))),
        (one("maxAttempts", num(2.5)), Some((R, "maxAttempts"))),
        (one("maxAttempts", num(f64::NAN)), Some((R, "maxAttempts"))),
        (one("maxAttempts", s("3")), Some((T, "maxAttempts"))),
        (one("maxAttempts", Plain::Null), Some((T, "maxAttempts"))),
        (one("totalMs", num(2_147_483_647.0)), None),
        (one("totalMs", num(0.0)), Some((R, "totalMs"))),
        (one("totalMs", num(2_147_483_648.0)), Some((R, "totalMs"))),
        (one("totalMs", Plain::Bool(true)), Some((T, "totalMs"))),
        (one("attemptMs", num(1.0)), None),
        (one("attemptMs", num(-1.0)), Some((R, "attemptMs"))),
        (one("baseMs", num(0.0)), None),
        (one("baseMs", num(-1.0)), Some((R, "baseMs"))),
        (one("capMs", num(0.0)), None),
        (one("capMs", s("x")), Some((T, "capMs"))),
        (one("throttleBaseMs", num(1000.0)), None),
        (one("throttleBaseMs", num(1.5)), Some((R, "throttleBaseMs"))),
        (one("maxBodyBytes", num(4_294_967_296.0)), None),
        (one("maxBodyBytes", num(4_294_967_297.0)), Some((R, "maxBodyBytes"))),
        (one("responseBody", s("stream")), None),
        (one("responseBody", s("streamed")), Some((T, "responseBody"))),
        (one("responseBody", num(1.0)), Some((T, "responseBody"))),
        (one("retryOn", obj(&[])), None),
        (one("retryOn", num(1.0)), Some((T, "retryOn"))),
        (one("retryOn", one("status", arr(&[num(503.0)]))), Some((U, "retryOn.status"))),
        (one("retryOn", one("statuses", arr(&[]))), None),
        (one("retryOn", one("statuses", arr(&[num(100.0), num(599.0)]))), None),
        (one("retryOn", one("statuses", arr(&[num(99.0)]))), Some((R, "retryOn.statuses[]"))),
        (one("retryOn", one("statuses", arr(&[num(600.0)]))), Some((R, "retryOn.statuses[]"))),
        (one("retryOn", one("statuses", arr(&[Plain::Bool(true)]))), Some((T, "retryOn.statuses[]"))),
        (one("retryOn", one("statuses", arr(&vec![num(503.0); 1001]))), Some((R, "retryOn.statuses"))),
        (one("retryOn", one("statuses", s("503"))), Some((T, "retryOn.statuses"))),
        (one("retryOn", one("statuses", Plain::BadArr(vec![num(503.0)]))), Some((T, "retryOn.statuses"))),
        (one("retryOn", one("timeouts", num(1.0))), Some((T, "retryOn.timeouts"))),
        (one("retryOn", one("networkErrors", Plain::Bool(false))), None),
        (one("retryOn", one("networkErrors", Plain::Null)), Some((T, "retryOn.networkErrors"))),
        (one("retryAfterSpread", Plain::Bool(false)), None),
        (one("retryAfterSpread", s("yes")), Some((T, "retryAfterSpread"))),
        (one("quota", Plain::Bool(true)), None),
        (one("quota", Plain::Bool(false)), None),
        (one("quota", one("capacity", num(0.0))), None),
        (one("quota", num(1.0)), Some((T, "quota"))),
        (one("quota", one("capacity", num(1e6 + 1.0))), Some((R, "quota.capacity"))),
        (one("quota", one("retryCost", num(-1.0))), Some((R, "quota.retryCost"))),
        (one("quota", one("timeoutCost", s("1"))), Some((T, "quota.timeoutCost"))),
        (one("quota", one("successRefund", num(0.5))), Some((R, "quota.successRefund"))),
        (one("quota", one("capcity", num(1.0))), Some((U, "quota.capcity"))),
        (one("throttle", Plain::Bool(true)), None),
        (one("throttle", Plain::Bool(false)), None),
        (one("throttle", obj(&[])), None),
        (one("throttle", obj(&[("k", num(1.0)), ("windowMs", num(10.0))])), None),
        (one("throttle", obj(&[("k", num(1.5)), ("windowMs", num(600_000.0))])), None),
        (one("throttle", one("k", num(100.0))), None),
        (one("throttle", one("k", num(0.99))), Some((R, "throttle.k"))),
        (one("throttle", one("k", num(100.5))), Some((R, "throttle.k"))),
        (one("throttle", one("k", num(f64::NAN))), Some((R, "throttle.k"))),
        (one("throttle", one("k", num(f64::INFINITY))), Some((R, "throttle.k"))),
        (one("throttle", one("k", s("2"))), Some((T, "throttle.k"))),
        (one("throttle", one("windowMs", num(9.0))), Some((R, "throttle.windowMs"))),
        (one("throttle", one("windowMs", num(600_001.0))), Some((R, "throttle.windowMs"))),
        (one("throttle", one("windowMs", num(1500.5))), Some((R, "throttle.windowMs"))),
        (one("throttle", one("window", num(1500.0))), Some((U, "throttle.window"))),
        (one("throttle", num(2.0)), Some((T, "throttle"))),
        (one("throttle", s("off")), Some((T, "throttle"))),
        (one("concurrency", num(10_000.0)), None),
        (one("concurrency", num(0.0)), Some((R, "concurrency"))),
        (one("concurrency", num(10_001.0)), Some((R, "concurrency"))),
        (one("rate", one("requests", num(1.0))), None),
        (one("rate", obj(&[])), Some((T, "rate.requests"))),
        (one("rate", num(5.0)), Some((T, "rate"))),
        (one("rate", obj(&[("requests", num(1.0)), ("perMs", num(0.0))])), Some((R, "rate.perMs"))),
        (one("rate", obj(&[("requests", num(1.0)), ("burst", num(0.0))])), Some((R, "rate.burst"))),
        (one("rate", obj(&[("requests", num(1.0)), ("brust", num(2.0))])), Some((U, "rate.brust"))),
        (one("random", fun.clone()), None),
        (one("random", num(42.0)), Some((T, "random"))),
        (one("onRetry", s("log")), Some((T, "onRetry"))),
        (one("fetch", obj(&[])), Some((T, "fetch"))),
        (one("idempotencyKey", Plain::Bool(true)), None),
        (one("idempotencyKey", s("key-1")), Some((T, "idempotencyKey"))),
        (one("notBefore", num(1.0)), Some((T, "notBefore"))),
        (one("shared", one("exchange", fun.clone())), None),
        // An interface: a carrier's own members are its business.
        (one("shared", obj(&[("exchange", fun.clone()), ("state", num(1.0))])), None),
        (one("shared", obj(&[])), Some((T, "shared.exchange"))),
        (one("shared", fun.clone()), Some((T, "shared"))),
        (
            one("shared", obj(&[("exchange", fun.clone()), ("fleetSize", num(0.0))])),
            Some((R, "shared.fleetSize")),
        ),
        (
            one("shared", obj(&[("exchange", fun.clone()), ("fleetSize", num(10_001.0))])),
            Some((R, "shared.fleetSize")),
        ),
        (one("shared", obj(&[("exchange", fun.clone()), ("scope", num(1.0))])), Some((T, "shared.scope"))),
        (one("shared", obj(&[("exchange", fun.clone()), ("attach", num(1.0))])), Some((T, "shared.attach"))),
        // A getter that throws reads as absent.
        (one("maxAttempts", Plain::Throws), None),
    ];
    check(&POLICY, "", false, &rows);
    // A Proxy whose key listing throws fails with what it threw.
    assert!(matches!(read(&POLICY, "", false, &Plain::Trap), Err(Failure::Thrown(Trapped))));
    assert!(matches!(read(&POLICY, "", false, &one("retryOn", Plain::Trap)), Err(Failure::Thrown(Trapped))));
}

#[test]
fn a_calls_retry_options_are_the_policys_but_for_what_only_a_policy_or_only_a_call_sets() {
    let long = "k".repeat(255);
    let rows: Vec<Row> = vec![
        (one("maxAttempts", num(2.0)), None),
        (one("maxAttempts", num(0.0)), Some((R, "retry.maxAttempts"))),
        (one("maxAtempts", num(2.0)), Some((U, "retry.maxAtempts"))),
        (one("quota", Plain::Bool(false)), None),
        (one("quota", Plain::Bool(true)), Some((T, "retry.quota"))),
        (one("quota", one("capacity", num(1.0))), Some((T, "retry.quota"))),
        (one("throttle", Plain::Bool(false)), None),
        (one("throttle", Plain::Bool(true)), Some((T, "retry.throttle"))),
        (one("throttle", one("k", num(2.0))), Some((T, "retry.throttle"))),
        (one("concurrency", num(1.0)), Some((T, "retry.concurrency"))),
        (one("rate", one("requests", num(1.0))), Some((T, "retry.rate"))),
        (one("shared", one("exchange", Plain::Fun)), Some((T, "retry.shared"))),
        (one("idempotencyKey", s("key-1")), None),
        (one("idempotencyKey", s(&long)), None),
        (one("idempotencyKey", Plain::Bool(true)), None),
        (one("idempotencyKey", Plain::Bool(false)), None),
        (one("idempotencyKey", s("")), Some((R, "retry.idempotencyKey"))),
        (one("idempotencyKey", s(&format!("{long}k"))), Some((R, "retry.idempotencyKey"))),
        (one("idempotencyKey", s("ключ-1")), Some((R, "retry.idempotencyKey"))),
        (one("idempotencyKey", s("has space")), Some((R, "retry.idempotencyKey"))),
        (one("idempotencyKey", num(1.0)), Some((T, "retry.idempotencyKey"))),
        (one("notBefore", num(0.0)), None),
        (one("notBefore", num(1.5)), None),
        (one("notBefore", num(9_007_199_254_740_991.0)), None),
        (one("notBefore", num(-1.0)), Some((R, "retry.notBefore"))),
        (one("notBefore", num(9_007_199_254_740_992.0)), Some((R, "retry.notBefore"))),
        (one("notBefore", s("1")), Some((T, "retry.notBefore"))),
    ];
    check(&POLICY, "retry", true, &rows);
    // `notBefore` is taken down to its whole ms.
    let values = read(&POLICY, "retry", true, &one("notBefore", num(1.5))).unwrap();
    let at = POLICY.keys().position(|k| k == "notBefore").unwrap();
    assert_eq!(values[at], Value::Int(1));
}

#[test]
fn a_poll_spec_its_phases_and_its_hooks() {
    // A spec with its status request: `fields` and one more.
    let spec = |fields: &[(&str, Plain)]| {
        let mut all = fields.to_vec();
        all.push(("status", s("https://x/")));
        obj(&all)
    };
    let phase = |every: f64| one("everyMs", num(every));
    let rows: Vec<Row> = vec![
        (spec(&[]), None),
        (num(42.0), Some((T, "poll"))),
        (spec(&[("phases", arr(&[phase(1.0)]))]), None),
        (spec(&[("phases", arr(&[obj(&[("everyMs", num(1.0)), ("forMs", num(5.0))])]))]), None),
        (spec(&[("phases", arr(&[]))]), Some((R, "poll.phases"))),
        (spec(&[("phases", arr(&vec![phase(1.0); 101]))]), Some((R, "poll.phases"))),
        (spec(&[("phases", arr(&[obj(&[])]))]), Some((T, "poll.phases[].everyMs"))),
        (spec(&[("phases", arr(&[phase(0.0)]))]), Some((R, "poll.phases[].everyMs"))),
        (
            spec(&[("phases", arr(&[obj(&[("everyMs", num(1.0)), ("forMs", s("5"))])]))]),
            Some((T, "poll.phases[].forMs")),
        ),
        (
            spec(&[("phases", arr(&[obj(&[("everyMs", num(1.0)), ("every", num(5.0))])]))]),
            Some((U, "poll.phases[].every")),
        ),
        (spec(&[("phases", Plain::BadArr(vec![phase(100.0)]))]), Some((T, "poll.phases"))),
        (spec(&[("budgetMs", num(2_147_483_647.0))]), None),
        (spec(&[("budgetMs", num(0.0))]), Some((R, "poll.budgetMs"))),
        (spec(&[("budgetMS", num(10.0))]), Some((U, "poll.budgetMS"))),
        // The hooks: a status is required (a getter that throws reads as
        // absent), whatever it is but null; a verdict is a function.
        (obj(&[]), Some((T, "poll.status"))),
        (one("status", Plain::Throws), Some((T, "poll.status"))),
        (one("status", Plain::Null), Some((T, "poll.status"))),
        (one("status", Plain::Fun), None),
        (spec(&[("verdict", Plain::Fun)]), None),
        (spec(&[("verdict", s("done"))]), Some((T, "poll.verdict"))),
        // A bad phase is refused before a missing status, as the fields come.
        (one("phases", arr(&[])), Some((R, "poll.phases"))),
    ];
    check(&POLL, "poll", false, &rows);
    let values = read(&POLL, "poll", false, &spec(&[("verdict", Plain::Fun)])).unwrap();
    assert_eq!(values[2..], [Value::Raw(s("https://x/")), Value::Raw(Plain::Fun)], "the hooks as given");
    // The schedule from the numbers js/src/core.js lines up from what was
    // read (`[budgetMs, (everyMs, forMs)…]`, NaN where absent): each phase
    // ends `forMs` after the one before.
    let want =
        [PollPhase { every_ms: 100, until_ms: Some(1000) }, PollPhase { every_ms: 500, until_ms: None }];
    let schedule = PollSchedule { phases: want.to_vec(), budget_ms: 9000 };
    assert_eq!(PollSchedule::of(&[9000.0, 100.0, 1000.0, 500.0, f64::NAN]), Some(schedule));
    assert_eq!(PollSchedule::of(&[f64::NAN]), Some(PollSchedule::default()));
}

#[test]
fn an_outboxs_options_and_their_defaults() {
    let fun = Plain::Fun;
    let store = obj(&[("list", fun.clone()), ("put", fun.clone()), ("delete", fun.clone())]);
    let rows: Vec<Row> = vec![
        (Plain::Undefined, None),
        (one("store", store.clone()), None),
        (one("store", obj(&[("list", fun.clone()), ("put", fun.clone())])), Some((T, "outbox.store.delete"))),
        (one("store", s("memory")), Some((T, "outbox.store"))),
        (one("ttl", num(1.0)), None),
        (one("ttl", num(MAX_TTL_MS as f64)), None),
        (one("ttl", num(0.0)), Some((R, "outbox.ttl"))),
        (one("ttl", num(1.5)), Some((R, "outbox.ttl"))),
        (one("ttl", num((MAX_TTL_MS + 1) as f64)), Some((R, "outbox.ttl"))),
        (one("ttl", s("1d")), Some((T, "outbox.ttl"))),
        (one("tll", num(1.0)), Some((U, "outbox.tll"))),
        (one("credentials", Plain::Bool(true)), None),
        (one("credentials", num(1.0)), Some((T, "outbox.credentials"))),
        (one("durable", s("before-send")), None),
        (one("durable", s("always")), Some((T, "outbox.durable"))),
    ];
    check(&OUTBOX, "outbox", false, &rows);
    // Where the runtime has no default store, one is required.
    check(
        &OUTBOX_STORE,
        "outbox",
        false,
        &[(obj(&[]), Some((T, "outbox.store"))), (one("store", store), None)],
    );
    // A send's own `durable`, beside the rest of a call's `init`.
    let send: Vec<Row> = vec![
        (obj(&[("durable", s("before-send")), ("method", s("PUT"))]), None),
        (one("durable", s("now")), Some((T, "send(init).durable"))),
    ];
    check(&SEND, "send(init)", false, &send);
    let config = |v: Plain| {
        let read = read(&OUTBOX, "outbox", false, &v).unwrap();
        Config::of(read[1].int().unwrap(), read[2].flag().unwrap(), read[3].word().unwrap())
    };
    assert_eq!(config(Plain::Undefined), Config::default());
    assert_eq!(Config::default().ttl_ms, DEFAULT_TTL_MS);
    let set = obj(&[("ttl", num(5000.0)), ("credentials", Plain::Bool(true)), ("durable", s("before-send"))]);
    assert_eq!(config(set), Config { ttl_ms: 5000, keep_credentials: true, durable: Durable::BeforeSend });
}

#[test]
fn the_options_of_the_entries_without_rust_state_and_of_redis_budget() {
    let fun = Plain::Fun;
    let tables: Vec<(&'static Schema, &str, Vec<Row>)> = vec![
        (
            &TAB_BUDGET,
            "tabBudget",
            vec![
                (
                    obj(&[("heartbeatMs", num(1.0)), ("staleMs", num(600_000.0)), ("fleetSize", num(2.0))]),
                    None,
                ),
                (one("heartbeatMs", num(0.0)), Some((R, "tabBudget.heartbeatMs"))),
                (one("staleMs", num(600_001.0)), Some((R, "tabBudget.staleMs"))),
                (one("staleMs", s("1s")), Some((T, "tabBudget.staleMs"))),
                (one("fleetSize", num(0.0)), Some((R, "tabBudget.fleetSize"))),
                (one("heartbeat", num(1.0)), Some((U, "tabBudget.heartbeat"))),
            ],
        ),
        (
            &DURABLE_BUDGET,
            "durableBudget",
            vec![
                (one("fleetSize", num(10_000.0)), None),
                (one("fleetSize", num(0.0)), Some((R, "durableBudget.fleetSize"))),
                (one("fleetSize", s("4")), Some((T, "durableBudget.fleetSize"))),
                (one("fleetsize", num(4.0)), Some((U, "durableBudget.fleetsize"))),
            ],
        ),
        (
            &REDIS_BUDGET,
            "redisBudget",
            vec![
                (obj(&[("fleetSize", num(4.0)), ("key", s("k")), ("commandMs", num(60_000.0))]), None),
                (one("fleetSize", num(0.0)), Some((R, "redisBudget.fleetSize"))),
                (one("fleetsize", num(4.0)), Some((U, "redisBudget.fleetsize"))),
                (one("key", s("")), Some((R, "redisBudget.key"))),
                (one("key", num(1.0)), Some((T, "redisBudget.key"))),
                (one("commandMs", num(0.0)), Some((R, "redisBudget.commandMs"))),
                (one("commandMs", num(60_001.0)), Some((R, "redisBudget.commandMs"))),
            ],
        ),
        (
            &RETRY_NOW,
            "retryNow",
            vec![
                (one("force", Plain::Bool(true)), None),
                (one("force", s("yes")), Some((T, "retryNow.force"))),
                (one("forse", Plain::Bool(true)), Some((U, "retryNow.forse"))),
            ],
        ),
        (
            &INSTRUMENT,
            "instrument",
            vec![
                (
                    obj(&[
                        ("tracerProvider", one("getTracer", fun.clone())),
                        ("meterProvider", one("getMeter", fun.clone())),
                    ]),
                    None,
                ),
                (one("tracerProvider", num(1.0)), Some((T, "instrument.tracerProvider"))),
                (one("tracerProvider", obj(&[])), Some((T, "instrument.tracerProvider.getTracer"))),
                (
                    one("meterProvider", one("getTracer", fun.clone())),
                    Some((T, "instrument.meterProvider.getMeter")),
                ),
                (one("attemptSpans", Plain::Bool(false)), None),
                (one("attemptSpans", s("auto")), None),
                (one("attemptSpans", s("always")), Some((T, "instrument.attemptSpans"))),
                (one("name", s("api")), None),
                (one("name", num(1.0)), Some((T, "instrument.name"))),
                (one("attemptspans", Plain::Bool(true)), Some((U, "instrument.attemptspans"))),
            ],
        ),
        (
            &SYNC_OUTBOX,
            "syncOutbox",
            vec![
                (
                    obj(&[
                        ("policy", one("maxAttempts", num(2.0))),
                        ("ttl", num(1000.0)),
                        ("credentials", Plain::Bool(true)),
                    ]),
                    None,
                ),
                (one("policy", one("maxAttempts", num(0.0))), Some((R, "syncOutbox.policy.maxAttempts"))),
                (one("policy", one("maxAttemps", num(2.0))), Some((U, "syncOutbox.policy.maxAttemps"))),
                (one("ttl", num(0.0)), Some((R, "syncOutbox.ttl"))),
                (one("credentials", num(1.0)), Some((T, "syncOutbox.credentials"))),
                (one("durable", s("before-send")), Some((U, "syncOutbox.durable"))),
            ],
        ),
        (
            &OUTBOX_OBJECT_SEND,
            "OutboxObject.send",
            vec![
                (
                    obj(&[
                        ("url", s("https://x/")),
                        ("method", s("POST")),
                        ("headers", obj(&[])),
                        ("body", Plain::Null),
                        ("idempotencyKey", s("k")),
                        ("durable", s("before-send")),
                    ]),
                    None,
                ),
                (one("url", s("https://x/")), None),
                (obj(&[]), Some((T, "OutboxObject.send.url"))),
                (obj(&[("url", s("https://x/")), ("idempotencyKey", Plain::Bool(true))]), None),
                (
                    obj(&[("url", s("https://x/")), ("idempotencyKey", s(""))]),
                    Some((R, "OutboxObject.send.idempotencyKey")),
                ),
                (
                    obj(&[("url", s("https://x/")), ("method", num(1.0))]),
                    Some((T, "OutboxObject.send.method")),
                ),
                (
                    obj(&[("url", s("https://x/")), ("durable", s("now"))]),
                    Some((T, "OutboxObject.send.durable")),
                ),
                (
                    obj(&[("url", s("https://x/")), ("idempotencykey", s("k"))]),
                    Some((U, "OutboxObject.send.idempotencykey")),
                ),
            ],
        ),
    ];
    for (schema, root, rows) in &tables {
        check(schema, root, false, rows);
    }
    // The defaults are answered in place of what was left out.
    let defaults =
        |schema: &'static Schema, root: &str| read(schema, root, false, &Plain::Undefined).unwrap();
    assert_eq!(defaults(&TAB_BUDGET, "tabBudget"), vec![Value::Int(1000), Value::Int(2500), Value::Absent]);
    assert_eq!(defaults(&RETRY_NOW, "retryNow"), vec![Value::Bool(false)]);
    assert_eq!(defaults(&REDIS_BUDGET, "redisBudget"), vec![Value::Absent, Value::Absent, Value::Int(250)]);
    assert_eq!(defaults(&INSTRUMENT, "instrument")[2], Value::Word("auto"));
    assert!(matches!(
        read(&OUTBOX_OBJECT_SEND, "OutboxObject.send", false, &Plain::Undefined),
        Err(Failure::Refused(_))
    ));
}

#[test]
fn what_a_policys_options_read_as_becomes_its_options_and_nothing_else_changes() {
    let policy = obj(&[
        ("maxAttempts", num(7.0)),
        ("capMs", num(300.0)),
        ("responseBody", s("stream")),
        ("retryOn", obj(&[("statuses", arr(&[num(503.0)])), ("timeouts", Plain::Bool(false))])),
        ("quota", one("capacity", num(20.0))),
        ("rate", one("requests", num(5.0))),
        ("concurrency", num(2.0)),
        ("throttle", one("k", num(1.5))),
        ("shared", obj(&[("exchange", Plain::Fun), ("fleetSize", num(8.0))])),
    ]);
    let mut o = Options::default();
    o.apply(&read(&POLICY, "", false, &policy).unwrap());
    let d = Options::default();
    assert_eq!(o.limits.max_attempts, 7);
    assert_eq!(o.limits.total_ms, d.limits.total_ms);
    assert_eq!(o.backoff.cap_ms, 300);
    assert_eq!(o.backoff.base_ms, d.backoff.base_ms);
    assert_eq!(o.response_body, ResponseBody::Stream);
    assert!(
        o.retry_on.status(503)
            && !o.retry_on.status(429)
            && !o.retry_on.timeouts
            && o.retry_on.network_errors
    );
    assert_eq!(o.quota, Some(QuotaConfig { capacity: 20, ..QuotaConfig::default() }));
    assert_eq!(o.rate, Some(RateConfig { requests: 5, per_ms: 1000, burst: 1 }));
    assert_eq!((o.concurrency, o.fleet_size), (Some(2), 8));
    assert_eq!(o.throttle, Some(ThrottleConfig { k: 1.5, window_ms: WINDOW_MS }));
    assert_eq!(d.throttle, Some(ThrottleConfig { k: 2.0, window_ms: 1500 }), "on by default");
    let mut windowed = Options::default();
    windowed.apply(&read(&POLICY, "", false, &one("throttle", one("windowMs", num(120_000.0)))).unwrap());
    assert_eq!(windowed.throttle, Some(ThrottleConfig { k: 2.0, window_ms: 120_000 }));
    windowed.apply(&read(&POLICY, "", false, &one("throttle", Plain::Bool(false))).unwrap());
    assert_eq!(windowed.throttle, None);
    // A call's options over the policy's: what it sets, nothing else.
    let mut call = o.clone();
    let per_call = obj(&[
        ("quota", Plain::Bool(false)),
        ("throttle", Plain::Bool(false)),
        ("retryOn", one("networkErrors", Plain::Bool(false))),
    ]);
    call.apply(&read(&POLICY, "retry", true, &per_call).unwrap());
    assert_eq!((call.quota, call.throttle), (None, None));
    assert!(call.retry_on.status(503) && !call.retry_on.network_errors && !call.retry_on.timeouts);
    assert_eq!((call.limits, call.rate), (o.limits, o.rate));
    // `quota: true` keeps a configured quota; an empty read changes nothing.
    let mut again = o.clone();
    again.apply(&read(&POLICY, "", false, &one("quota", Plain::Bool(true))).unwrap());
    assert_eq!(again, o);
}

#[test]
fn a_kind_is_described_as_nodes_of_a_code_two_bounds_and_the_words_of_its_lists_and_objects() {
    let quota = POLICY.keys().zip(POLICY.fields).find(|(k, _)| *k == "quota").unwrap().1.kind;
    let Kind::Scoped(on_policy, _) = quota else { panic!("quota is scoped") };
    let mut out = String::new();
    describe(on_policy, &mut out);
    let want = format!(
        "{} 0 0 ;{} 0 0 ;{} 0 0 capacity,retryCost,timeoutCost,successRefund,;",
        code::OR,
        code::BOOL,
        code::OBJECT
    );
    assert_eq!(out, want);
    let mut out = String::new();
    describe(&Kind::List(0, 1000, &Kind::Int(Unit::Ms, 1, (1 << 53) - 1)), &mut out);
    assert_eq!(out, format!("{} 0 1000 ;{} 1 9007199254740991 milliseconds,;", code::LIST, code::INT));
    let mut out = String::new();
    describe(&Kind::Num(1, 100), &mut out);
    assert_eq!(out, format!("{} 1 100 ;", code::NUM));
}

#[test]
fn every_schema_lists_as_many_keys_as_fields() {
    let all: [(&str, &Schema); 12] = [
        ("", &POLICY),
        ("poll", &POLL),
        ("outbox", &OUTBOX),
        ("outbox", &OUTBOX_STORE),
        ("send(init)", &SEND),
        ("redisBudget", &REDIS_BUDGET),
        ("tabBudget", &TAB_BUDGET),
        ("durableBudget", &DURABLE_BUDGET),
        ("retryNow", &RETRY_NOW),
        ("instrument", &INSTRUMENT),
        ("syncOutbox", &SYNC_OUTBOX),
        ("OutboxObject.send", &OUTBOX_OBJECT_SEND),
    ];
    for (name, schema) in all {
        assert_eq!(schema.keys().count(), schema.fields.len(), "{name}");
    }
}
