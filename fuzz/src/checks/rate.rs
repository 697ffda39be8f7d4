//! The GCRA start rate under any clock (decreasing too) and any release:
//! every granted start is at or after its `now`, a refused one would have
//! waited past its deadline, and the starts still reserved keep their
//! spacing beyond the burst.

use saferetry::policy::budget::rate::{Rate, RateConfig};

#[derive(Debug, Clone, Copy)]
pub enum RateOp {
    Reserve {
        now_ms: u64,
        latest_ms: u64,
    },
    /// Gives back the kept start at this index (modulo their count), which
    /// may or may not be the most recent reservation.
    ReleaseKept(usize),
    /// Gives back any value, reserved or not.
    ReleaseAny(u64),
}

pub fn check(config: RateConfig, ops: &[RateOp]) {
    let rate = Rate::new(config);
    // Starts granted and not given back, in reservation order; the most
    // recent one can be given back while nothing was reserved after it.
    let mut kept: Vec<u64> = Vec::new();
    let mut last_releasable = false;
    for &op in ops {
        let released = match op {
            RateOp::Reserve { now_ms, latest_ms } => {
                match rate.reserve(now_ms, latest_ms) {
                    Ok(start) => {
                        assert!(start >= now_ms, "start {start} before now {now_ms}");
                        assert!(start == now_ms || start < latest_ms, "{start} waits past {latest_ms}");
                        kept.push(start);
                        last_releasable = true;
                    }
                    // u64::MAX also stands for a start beyond any clock.
                    Err(start) => assert!(
                        (start > now_ms || start == u64::MAX) && start >= latest_ms,
                        "refused {start} at {now_ms}"
                    ),
                }
                continue;
            }
            RateOp::ReleaseKept(i) if !kept.is_empty() => kept[i % kept.len()],
            RateOp::ReleaseKept(_) => 0,
            RateOp::ReleaseAny(start) => start,
        };
        rate.release(released);
        if last_releasable && kept.last() == Some(&released) {
            kept.pop();
            last_releasable = false;
        }
    }
    assert_spaced(config, &kept);
}

/// Any `m` kept starts span at least `(m - burst)` intervals of
/// `per_ms / requests`, less the rounding of starts up to whole ms:
/// `(last - first) * requests + requests - 1 >= (m - burst) * per_ms`.
fn assert_spaced(config: RateConfig, kept: &[u64]) {
    let mut sorted = kept.to_vec();
    sorted.sort_unstable();
    let scale = i128::from(config.requests.max(1));
    let burst = i128::from(config.burst.max(1));
    let per = i128::from(config.per_ms);
    for (i, &first) in sorted.iter().enumerate() {
        for (m, &last) in (1i128..).zip(&sorted[i..]) {
            let span = (i128::from(last) - i128::from(first)) * scale + scale - 1;
            assert!(
                span >= (m - burst) * per,
                "{m} starts within {first}..={last} under {config:?}: {sorted:?}"
            );
        }
    }
}
