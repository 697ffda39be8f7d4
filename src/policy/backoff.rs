//! Full-jitter exponential backoff.
//!
//! The window doubles with each retry up to a cap; the wait is drawn
//! uniformly inside it (`floor(random * window)`). Full jitter spreads a herd
//! of clients that failed together across the whole window, so they do not
//! return together; "equal jitter" and fixed delays keep them in step.

/// `random()` returned something outside `[0, 1)` (or NaN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadRandom;

/// Checks a value drawn from the injected `random()`.
pub fn check_random(random: f64) -> Result<f64, BadRandom> {
    if (0.0..1.0).contains(&random) {
        Ok(random)
    } else {
        Err(BadRandom)
    }
}

/// The jitter window before retry number `retry` (1 for the first retry):
/// `min(cap, base * 2^(retry - 1))`, saturating instead of overflowing.
pub fn window(retry: u32, base_ms: u64, cap_ms: u64) -> u64 {
    let grown = match 1u64.checked_shl(retry.saturating_sub(1)) {
        Some(factor) => base_ms.saturating_mul(factor),
        None if base_ms == 0 => 0,
        None => u64::MAX,
    };
    grown.min(cap_ms)
}

/// A uniform draw in `[0, window)`: `floor(random * window)`, never reaching
/// the window itself even where `f64` rounding would.
pub fn draw(window: u64, random: f64) -> Result<u64, BadRandom> {
    let random = check_random(random)?;
    if window == 0 {
        return Ok(0);
    }
    // `window as f64` may round up and the product with it; the float cast
    // saturates (never wraps), and the clamp keeps the draw below `window`.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // intended: floor, saturating
    let drawn = (random * window as f64) as u64;
    Ok(drawn.min(window.saturating_sub(1)))
}

/// Full jitter: the wait before retry number `retry`.
pub fn full_jitter(retry: u32, base_ms: u64, cap_ms: u64, random: f64) -> Result<u64, BadRandom> {
    draw(window(retry, base_ms, cap_ms), random)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_retries_at_random_one_half_wait_25_50_100_100() {
        let waits: Vec<u64> = (1..=4).map(|r| full_jitter(r, 50, 200, 0.5).unwrap()).collect();
        assert_eq!(waits, vec![25, 50, 100, 100]);
    }

    #[test]
    fn random_zero_waits_zero() {
        for r in 1..=6 {
            assert_eq!(full_jitter(r, 50, 200, 0.0), Ok(0));
        }
    }

    #[test]
    fn random_just_below_one_stays_below_the_window() {
        assert_eq!(full_jitter(1, 50, 200, 0.9999999), Ok(49));
        assert_eq!(full_jitter(9, 50, 200, 0.9999999), Ok(199));
        let huge = full_jitter(200, u64::MAX, u64::MAX, 0.999_999_999_999_999_9).unwrap();
        assert!(huge < u64::MAX);
    }

    #[test]
    fn random_outside_zero_to_one_or_nan_is_an_error_not_a_panic() {
        for bad in [1.0, 1.5, -0.1, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(full_jitter(1, 50, 200, bad), Err(BadRandom), "{bad}");
        }
    }

    #[test]
    fn the_window_saturates_for_any_retry_number() {
        assert_eq!(window(0, 50, 200), 50);
        assert_eq!(window(64, 1, u64::MAX), 1u64 << 63);
        assert_eq!(window(65, 1, u64::MAX), u64::MAX);
        assert_eq!(window(u32::MAX, 3, u64::MAX), u64::MAX);
        assert_eq!(window(u32::MAX, 0, u64::MAX), 0);
    }
}
