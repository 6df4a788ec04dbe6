//! Delivery of access events to GrantForge: batches, a bounded disk spool, and nothing lost
//! silently.
//!
//! Batches hold at most `grantforge.audit.batch.size` (≤ 1000) events. A batch the server cannot
//! take now (network, 401, 404, 5xx) goes to the spool (`<cache dir>/audit-spool/`, one file per
//! batch, bounded by `grantforge.audit.spool.limit.bytes`: the oldest batches are dropped and
//! counted to make room), and the spool is sent oldest first once the server answers again. A 400
//! means one event the server refuses: the batch is split until that event is found, and only it
//! is dropped and counted. Event ids are stable, so a resent event is deduplicated by the server.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::source::client::{CallError, ServerClient};

/// Delivery counters, for the heartbeat's health and the metrics.
#[derive(Default)]
pub struct DeliveryStats {
    pub sent: AtomicU64,
    pub dropped: AtomicU64,
    pub spooled_bytes: AtomicU64,
}

pub struct Shipper {
    instance: String,
    batch_size: usize,
    spool: Spool,
    stats: std::sync::Arc<DeliveryStats>,
}

/// Why a batch was not delivered now.
struct Later;

impl Shipper {
    pub fn new(
        instance: &str,
        batch_size: usize,
        spool_dir: PathBuf,
        spool_limit: u64,
        stats: std::sync::Arc<DeliveryStats>,
    ) -> Shipper {
        let spool = Spool {
            dir: spool_dir,
            limit: spool_limit,
            seq: 0,
        };
        stats.spooled_bytes.store(spool.bytes(), Ordering::Relaxed);
        Shipper {
            instance: instance.to_string(),
            batch_size,
            spool,
            stats,
        }
    }

    /// Delivers `events` (or spools them when the server is known to be away), after the spool.
    pub fn ship(&mut self, client: &ServerClient, events: &[Value], server_answers: bool) {
        let mut deliverable = server_answers && self.resend_spool(client);
        for batch in events.chunks(self.batch_size) {
            if deliverable && self.send(client, batch).is_ok() {
                continue;
            }
            deliverable = false;
            self.spool_batch(batch);
        }
        self.stats
            .spooled_bytes
            .store(self.spool.bytes(), Ordering::Relaxed);
    }

    /// Spools `events` without trying to deliver them: what a delivery interrupted by a panic does
    /// with its events. Some of them may have been delivered already; their ids are stable, so the
    /// server counts the resent ones as duplicates.
    pub fn spool_only(&mut self, events: &[Value]) {
        for batch in events.chunks(self.batch_size) {
            self.spool_batch(batch);
        }
        self.stats
            .spooled_bytes
            .store(self.spool.bytes(), Ordering::Relaxed);
    }

    /// Sends spooled batches oldest first; false when one could not be delivered.
    fn resend_spool(&mut self, client: &ServerClient) -> bool {
        while let Some((file, batch)) = self.spool.oldest() {
            if self.send(client, &batch).is_err() {
                return false;
            }
            let _ = fs::remove_file(file);
        }
        true
    }

    fn send(&self, client: &ServerClient, batch: &[Value]) -> Result<(), Later> {
        if batch.is_empty() {
            return Ok(());
        }
        match client.send_events(&json!({"instance": self.instance, "events": batch})) {
            Ok(_) => {
                self.stats
                    .sent
                    .fetch_add(batch.len() as u64, Ordering::Relaxed);
                Ok(())
            }
            Err(CallError::Status {
                status: 400,
                detail,
            }) if batch.len() == 1 => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    "GrantForge refused access event {} ({detail}); it is dropped, the others are delivered",
                    batch[0]["eventId"].as_str().unwrap_or("?")
                );
                Ok(())
            }
            Err(CallError::Status { status: 400, .. }) => {
                let (left, right) = batch.split_at(batch.len() / 2);
                self.send(client, left)?;
                self.send(client, right)
            }
            Err(_) => Err(Later),
        }
    }

    fn spool_batch(&mut self, batch: &[Value]) {
        match self.spool.write(batch) {
            Ok(dropped) if dropped > 0 => {
                self.stats.dropped.fetch_add(dropped, Ordering::Relaxed);
                tracing::warn!(
                    "the audit spool is full ({}): {dropped} of the oldest spooled events were dropped",
                    crate::settings::AUDIT_SPOOL_LIMIT_BYTES.key
                );
            }
            Ok(_) => {}
            Err(e) => {
                self.stats
                    .dropped
                    .fetch_add(batch.len() as u64, Ordering::Relaxed);
                tracing::warn!(
                    "cannot spool {} access events in {}: {e}; they are dropped",
                    batch.len(),
                    self.spool.dir.display()
                );
            }
        }
    }
}

/// One JSON file per batch: `<millis>-<seq>-<events>.json`, oldest first by name.
struct Spool {
    dir: PathBuf,
    limit: u64,
    seq: u64,
}

impl Spool {
    fn files(&self) -> Vec<(PathBuf, u64, u64)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut files: Vec<(PathBuf, u64, u64)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .map(|e| {
                let events = events_in_name(&e.path());
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                (e.path(), size, events)
            })
            .collect();
        files.sort();
        files
    }

    fn bytes(&self) -> u64 {
        self.files().iter().map(|(_, size, _)| size).sum()
    }

    /// Writes a batch, first dropping the oldest batches until it fits; returns the events dropped.
    fn write(&mut self, batch: &[Value]) -> io::Result<u64> {
        let bytes = serde_json::to_vec(batch).map_err(io::Error::other)?;
        if bytes.len() as u64 > self.limit {
            return Ok(batch.len() as u64);
        }
        fs::create_dir_all(&self.dir)?;
        let mut dropped = 0;
        let mut files = self.files();
        let mut used: u64 = files.iter().map(|(_, size, _)| size).sum();
        while used + bytes.len() as u64 > self.limit && !files.is_empty() {
            let (oldest, size, events) = files.remove(0);
            fs::remove_file(&oldest)?;
            used -= size;
            dropped += events;
        }
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        self.seq += 1;
        let name = format!(
            "{millis:019}-{:06}-{}.json",
            self.seq % 1_000_000,
            batch.len()
        );
        let tmp = self.dir.join(format!("{name}.tmp"));
        fs::write(&tmp, &bytes)?;
        fs::rename(tmp, self.dir.join(name))?;
        Ok(dropped)
    }

    /// The oldest readable batch; unreadable files are deleted (and said so).
    fn oldest(&self) -> Option<(PathBuf, Vec<Value>)> {
        for (path, _, _) in self.files() {
            match fs::read(&path)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Vec<Value>>(&bytes).ok())
            {
                Some(batch) => return Some((path, batch)),
                None => {
                    tracing::warn!(
                        "the spooled audit batch {} is unreadable and was deleted",
                        path.display()
                    );
                    let _ = fs::remove_file(&path);
                }
            }
        }
        None
    }
}

fn events_in_name(path: &Path) -> u64 {
    path.file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.rsplit('-').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "gf-spool-{name}-{}-{:?}",
            std::process::id(),
            std::time::Instant::now()
        ))
    }

    fn batch(n: usize, tag: &str) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"eventId": format!("{tag}-{i}"), "pad": "x".repeat(100)}))
            .collect()
    }

    #[test]
    fn a_full_spool_drops_the_oldest_batches_and_counts_their_events() {
        let mut spool = Spool {
            dir: dir("full"),
            limit: 3000,
            seq: 0,
        };
        assert_eq!(spool.write(&batch(10, "a")).unwrap(), 0);
        assert_eq!(spool.write(&batch(10, "b")).unwrap(), 0);
        assert_eq!(
            spool.write(&batch(10, "c")).unwrap(),
            10,
            "a's 10 events make room for c"
        );
        let (_, oldest) = spool.oldest().unwrap();
        assert_eq!(oldest[0]["eventId"], "b-0");
        assert_eq!(
            spool.write(&batch(100, "huge")).unwrap(),
            100,
            "a batch larger than the whole limit is dropped"
        );
        fs::remove_dir_all(&spool.dir).unwrap();
    }

    #[test]
    fn unreadable_batches_are_deleted_not_retried_forever() {
        let mut spool = Spool {
            dir: dir("bad"),
            limit: 100_000,
            seq: 0,
        };
        spool.write(&batch(1, "good")).unwrap();
        fs::write(
            spool.dir.join("0000000000000000000-000000-1.json"),
            b"not json",
        )
        .unwrap();
        let (_, oldest) = spool.oldest().unwrap();
        assert_eq!(oldest[0]["eventId"], "good-0");
        assert_eq!(spool.files().len(), 1);
        fs::remove_dir_all(&spool.dir).unwrap();
    }
}
