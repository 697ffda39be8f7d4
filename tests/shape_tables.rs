//! js/src/shape.js names the codes src/host/shared/convert.rs writes (an
//! enum's place in its declaration) from its tables: each table lists the
//! names and sentences the policy's types give, in that order.

use saferetry::policy::budget::Mode;
use saferetry::policy::classify::Stage;
use saferetry::policy::rate_limit::FloorHeader;
use saferetry::policy::reason::Reason;
use saferetry::policy::state::{message, phase_message, Phase, WaitWhy};

const SHAPE: &str = include_str!("../js/src/shape.js");

/// The words of `const NAME = words("…")` in shape.js.
fn words(name: &str) -> Vec<&'static str> {
    let start = format!("const {name} = words(\"");
    let at = SHAPE.find(&start).unwrap_or_else(|| panic!("shape.js has no {name}")) + start.len();
    SHAPE[at..].split('"').next().unwrap().split(' ').collect()
}

/// The sentences of shape.js's `MESSAGES`.
fn messages() -> Vec<&'static str> {
    let at = SHAPE.find("const MESSAGES = [").unwrap();
    let list = SHAPE[at..].split("];").next().unwrap();
    list.lines()
        .filter_map(|l| l.trim().strip_prefix('"'))
        .map(|l| l.trim_end_matches(',').trim_end_matches('"'))
        .collect()
}

const REASONS: [Reason; 19] = [
    Reason::Succeeded,
    Reason::HttpStop,
    Reason::AttemptsExhausted,
    Reason::WaitExceedsBudget,
    Reason::UnsupportedRetryAfter,
    Reason::AttemptTimeout,
    Reason::Deadline,
    Reason::Cancelled,
    Reason::MaybeDelivered,
    Reason::NetworkError,
    Reason::RetryQuotaExhausted,
    Reason::QueueExceedsBudget,
    Reason::BodyNotReplayable,
    Reason::BodyTooLarge,
    Reason::InvalidRandom,
    Reason::TaskFailed,
    Reason::Offline,
    Reason::Refused,
    Reason::Throttled,
];

#[test]
fn each_reason_s_code_names_it_and_its_sentence_in_shape_js() {
    let (names, sentences) = (words("REASONS"), messages());
    assert_eq!(names.len(), REASONS.len());
    for (i, r) in REASONS.into_iter().enumerate() {
        assert_eq!(r as usize, i, "{r:?}'s code");
        assert_eq!(names[i], r.name());
        assert_eq!(sentences[i], message(r));
    }
    let redirect = Phase::Failed { reason: Reason::HttpStop, redirect: true };
    assert_eq!(
        sentences[REASONS.len()..],
        [phase_message(&redirect, Reason::HttpStop)],
        "the redirect's sentence last"
    );
}

#[test]
fn each_wait_stage_floor_header_and_mode_code_names_it_in_shape_js() {
    use WaitWhy as W;
    let why = [W::Backoff, W::Throttle, W::RetryAfter, W::RateLimit, W::Queue, W::Offline, W::Poll];
    assert_eq!(words("WHY"), why.map(|w| w.name()));
    assert!(why.iter().enumerate().all(|(i, &w)| w as usize == i));
    let stages = [Stage::NotSent, Stage::MaybeDelivered];
    assert_eq!(words("STAGES"), stages.map(|s| s.name()));
    assert!(stages.iter().enumerate().all(|(i, &s)| s as usize == i));
    use FloorHeader as F;
    let floors = [F::RetryAfter, F::RetryAfterMs, F::RateLimit, F::XRateLimitReset, F::XRateLimitResetAfter];
    assert_eq!(words("FLOORS"), floors.map(|h| h.name()));
    assert!(floors.iter().enumerate().all(|(i, &h)| h as usize == i));
    let modes = [Mode::Local, Mode::Leased, Mode::Fallback];
    let names = modes.map(|m| serde_json::to_value(m).unwrap());
    assert_eq!(words("MODES"), names.iter().map(|n| n.as_str().unwrap()).collect::<Vec<_>>());
    assert!(modes.iter().enumerate().all(|(i, &m)| m as usize == i));
}

#[test]
fn each_runtime_s_code_names_it_in_shape_js_as_the_public_type_spells_it() {
    use saferetry::policy::runtime::Runtime as R;
    // index.d.ts: `runtime: "node" | "bun" | "deno" | "workerd" | "browser"`.
    let named = [
        (R::Node, "node"),
        (R::Bun, "bun"),
        (R::Deno, "deno"),
        (R::Workerd, "workerd"),
        (R::Browser, "browser"),
    ];
    assert_eq!(words("RUNTIMES"), named.map(|(_, name)| name));
    assert!(named.iter().enumerate().all(|(i, &(r, _))| r as usize == i));
}
