//! What the agent counts, for JMX (`docs/operations.md` lists the attributes).
//!
//! The request path counts per thread (see `lane`); what is here is counted off that path.

use std::sync::atomic::AtomicU64;

use parking_lot::Mutex;

/// The agent's health, as its thread sees it.
#[derive(Default)]
pub struct Metrics {
    pub heartbeat_failures: AtomicU64,
    pub last_error: Mutex<Option<String>>,
}

/// A point-in-time reading of everything the metrics show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub decisions_allowed: u64,
    pub decisions_denied: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_size: u64,
    /// -1 without a snapshot.
    pub snapshot_version: i64,
    /// -1 without a snapshot.
    pub snapshot_age_seconds: i64,
    pub heartbeat_failures: u64,
    pub audit_queued: u64,
    pub audit_spooled_bytes: u64,
    pub audit_sent: u64,
    pub audit_dropped: u64,
    pub last_error: String,
    pub instance: String,
}
