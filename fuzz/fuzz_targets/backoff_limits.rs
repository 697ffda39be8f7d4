//! Backoff, the wait plan and the limits, with `random()` as raw f64 bits.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use saferetry::policy::limits::{Backoff, Limits};
use saferetry_fuzz::checks::backoff_limits::{check, Case};

fn run(u: &mut Unstructured) -> Result<()> {
    let backoff = Backoff {
        base_ms: u.arbitrary()?,
        cap_ms: u.arbitrary()?,
        throttle_base_ms: u.arbitrary()?,
        retry_after_spread: u.arbitrary()?,
    };
    let limits =
        Limits { max_attempts: u.arbitrary()?, total_ms: u.arbitrary()?, attempt_ms: u.arbitrary()? };
    let case = Case {
        retry: u.arbitrary()?,
        backoff,
        limits,
        random_bits: u.arbitrary()?,
        floor_ms: u.arbitrary()?,
        now_ms: u.arbitrary()?,
        deadline_ms: u.arbitrary()?,
    };
    check(case);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
