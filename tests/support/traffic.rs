//! What a throttled load did, per millisecond of virtual time: the calls
//! offered and the calls sent, and the two figures the throttle tier and
//! the module docs state (the share sent, the time back to full rate).

use std::ops::Range;

/// Per millisecond of a run: calls offered, and calls sent.
pub struct Traffic {
    pub offered: Vec<u64>,
    pub sent: Vec<u64>,
}

impl Traffic {
    /// No calls yet, over `end_ms`.
    pub fn new(end_ms: u64) -> Traffic {
        Traffic { offered: vec![0; end_ms as usize], sent: vec![0; end_ms as usize] }
    }

    /// Sent / offered over `during` (ms).
    pub fn share(&self, during: Range<u64>) -> f64 {
        let (a, b) = (during.start as usize, during.end as usize);
        self.sent[a..b].iter().sum::<u64>() as f64 / self.offered[a..b].iter().sum::<u64>() as f64
    }

    /// How long after an outage ending at `up_ms` traffic was back to
    /// ≥ 95 % of the offered load, measured as the throttle tier does: the
    /// end of the first 1 s window (sliding by 250 ms) in which ≥ 95 % of
    /// the calls went out; none before the run ends.
    pub fn back_ms(&self, up_ms: u64) -> Option<u64> {
        (up_ms..=self.offered.len() as u64 - 1_000)
            .step_by(250)
            .find(|&from| self.share(from..from + 1_000) >= 0.95)
            .map(|from| from + 1_000 - up_ms)
    }
}
