//! The authority's state as plain data, so it outlives the object that runs
//! it: a Durable Object writes it to storage after every grant (an evicted
//! object must not come back with a full bucket), a leader tab hands it to
//! the next leader. It holds the bucket's level, the rate schedule's next
//! start and what is known of each client (for deduplication and for
//! crediting returns at most once); nothing else is needed to go on.

use alloc::vec::Vec;
use serde::Serialize;

use super::FleetConfig;
use crate::policy::number::{ms, opt_ms};
use crate::policy::throttle::{Counts, WindowState};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorityState {
    /// The configuration in force when the state was kept (a restore under
    /// another one clamps the level to the new capacity and keeps the
    /// schedule).
    pub config: FleetConfig,
    /// Tokens in the bucket, when a quota is kept.
    pub level: Option<u32>,
    /// Epoch ms of the next start on the rate's schedule, when a rate is kept.
    #[serde(serialize_with = "opt_ms")]
    pub schedule_ms: Option<u64>,
    pub holders: Vec<HolderState>,
    /// Epoch ms of the first request after a ttl without any: silences are
    /// counted from then (see `Authority::grant`).
    #[serde(serialize_with = "ms")]
    pub resumed_ms: u64,
    pub stats: AuthorityStats,
    /// The fleet's adaptive-throttling window, once a client reported counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowState>,
}

/// What the authority knows of one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HolderState {
    #[serde(serialize_with = "ms")]
    pub client: u64,
    /// The newest request answered; older or equal ones are duplicates.
    #[serde(serialize_with = "ms")]
    pub last_seq: u64,
    /// Tokens the client may still hold: the most a return can credit.
    pub holding: u32,
    /// The client's running totals already credited.
    #[serde(serialize_with = "ms")]
    pub returned: u64,
    #[serde(serialize_with = "ms")]
    pub refunded: u64,
    #[serde(serialize_with = "ms")]
    pub spent: u64,
    /// Tokens given back to the bucket when the client went silent (see
    /// `Authority::grant`), not yet taken again: a late request still
    /// claiming them takes them from the bucket again.
    pub reclaimed: u32,
    #[serde(serialize_with = "ms")]
    pub seen_ms: u64,
    /// The quota and rate its latest request offered.
    pub config: FleetConfig,
    /// Its running totals of requests and accepts already credited to the
    /// fleet's window (`None`: not known yet, as from a state kept by an
    /// older version: its next report sets them and credits nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counted: Option<Counts>,
}

/// Counters for the authority's own report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorityStats {
    #[serde(serialize_with = "ms")]
    pub requests: u64,
    #[serde(serialize_with = "ms")]
    pub duplicates: u64,
    #[serde(serialize_with = "ms")]
    pub tokens_granted: u64,
    #[serde(serialize_with = "ms")]
    pub tokens_credited: u64,
    #[serde(serialize_with = "ms")]
    pub tokens_refunded: u64,
    /// Tokens given back for clients silent two `ttl_ms` (a killed
    /// instance's unspent tokens). Those a late request takes again count
    /// as granted again.
    #[serde(serialize_with = "ms")]
    pub tokens_reclaimed: u64,
    #[serde(serialize_with = "ms")]
    pub slots_granted: u64,
    /// Requests whose policy offered a quota or a rate other than the one
    /// in force when they arrived (a mixed fleet, a redeploy under way).
    #[serde(serialize_with = "ms")]
    pub differing_configs: u64,
    /// Times the configuration in force changed ([`FleetConfig::strictest`]).
    #[serde(serialize_with = "ms")]
    pub config_changes: u64,
}
