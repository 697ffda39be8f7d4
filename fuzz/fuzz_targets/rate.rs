//! The GCRA start rate: any configuration, clocks that jump back and
//! forth, releases of kept and never-reserved starts in any order.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use saferetry::policy::budget::rate::RateConfig;
use saferetry_fuzz::checks::rate::{check, RateOp};

fn run(u: &mut Unstructured) -> Result<()> {
    let config = RateConfig { requests: u.arbitrary()?, per_ms: u.arbitrary()?, burst: u.arbitrary()? };
    let mut now: u64 = u.arbitrary()?;
    let mut ops = Vec::new();
    while !u.is_empty() && ops.len() < 64 {
        let op = match u.int_in_range(0..=5)? {
            // Mostly small steps of a clock, forward or back, so starts meet.
            0 | 1 => {
                now = now.wrapping_add(u64::from(u.arbitrary::<u16>()?));
                RateOp::Reserve { now_ms: now, latest_ms: now.saturating_add(u.arbitrary::<u32>()?.into()) }
            }
            2 => {
                now = now.wrapping_sub(u64::from(u.arbitrary::<u16>()?));
                RateOp::Reserve { now_ms: now, latest_ms: u.arbitrary()? }
            }
            3 => {
                now = u.arbitrary()?;
                RateOp::Reserve { now_ms: now, latest_ms: u.arbitrary()? }
            }
            4 => RateOp::ReleaseKept(u.arbitrary()?),
            _ => RateOp::ReleaseAny(u.arbitrary()?),
        };
        ops.push(op);
    }
    check(config, &ops);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
