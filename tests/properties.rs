//! Properties of the parsers and the backoff over arbitrary input: no
//! panic, never below the server's floor, never above cap (+ spread).
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use saferetry::policy::backoff::{full_jitter, window};
use saferetry::policy::classify::WaitKind;
use saferetry::policy::limits::{fit, Backoff, Wait};
use saferetry::policy::retry_after::{parse, parse_ms, RetryAfter};

proptest! {
    #[test]
    fn retry_after_never_panics_on_any_string(s in ".{0,64}", now in any::<u64>()) {
        let _ = parse(&s, now);
        let _ = parse_ms(&s);
    }

    #[test]
    fn retry_after_never_panics_on_date_shaped_input(
        s in "[A-Za-z]{3,9}, [0-9]{1,2}[ -][A-Za-z]{3}[ -][0-9]{2,4} [0-9]{2}:[0-9]{2}:[0-9]{2} [A-Z]{3}",
        now in any::<u64>(),
    ) {
        let _ = parse(&s, now);
    }

    #[test]
    fn delta_seconds_are_exactly_seconds(secs in 0u64..=18_446_744_073_709_551) {
        prop_assert_eq!(parse(&secs.to_string(), 0), RetryAfter::Delay(secs * 1000));
    }

    #[test]
    fn full_jitter_stays_inside_its_window(
        retry in any::<u32>(), base in any::<u64>(), cap in any::<u64>(), random in 0.0f64..1.0,
    ) {
        let w = window(retry, base, cap);
        let wait = full_jitter(retry, base, cap, random).unwrap();
        prop_assert!(wait <= cap);
        prop_assert!(w == 0 && wait == 0 || wait < w);
    }

    #[test]
    fn full_jitter_rejects_anything_outside_zero_to_one(random in prop_oneof![
        any::<f64>().prop_filter("outside [0,1)", |r| !(0.0..1.0).contains(r)),
        Just(f64::NAN),
    ]) {
        prop_assert!(full_jitter(1, 50, 200, random).is_err());
    }

    #[test]
    fn a_planned_retry_after_wait_is_never_below_the_floor_nor_above_floor_plus_cap(
        floor in any::<u64>(), retry in 1u32..80, base in 0u64..100_000, cap in 0u64..100_000,
        random in 0.0f64..1.0, spread in any::<bool>(),
    ) {
        let b = Backoff { base_ms: base, cap_ms: cap, throttle_base_ms: 1000, retry_after_spread: spread };
        let w = b.plan(WaitKind::RetryAfter(floor), retry, random).unwrap();
        prop_assert!(w.ms >= floor);
        prop_assert_eq!(w.floor_ms, floor);
        prop_assert!(w.ms <= floor.saturating_add(cap));
    }

    #[test]
    fn fitting_a_wait_never_shortens_the_server_floor(
        ms in any::<u64>(), floor in any::<u64>(), now in any::<u64>(), budget in any::<u64>(),
    ) {
        let wait = Wait { ms: ms.max(floor), floor_ms: floor };
        let deadline = now.saturating_add(budget);
        match fit(wait, now, deadline) {
            Ok(fitted) => {
                prop_assert!(fitted >= floor);
                prop_assert!(fitted <= wait.ms);
                prop_assert!(now.saturating_add(fitted) < deadline);
            }
            Err(retry_at) => {
                let must = if floor > 0 { floor } else { wait.ms };
                prop_assert!(must >= deadline - now);
                if let Some(at) = retry_at { prop_assert_eq!(at, now + must); }
            }
        }
    }
}
