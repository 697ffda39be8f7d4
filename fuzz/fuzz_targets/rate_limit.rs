//! Rate-limit headers (`RateLimit`, `X-RateLimit-*`) as floors, against the
//! independent reader in `checks::rate_limit`, at any clock and status.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use saferetry::policy::rate_limit::FloorHeaders;
use saferetry_fuzz::checks::rate_limit::check;

fn field(u: &mut Unstructured) -> Result<Option<String>> {
    if u.ratio(1, 3)? {
        return Ok(None);
    }
    let len = u.int_in_range(0..=40)?;
    Ok(Some(String::from_utf8_lossy(u.bytes(len)?).into_owned()))
}

fn run(u: &mut Unstructured) -> Result<()> {
    let status = *u.choose(&[403u16, 429, 503, 500, 200, 404])?;
    let now_ms: u64 = u.arbitrary()?;
    let h = FloorHeaders {
        retry_after: if u.ratio(1, 4)? { field(u)? } else { None },
        retry_after_ms: if u.ratio(1, 4)? { field(u)? } else { None },
        ratelimit: field(u)?,
        remaining: field(u)?,
        reset: field(u)?,
        reset_after: field(u)?,
    };
    check(&h, status, now_ms);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
