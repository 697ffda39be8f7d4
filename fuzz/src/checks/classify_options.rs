//! Classification and option checks: an unsafe request is retried only
//! after a `not-sent` failure, nothing off the allowlist is retried, and an
//! option is accepted exactly when it is an integer inside its range.

use saferetry::policy::classify::RetryOn;
use saferetry::policy::classify::{
    classify, normalize_method, Attempted, Failure, Safety, Stage, Verdict, WaitKind,
};
use saferetry::policy::number::integer_in;
use saferetry::policy::options::{Options, POLICY};
use saferetry::policy::outbox::{OUTBOX, OUTBOX_STORE, SEND};
use saferetry::policy::poll::POLL;
use saferetry::policy::reason::Reason;
use saferetry::policy::retry_after::RetryAfter;
use saferetry::policy::schema::{self, Class, Failure as Unread, Kind, Schema, REDIS_BUDGET};

use super::plain::{num, obj, Plain, PlainSource};

/// An integer option of a policy: `parent` (a nested object's key, or
/// none) and `key`, and its kind.
#[derive(Clone, Debug)]
pub struct Numeric {
    pub parent: Option<&'static str>,
    pub key: &'static str,
    pub kind: Kind,
}

impl Numeric {
    fn path(&self) -> String {
        self.parent.map_or(String::new(), |p| format!("{p}.")) + self.key
    }

    /// A policy's options setting it to `value`, and what it needs beside
    /// (a rate's `requests`, a shared budget's `exchange`).
    fn options(&self, value: f64) -> Plain {
        let mut inner = vec![(self.key, num(value))];
        match self.parent {
            None => return obj(&inner),
            Some("rate") if self.key != "requests" => inner.push(("requests", num(1.0))),
            Some("shared") => inner.push(("exchange", Plain::Fun)),
            Some(_) => {}
        }
        obj(&[(self.parent.unwrap_or_default(), obj(&inner))])
    }
}

/// A policy's side of a kind.
fn on_policy(kind: Kind) -> Kind {
    match kind {
        Kind::Scoped(policy, _) => *policy,
        Kind::Or(_, b) => *b,
        other => other,
    }
}

/// Every integer option of a policy, nested ones too, from its schema.
pub fn fields() -> Vec<Numeric> {
    let mut out = Vec::new();
    for (key, field) in POLICY.keys().zip(POLICY.fields) {
        match on_policy(on_policy(field.kind)) {
            kind @ Kind::Int(..) => out.push(Numeric { parent: None, key, kind }),
            Kind::Object(schema) => {
                for (inner, f) in schema.keys().zip(schema.fields) {
                    if let Kind::Int(..) = f.kind {
                        out.push(Numeric { parent: Some(key), key: inner, kind: f.kind });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

pub fn check_classify(attempted: Attempted, safety: Safety, statuses: &[u16], timeouts: bool, network: bool) {
    let retry_on = RetryOn::new(statuses, timeouts, network);
    for s in statuses {
        assert_eq!(retry_on.status(*s), (100..=599).contains(s), "status {s}");
    }
    let verdict = classify(attempted, safety, &retry_on);
    let retried = matches!(verdict, Verdict::Retry(_));
    if safety == Safety::Unsafe && retried {
        assert_eq!(attempted, Attempted::Failed(Failure::Network(Stage::NotSent)), "unsafe retry");
    }
    match attempted {
        Attempted::Responded { status, retry_after, .. } => {
            let ok = (200..=299).contains(&status);
            assert_eq!(verdict == Verdict::Succeeded, ok, "{status}: {verdict:?}");
            if retried {
                assert!(retry_on.status(status) && safety.repeatable(), "{status} off the allowlist");
            }
            match (verdict, retry_after) {
                (Verdict::Retry(WaitKind::RetryAfter(floor)), Some(ra)) => {
                    assert_eq!(Some(floor), ra.floor_ms(), "the server's floor is passed on")
                }
                (Verdict::Retry(WaitKind::RetryAfter(_)), None) => panic!("a floor nobody sent"),
                (Verdict::Retry(_), Some(ra)) => panic!("{ra:?} ignored"),
                (_, Some(RetryAfter::Unsupported))
                    if !ok && retry_on.status(status) && safety.repeatable() =>
                {
                    assert_eq!(verdict, Verdict::Stop(Reason::UnsupportedRetryAfter))
                }
                _ => {}
            }
        }
        Attempted::Failed(failure) => {
            assert_ne!(verdict, Verdict::Succeeded);
            if retried {
                assert_eq!(verdict, Verdict::Retry(WaitKind::Backoff));
                let allowed = match failure {
                    Failure::Network(Stage::NotSent) => network,
                    Failure::Network(Stage::MaybeDelivered) => network && safety.repeatable(),
                    Failure::AttemptTimeout => timeouts && safety.repeatable(),
                    Failure::Refused(_) | Failure::Deadline | Failure::Cancelled | Failure::BodyTooLarge => {
                        false
                    }
                };
                assert!(allowed, "{failure:?} retried");
            }
            if let Failure::Refused(_) = failure {
                assert_eq!(verdict, Verdict::Stop(Reason::Refused), "a refusal repeats: never retried");
            }
            if verdict == Verdict::Stop(Reason::MaybeDelivered) {
                assert_eq!((failure, safety), (Failure::Network(Stage::MaybeDelivered), Safety::Unsafe));
            }
        }
    }
}

/// A method as `fetch` sends it, and its safety.
pub fn check_method(method: &str, has_key: bool) {
    let sent = normalize_method(method);
    assert!(sent.eq_ignore_ascii_case(method));
    let upper = method.to_ascii_uppercase();
    let normalised = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"].contains(&upper.as_str());
    assert_eq!(sent, if normalised { upper.as_str() } else { method });
    let idempotent = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(&sent);
    let expected = match (idempotent, has_key) {
        (true, _) => Safety::Idempotent,
        (false, true) => Safety::Keyed,
        (false, false) => Safety::Unsafe,
    };
    assert_eq!(Safety::of(sent, has_key), expected, "{method:?}");
}

/// `integer_in` against plain arithmetic, and a policy's options setting
/// one integer option through the reader (`schema::read`) and
/// `Options::apply`: an accepted value lands in its field, a refused one is
/// a `RangeError` naming it.
pub fn check_option(value: f64, min: u64, max: u64, field: &Numeric) {
    let integer = value.is_finite() && value.trunc() == value && value >= 0.0 && value < 2f64.powi(64);
    let expected = if integer {
        let exact = value as u64; // in range and integral: exact
        (min <= exact && exact <= max).then_some(exact)
    } else {
        None
    };
    assert_eq!(integer_in(value, min, max), expected, "{value} in {min}..={max}");

    let Kind::Int(_, lo, hi) = field.kind else { panic!("{field:?} is not an integer") };
    let accepted = integer_in(value, u64::from(lo), hi);
    let mut options = Options::default();
    match schema::read(&PlainSource, &POLICY, &field.options(value), "", false) {
        Ok(values) => {
            options.apply(&values);
            assert_eq!(Some(read(&options, field)), accepted, "{field:?} = {value}");
        }
        Err(Unread::Refused(r)) => {
            assert_eq!(accepted, None, "{field:?} = {value} refused: {r:?}");
            assert_eq!((r.class, r.path, r.kind), (Class::Range, field.path(), field.kind));
        }
        Err(Unread::Thrown(t)) => panic!("{t:?}"),
    }
}

fn read(o: &Options, field: &Numeric) -> u64 {
    let rate =
        o.rate.unwrap_or(saferetry::policy::budget::rate::RateConfig { requests: 0, per_ms: 0, burst: 0 });
    let quota = o.quota.unwrap_or_default();
    match field.path().as_str() {
        "maxAttempts" => u64::from(o.limits.max_attempts),
        "totalMs" => o.limits.total_ms,
        "attemptMs" => o.limits.attempt_ms,
        "baseMs" => o.backoff.base_ms,
        "capMs" => o.backoff.cap_ms,
        "throttleBaseMs" => o.backoff.throttle_base_ms,
        "maxBodyBytes" => o.max_body_bytes,
        "quota.capacity" => u64::from(quota.capacity),
        "quota.retryCost" => u64::from(quota.retry_cost),
        "quota.timeoutCost" => u64::from(quota.timeout_cost),
        "quota.successRefund" => u64::from(quota.success_refund),
        "concurrency" => o.concurrency.map_or(0, u64::from),
        "rate.requests" => u64::from(rate.requests),
        "rate.perMs" => rate.per_ms,
        "rate.burst" => u64::from(rate.burst),
        "shared.fleetSize" => u64::from(o.fleet_size),
        "throttle.windowMs" => o.throttle.unwrap_or_default().window_ms,
        other => panic!("an integer option this check does not know: {other}"),
    }
}

/// Every options object a caller hands the package, by the path its
/// errors start with (the policy's and a call's are one schema).
pub fn roots() -> Vec<(&'static str, &'static Schema, bool)> {
    let mut out = vec![
        ("", &POLICY, false),
        ("retry", &POLICY, true),
        ("poll", &POLL, false),
        ("outbox", &OUTBOX, false),
        ("outbox", &OUTBOX_STORE, false),
        ("send(init)", &SEND, false),
        ("redisBudget", &REDIS_BUDGET, false),
    ];
    out.extend([
        ("tabBudget", &schema::TAB_BUDGET, false),
        ("durableBudget", &schema::DURABLE_BUDGET, false),
        ("retryNow", &schema::RETRY_NOW, false),
        ("instrument", &schema::INSTRUMENT, false),
        ("syncOutbox", &saferetry::policy::outbox::SYNC_OUTBOX, false),
        ("OutboxObject.send", &saferetry::policy::outbox::OUTBOX_OBJECT_SEND, false),
    ]);
    out
}

/// Every key of every options object and some that are none, for inputs.
pub fn keys() -> Vec<&'static str> {
    fn walk(schema: &'static Schema, out: &mut Vec<&'static str>) {
        for (key, f) in schema.keys().zip(schema.fields) {
            out.push(key);
            let mut kinds = vec![f.kind];
            while let Some(kind) = kinds.pop() {
                match kind {
                    Kind::Object(inner) if !out.contains(&inner.names) => {
                        out.push(inner.names); // a marker: each schema walked once
                        walk(inner, out);
                    }
                    Kind::List(_, _, k) => kinds.push(*k),
                    Kind::Or(a, b) | Kind::Scoped(a, b) => kinds.extend([*a, *b]),
                    _ => {}
                }
            }
        }
    }
    let mut out = Vec::new();
    for (_, schema, _) in roots() {
        walk(schema, &mut out);
    }
    out.retain(|k| !k.contains(','));
    out.extend(["maxAttemps", "fleetsize", "status", "x", ""]);
    out
}

/// What a value of `kind` may be: each side of an `Or`, the side of a
/// `Scoped` that applies.
fn resolve(kind: Kind, per_call: bool) -> Vec<Kind> {
    match kind {
        Kind::Scoped(p, c) => resolve(if per_call { *c } else { *p }, per_call),
        Kind::Or(a, b) => [resolve(*a, per_call), resolve(*b, per_call)].concat(),
        other => vec![other],
    }
}

/// The kinds `path` (below the root `root`) may name in `schema` (none
/// when it is no path of it): each segment a key of an object the
/// previous one names, `[]` an item of a list.
fn kinds_at(schema: &'static Schema, root: &str, path: &str, per_call: bool) -> Vec<Kind> {
    let Some(rest) = (if root.is_empty() {
        Some(path)
    } else {
        path.strip_prefix(root).and_then(|r| r.strip_prefix('.'))
    }) else {
        return Vec::new();
    };
    let mut kinds = vec![Kind::Object(schema)];
    for segment in rest.split('.') {
        let (key, item) = match segment.strip_suffix("[]") {
            Some(key) => (key, true),
            None => (segment, false),
        };
        let mut next = Vec::new();
        for kind in kinds {
            if let Kind::Object(s) = kind {
                if let Some((_, f)) = s.keys().zip(s.fields).find(|(k, _)| *k == key) {
                    next.extend(resolve(f.kind, per_call));
                }
            }
        }
        if item {
            next = next
                .into_iter()
                .filter_map(|k| if let Kind::List(_, _, i) = k { Some(*i) } else { None })
                .flat_map(|k| resolve(k, per_call))
                .collect();
        }
        kinds = next;
    }
    kinds
}

/// Whether `v` holds a Proxy whose keys throw (the reader's only way to
/// fail with what the caller threw).
fn trapped(v: &Plain) -> bool {
    match v {
        Plain::Trap => true,
        Plain::Obj(fields) => fields.iter().any(|(_, v)| trapped(v)),
        Plain::Arr(items) | Plain::BadArr(items) => items.iter().any(trapped),
        _ => false,
    }
}

/// Any value read as every options object, on a policy and per call: the
/// reader answers one value per field, or refuses with a path that names
/// a field the schema has (an unknown key: the object it is not a key of)
/// and that field's kind, or fails with what a Proxy threw; it never
/// panics, and what it read applies to `Options` without one.
pub fn check_read(value: &Plain) {
    for (root, schema, per_call) in roots() {
        match schema::read(&PlainSource, schema, value, root, per_call) {
            Ok(values) => {
                assert_eq!(values.len(), schema.fields.len(), "{root}");
                if std::ptr::eq(schema, &POLICY) {
                    Options::default().apply(&values);
                }
            }
            Err(Unread::Refused(r)) if r.class == Class::Unknown => {
                let objects = if r.path == root {
                    vec![Kind::Object(schema)]
                } else {
                    kinds_at(schema, root, &r.path, per_call)
                };
                let known = |s: &Schema| s.keys().any(|k| k == r.key);
                let unknown = objects.iter().any(|k| matches!(k, Kind::Object(s) if !known(s)));
                assert!(unknown, "{root}: {r:?} in {value:?}");
            }
            Err(Unread::Refused(r)) => {
                let fields = if r.path == root {
                    vec![Kind::Object(schema)]
                } else {
                    kinds_at(schema, root, &r.path, per_call)
                };
                assert!(!fields.is_empty(), "{root}: a refusal naming no field: {r:?} for {value:?}");
                let mut described = String::new();
                schema::describe(&r.kind, &mut described);
                let nodes: Vec<&str> = described.split(';').collect();
                assert!(nodes.len() >= 2 && nodes.last() == Some(&""), "{r:?}: {described}");
                assert!(
                    nodes[..nodes.len() - 1].iter().all(|n| n.splitn(4, ' ').count() == 4),
                    "{r:?}: {described}"
                );
            }
            Err(Unread::Thrown(_)) => assert!(trapped(value), "{root}: thrown without a trap: {value:?}"),
        }
    }
}
