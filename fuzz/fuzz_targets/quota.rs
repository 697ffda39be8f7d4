//! The retry quota against a model, under any costs and refunds.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use saferetry::policy::budget::quota::QuotaConfig;
use saferetry_fuzz::checks::quota::{check, QuotaOp};

fn run(u: &mut Unstructured) -> Result<()> {
    let config = QuotaConfig {
        capacity: u.arbitrary()?,
        retry_cost: u.arbitrary()?,
        timeout_cost: u.arbitrary()?,
        success_refund: u.arbitrary()?,
    };
    let mut ops = Vec::new();
    while !u.is_empty() && ops.len() < 256 {
        ops.push(if u.arbitrary()? {
            QuotaOp::Spend(u.arbitrary()?)
        } else {
            QuotaOp::Success(u.arbitrary()?)
        });
    }
    check(config, &ops);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
