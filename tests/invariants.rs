//! The fuzz targets' invariants, run by proptest on every `cargo test`.
//!
//! The checks themselves live in `fuzz/src/checks/` and are included here
//! by path, so the fuzzer (hours, coverage-guided, `make fuzz`) and CI (a
//! few seconds, on the stable toolchain) assert the same code. Inputs here
//! lean towards values where things meet: clocks that collide, dates shaped
//! like dates, bounds next to each other.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../fuzz/src/checks/mod.rs"]
mod checks;

use checks::backoff_limits::Case;
use checks::classify_options::{check_classify, check_method, check_option, check_read, fields, keys};
use checks::plain::Plain;
use checks::quota::QuotaOp;
use checks::rate::RateOp;
use proptest::prelude::*;
use saferetry::policy::budget::quota::QuotaConfig;
use saferetry::policy::budget::rate::RateConfig;
use saferetry::policy::classify::{Attempted, Failure, Safety, Stage};
use saferetry::policy::limits::{Backoff, Limits};
use saferetry::policy::rate_limit::FloorHeaders;
use saferetry::policy::retry_after::RetryAfter;

/// Year 10000 in epoch ms.
const YEAR_10000_MS: u64 = 253_402_300_800_000;

fn small_or_any_u32(small: u32) -> impl Strategy<Value = u32> {
    prop_oneof![3 => 0..small, 1 => any::<u32>()]
}

fn small_or_any_u64(small: u64) -> impl Strategy<Value = u64> {
    prop_oneof![3 => 0..small, 1 => any::<u64>()]
}

/// An option bound: small, any, or above 2^53 where f64 cannot hold it.
fn bound() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..2_000_000, any::<u64>(), (1u64 << 53)..]
}

/// A JavaScript-like value as options: leaves of every type, near the
/// bounds options have, and objects keyed by the options' own keys (and a
/// few that are none), nested.
fn plain() -> impl Strategy<Value = Plain> {
    let number = prop_oneof![
        any::<f64>(),
        prop::sample::select(vec![
            -1.0,
            0.0,
            0.5,
            1.0,
            99.0,
            100.0,
            101.0,
            255.0,
            256.0,
            599.0,
            600.0,
            1e4,
            6e4,
            6e5,
            1e6,
            2_147_483_647.0,
            2_147_483_648.0,
            4_294_967_296.0,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            f64::NAN,
            f64::INFINITY
        ]),
    ];
    let leaf = prop_oneof![
        Just(Plain::Undefined),
        Just(Plain::Null),
        number.prop_map(Plain::Num),
        any::<bool>().prop_map(Plain::Bool),
        prop_oneof!["[ -~]{0,8}", "ключ|auto|buffer|stream|before-send|after-try-later", ".{250,260}"]
            .prop_map(Plain::Str),
        Just(Plain::Fun),
        Just(Plain::Throws),
        Just(Plain::Trap),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Plain::Arr),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Plain::BadArr),
            prop::collection::vec((prop::sample::select(keys()), inner), 0..6).prop_map(|fields| Plain::Obj(
                fields.into_iter().map(|(k, v)| (String::from(k), v)).collect()
            )),
        ]
    })
}

fn retry_after_value() -> impl Strategy<Value = String> {
    let day = "(Mon|Tue|Wed|Thu|Fri|Sat|Sun|Xyz)";
    let long_day = "(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
    let month = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Foo)";
    let time = "[0-2][0-9]:[0-6][0-9]:[0-6][0-9]";
    let re = |pattern: String| proptest::string::string_regex(&pattern).expect("a valid regex");
    prop_oneof![
        ".{0,40}",
        "[ \t]?[0-9]{1,22}[ \t]?",
        re(format!("{day}, [0-3][0-9] {month} [0-9]{{4}} {time} GMT[ \t]?")),
        re(format!("{long_day}, [0-3][0-9]-{month}-[0-9]{{2}} {time} GMT")),
        re(format!("{day} {month} ( [1-9]|[0-3][0-9]) {time} [0-9]{{4}}")),
    ]
}

fn rate_op() -> impl Strategy<Value = RateOp> {
    prop_oneof![
        4 => (0u64..20_000, 0u64..40_000).prop_map(|(now_ms, latest_ms)| RateOp::Reserve { now_ms, latest_ms }),
        1 => (any::<u64>(), any::<u64>()).prop_map(|(now_ms, latest_ms)| RateOp::Reserve { now_ms, latest_ms }),
        2 => any::<usize>().prop_map(RateOp::ReleaseKept),
        1 => small_or_any_u64(20_000).prop_map(RateOp::ReleaseAny),
    ]
}

fn attempted() -> impl Strategy<Value = Attempted> {
    let retry_after = prop_oneof![
        Just(None),
        any::<u64>().prop_map(|ms| Some(RetryAfter::Delay(ms))),
        Just(Some(RetryAfter::Infinite)),
        Just(Some(RetryAfter::Unsupported)),
    ];
    prop_oneof![
        prop_oneof![Just(Stage::NotSent), Just(Stage::MaybeDelivered)]
            .prop_map(|stage| Attempted::Failed(Failure::Network(stage))),
        prop_oneof![Just(Stage::NotSent), Just(Stage::MaybeDelivered)]
            .prop_map(|stage| Attempted::Failed(Failure::Refused(stage))),
        prop_oneof![
            Just(Failure::AttemptTimeout),
            Just(Failure::Deadline),
            Just(Failure::Cancelled),
            Just(Failure::BodyTooLarge)
        ]
        .prop_map(Attempted::Failed),
        (prop_oneof![100u16..600, any::<u16>()], retry_after, any::<bool>()).prop_map(
            |(status, retry_after, retry_after_hidden)| Attempted::Responded {
                status,
                retry_after,
                retry_after_hidden
            }
        ),
    ]
}

/// A rate-limit header value: often well-formed, sometimes anything.
fn header_value(well_formed: &'static str) -> impl Strategy<Value = Option<String>> {
    prop_oneof![1 => Just(None), 3 => well_formed.prop_map(Some), 1 => ".{0,12}".prop_map(Some)]
}

fn floor_headers() -> impl Strategy<Value = FloorHeaders> {
    (
        header_value("[0-9]{1,3}"),
        header_value("[0-9]{1,5}"),
        header_value(
            "(\"[a-z]{1,5}\"|[a-z]{1,5});r=[0-9]{1,2};t=[0-9]{1,22}(, [a-z]{1,3};r=0;t=[0-9]{1,3}){0,2}",
        ),
        header_value("[0-2]"),
        header_value("[0-9]{1,11}|1[0-9]{9}|[0-9]{19,21}"),
        header_value("[0-9]{1,4}(\\.[0-9]{1,6})?"),
    )
        .prop_map(|(retry_after, retry_after_ms, ratelimit, remaining, reset, reset_after)| {
            FloorHeaders { retry_after, retry_after_ms, ratelimit, remaining, reset, reset_after }
        })
}

proptest! {
    #[test]
    fn a_rate_limit_floor_is_the_largest_reset_any_header_states_and_only_on_a_throttle(
        h in floor_headers(),
        status in prop_oneof![Just(403u16), Just(429), Just(503), 100u16..600],
        now in prop_oneof![1_600_000_000_000u64..1_800_000_000_000, any::<u64>()],
    ) {
        checks::rate_limit::check(&h, status, now);
    }

    #[test]
    fn retry_after_reads_as_the_independent_reader_and_never_below_either_header(
        value in retry_after_value(),
        ms in prop_oneof!["[ \t]?[0-9]{0,21}(\\.[0-9]{0,3})?", ".{0,8}"],
        now in prop_oneof![0..YEAR_10000_MS, any::<u64>()],
    ) {
        checks::retry_after::check(&value, &ms, now);
    }

    #[test]
    fn granted_starts_keep_their_spacing_beyond_the_burst_under_any_clock_and_release(
        requests in 0u32..5, per_ms in small_or_any_u64(5_000), burst in small_or_any_u32(4),
        ops in prop::collection::vec(rate_op(), 0..48),
    ) {
        checks::rate::check(RateConfig { requests, per_ms, burst }, &ops);
    }

    #[test]
    fn the_quota_level_follows_its_model_and_stays_within_capacity(
        capacity in small_or_any_u32(60), retry_cost in small_or_any_u32(12),
        timeout_cost in small_or_any_u32(24), success_refund in small_or_any_u32(4),
        ops in prop::collection::vec(prop_oneof![
            any::<bool>().prop_map(QuotaOp::Spend),
            prop::option::of(small_or_any_u32(12)).prop_map(QuotaOp::Success),
        ], 0..64),
    ) {
        checks::quota::check(QuotaConfig { capacity, retry_cost, timeout_cost, success_refund }, &ops);
    }

    #[test]
    fn jitter_stays_in_its_window_and_a_server_floor_is_never_shortened(
        retry in small_or_any_u32(70),
        (base_ms, cap_ms, throttle_base_ms) in (small_or_any_u64(5_000), small_or_any_u64(50_000), small_or_any_u64(5_000)),
        retry_after_spread in any::<bool>(),
        (max_attempts, total_ms, attempt_ms) in (small_or_any_u32(10), small_or_any_u64(60_000), small_or_any_u64(20_000)),
        random_bits in prop_oneof![any::<u64>(), (0.0f64..1.0).prop_map(f64::to_bits)],
        floor_ms in small_or_any_u64(100_000),
        (now_ms, deadline_ms) in (small_or_any_u64(100_000), small_or_any_u64(200_000)),
    ) {
        checks::backoff_limits::check(Case {
            retry,
            backoff: Backoff { base_ms, cap_ms, throttle_base_ms, retry_after_spread },
            limits: Limits { max_attempts, total_ms, attempt_ms },
            random_bits,
            floor_ms,
            now_ms,
            deadline_ms,
        });
    }

    #[test]
    fn an_unsafe_request_is_retried_only_after_a_not_sent_failure(
        attempt in attempted(),
        safety in prop_oneof![Just(Safety::Idempotent), Just(Safety::Keyed), Just(Safety::Unsafe)],
        statuses in prop::collection::vec(prop_oneof![100u16..600, any::<u16>()], 0..8),
        timeouts in any::<bool>(), network in any::<bool>(),
        method in "[A-Za-z]{0,8}", has_key in any::<bool>(),
    ) {
        check_classify(attempt, safety, &statuses, timeouts, network);
        check_method(&method, has_key);
    }

    #[test]
    fn any_value_read_as_any_options_object_is_taken_or_refused_naming_a_field_it_has(value in plain()) {
        check_read(&value);
    }

    #[test]
    fn an_option_is_accepted_exactly_when_it_is_an_integer_in_its_range(
        field in prop::sample::select(fields()),
        (min, max) in (bound(), bound()),
        (near, step, raw) in (0u8..3, -2i64..=2, prop_oneof![any::<f64>(), (0u64..3_000_000).prop_map(|v| v as f64)]),
    ) {
        // Any f64, or one next to a bound, where f64 rounding bites.
        let value = match near {
            0 => raw,
            1 => min.wrapping_add_signed(step) as f64,
            _ => max.wrapping_add_signed(step) as f64,
        };
        check_option(value, min, max, &field);
    }
}

#[test]
fn the_fuzz_findings_hold_as_inputs_to_the_shared_checks() {
    // The five failures an hour of fuzzing found, through the same checks.
    checks::rate::check(RateConfig { requests: 1, per_ms: 1000, burst: 1 }, &[RateOp::ReleaseAny(0)]);
    let reserve = RateOp::Reserve { now_ms: 500, latest_ms: u64::MAX };
    let config = RateConfig { requests: 1, per_ms: 1000, burst: 1 };
    checks::rate::check(config, &[reserve, RateOp::ReleaseAny(500), RateOp::ReleaseAny(0), reserve]);
    let year_2554 = RateOp::Reserve { now_ms: 18_446_744_073_710, latest_ms: u64::MAX };
    checks::rate::check(RateConfig { requests: 1_000_000, per_ms: 1_000_000, burst: 1 }, &[year_2554; 4]);
    checks::retry_after::check("Thu, 01 Jan 1970 00:00:00 GMT", "", 1 << 63);
    checks::retry_after::check("Mon, 01 Jan 1900 00:00:00 GMT", "", 1 << 63);
    checks::retry_after::check("Monday, 01-Jan-95 00:00:00 GMT", "", 9_223_370_470_828_800_000);
    let p60 = 1u64 << 60;
    let max_attempts = &fields()[0];
    assert_eq!(max_attempts.key, "maxAttempts");
    check_option(p60 as f64, 0, p60 - 1, max_attempts);
    check_option((1u64 << 53) as f64, (1 << 53) + 1, u64::MAX, max_attempts);
}
