//! `Retry-After` and `Retry-After-Ms` against the independent reader in
//! `checks::http_date`, at any clock.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use saferetry_fuzz::checks::retry_after::check;

/// Year 10000, in epoch ms: most clocks are picked below it, where dates
/// can be near `now`; the rest are any `u64`.
const YEAR_10000_MS: u64 = 253_402_300_800_000;

fn run(u: &mut Unstructured) -> Result<()> {
    let raw: u64 = u.arbitrary()?;
    let now_ms = if u.ratio(1, 4)? { raw } else { raw % YEAR_10000_MS };
    let ms_len = u.int_in_range(0..=24)?;
    let retry_after_ms = String::from_utf8_lossy(u.bytes(ms_len)?).into_owned();
    let retry_after = String::from_utf8_lossy(u.bytes(u.len())?).into_owned();
    check(&retry_after, &retry_after_ms, now_ms);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
