//! What the agent counts, for JMX (`docs/operations.md` lists the attributes).
//!
//! Counters on the request path are striped over cache-line-padded cells, so two request threads
//! counting at once do not fight over one cache line.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

const STRIPES: usize = 8;

#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// A counter many threads add to and few read.
#[derive(Default)]
pub struct StripedCounter {
    cells: [Padded; STRIPES],
}

thread_local! {
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Hands out stripes round-robin, once per thread (thread-local addresses are aligned alike, so
/// their bits would put every thread on the same stripe).
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

fn stripe() -> usize {
    STRIPE.with(|s| {
        if s.get() == usize::MAX {
            s.set(NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES);
        }
        s.get()
    })
}

impl StripedCounter {
    pub fn add(&self, n: u64) {
        self.cells[stripe()].0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.cells.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }
}

/// The agent's counters and health.
#[derive(Default)]
pub struct Metrics {
    pub allowed: StripedCounter,
    pub denied: StripedCounter,
    pub cache_hits: StripedCounter,
    pub cache_misses: StripedCounter,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_get_different_stripes() {
        let stripes: std::collections::HashSet<usize> =
            (0..4).map(|_| std::thread::spawn(stripe).join().unwrap()).collect();
        assert!(stripes.len() >= 3, "{stripes:?}");
    }

    #[test]
    fn striped_counts_add_up_across_threads() {
        let counter = std::sync::Arc::new(StripedCounter::default());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let counter = counter.clone();
                std::thread::spawn(move || (0..10_000).for_each(|_| counter.add(1)))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(counter.get(), 40_000);
    }
}
