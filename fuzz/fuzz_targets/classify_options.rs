//! Classification of any attempt for any request safety and allowlist,
//! method normalisation, and every numeric option from raw f64 bits.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use saferetry::policy::classify::{Attempted, Failure, Safety, Stage};
use saferetry::policy::retry_after::RetryAfter;
use saferetry_fuzz::checks::classify_options::{check_classify, check_method, check_option, check_read, fields, keys};
use saferetry_fuzz::checks::plain::Plain;

fn attempted(u: &mut Unstructured) -> Result<Attempted> {
    let stage = if u.arbitrary()? { Stage::NotSent } else { Stage::MaybeDelivered };
    Ok(match u.int_in_range(0..=6)? {
        0 => Attempted::Failed(Failure::Network(stage)),
        5 => Attempted::Failed(Failure::Refused(stage)),
        1 => Attempted::Failed(Failure::AttemptTimeout),
        2 => Attempted::Failed(Failure::Deadline),
        3 => Attempted::Failed(Failure::Cancelled),
        4 => Attempted::Failed(Failure::BodyTooLarge),
        _ => Attempted::Responded {
            status: u.arbitrary()?,
            retry_after: match u.int_in_range(0..=3)? {
                0 => None,
                1 => Some(RetryAfter::Delay(u.arbitrary()?)),
                2 => Some(RetryAfter::Infinite),
                _ => Some(RetryAfter::Unsupported),
            },
            retry_after_hidden: u.arbitrary()?,
        },
    })
}

/// A JavaScript-like value, objects keyed by the options' own keys.
fn plain(u: &mut Unstructured, keys: &[&str], depth: u8) -> Result<Plain> {
    let nested = if depth > 0 { 10 } else { 7 };
    Ok(match u.int_in_range(0..=nested)? {
        0 => Plain::Undefined,
        1 => Plain::Null,
        2 => Plain::Num(f64::from_bits(u.arbitrary()?)),
        3 => Plain::Bool(u.arbitrary()?),
        4 => Plain::Str(u.arbitrary()?),
        5 => Plain::Fun,
        6 => Plain::Throws,
        7 => Plain::Trap,
        8 => Plain::Arr((0..u.int_in_range(0..=3)?).map(|_| plain(u, keys, depth - 1)).collect::<Result<_>>()?),
        9 => Plain::BadArr((0..u.int_in_range(1..=2)?).map(|_| plain(u, keys, depth - 1)).collect::<Result<_>>()?),
        _ => {
            let n = u.int_in_range(0..=5)?;
            let fields = (0..n).map(|_| Ok((String::from(*u.choose(keys)?), plain(u, keys, depth - 1)?)));
            Plain::Obj(fields.collect::<Result<_>>()?)
        }
    })
}

fn run(u: &mut Unstructured) -> Result<()> {
    let attempt = attempted(u)?;
    let safety = *u.choose(&[Safety::Idempotent, Safety::Keyed, Safety::Unsafe])?;
    let statuses: Vec<u16> = (0..u.int_in_range(0..=8)?).map(|_| u.arbitrary()).collect::<Result<_>>()?;
    check_classify(attempt, safety, &statuses, u.arbitrary()?, u.arbitrary()?);
    let fields = fields();
    let field = u.choose(&fields)?;
    let (min, max): (u64, u64) = (u.arbitrary()?, u.arbitrary()?);
    // Any f64, or one near a bound, where f64 rounding bites.
    let near = |bound: u64, step: i8| bound.wrapping_add_signed(i64::from(step)) as f64;
    let value = match u.int_in_range(0..=2)? {
        0 => f64::from_bits(u.arbitrary()?),
        1 => near(min, u.arbitrary()?),
        _ => near(max, u.arbitrary()?),
    };
    check_option(value, min, max, field);
    let method_len = u.int_in_range(0..=10)?;
    let method = String::from_utf8_lossy(u.bytes(method_len)?).into_owned();
    check_method(&method, u.arbitrary()?);
    check_read(&plain(u, &keys(), 4)?);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
