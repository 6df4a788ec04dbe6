//! The audit's disk spool: one JSON file per batch, written aside and renamed into place, listed
//! once when opened and then followed by an index.

use std::collections::VecDeque;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// One JSON file per batch: `<millis>-<seq>-<events>.json`, oldest first by name.
pub(super) struct Spool {
    pub(super) dir: PathBuf,
    pub(super) limit: u64,
    seq: u64,
    /// The spool's batches, oldest first: the directory is listed once, when the spool is opened,
    /// and this index follows every write and removal since (listing it per batch made a long
    /// outage's recovery quadratic).
    pub(super) index: VecDeque<Spooled>,
    bytes: u64,
    /// Events of batches dropped to make room, not yet taken (counted by the shipper).
    evicted: Vec<Value>,
    /// Events of batches deleted because they could not be read back, not yet taken.
    unreadable: u64,
}

/// Where a batch goes in the spool's order.
enum Place {
    First,
    Last,
}

/// One spooled batch.
pub(super) struct Spooled {
    pub(super) path: PathBuf,
    bytes: u64,
    events: u64,
}

/// The suffix of a batch being written; one left by a crash is removed when the spool opens.
const ASIDE: &str = ".tmp";

impl Spool {
    /// The spool as the agent's thread opens it at start: a batch left half-written by a crash
    /// is removed.
    pub(super) fn open(dir: PathBuf, limit: u64) -> Spool {
        for left in Self::entries(&dir)
            .iter()
            .filter(|e| e.file_name().to_string_lossy().ends_with(ASIDE))
        {
            let _ = fs::remove_file(left.path());
        }
        Self::open_beside(dir, limit)
    }

    /// The spool as another thread opens it beside the agent's (at close): the batches being
    /// written aside are the agent thread's, still to be renamed into place, and stay.
    pub(super) fn open_beside(dir: PathBuf, limit: u64) -> Spool {
        let entries = Self::entries(&dir);
        let mut index: Vec<Spooled> = entries
            .into_iter()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .map(|e| Spooled {
                events: events_in_name(&e.path()),
                bytes: e.metadata().map(|m| m.len()).unwrap_or(0),
                path: e.path(),
            })
            .collect();
        index.sort_by(|a, b| a.path.cmp(&b.path));
        Spool {
            dir,
            limit,
            seq: 0,
            bytes: index.iter().map(|s| s.bytes).sum(),
            index: index.into(),
            evicted: Vec::new(),
            unreadable: 0,
        }
    }

    fn entries(dir: &Path) -> Vec<fs::DirEntry> {
        fs::read_dir(dir)
            .map(|entries| entries.filter_map(Result::ok).collect())
            .unwrap_or_default()
    }

    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    pub(super) fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The events lost since the last call: those of batches dropped to make room (read back from
    /// their files, so that their accesses can be counted), and the number of events of batches
    /// that could not be read.
    pub(super) fn take_losses(&mut self) -> (Vec<Value>, u64) {
        (
            std::mem::take(&mut self.evicted),
            std::mem::take(&mut self.unreadable),
        )
    }

    /// Writes a batch, first dropping the oldest batches until it fits (see [`Spool::take_losses`]);
    /// a batch larger than the whole limit is dropped itself.
    pub(super) fn write(&mut self, batch: &[Value]) -> io::Result<()> {
        let bytes = serde_json::to_vec(batch).map_err(io::Error::other)?;
        if bytes.len() as u64 > self.limit {
            self.evicted.extend_from_slice(batch);
            return Ok(());
        }
        fs::create_dir_all(&self.dir)?;
        while self.bytes + bytes.len() as u64 > self.limit && !self.index.is_empty() {
            match self
                .index
                .front()
                .and_then(|oldest| read_batch(&oldest.path))
            {
                Some(events) => self.evicted.extend(events),
                None => self.unreadable += self.index.front().map_or(0, |o| o.events),
            }
            self.remove_oldest(1);
        }
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        // Another thread may spool beside this one (at close): a name taken is never written over.
        let name = loop {
            self.seq += 1;
            let name = format!(
                "{millis:019}-{:06}-{}.json",
                self.seq % 1_000_000,
                batch.len()
            );
            if !self.dir.join(&name).exists() {
                break name;
            }
        };
        let aside = self.write_aside(&name, &bytes)?;
        self.put(aside, &name, &bytes, batch, Place::Last)
    }

    /// Puts `rest` in place of the `n` oldest batches, first in order: what remains of them after
    /// a resend the server took in part. Written aside first, so a failure leaves them as they were.
    pub(super) fn replace_oldest(&mut self, n: usize, rest: &[Value]) -> io::Result<()> {
        let Some(oldest) = self.index.front().map(|s| s.path.clone()) else {
            return Ok(());
        };
        let stem = oldest
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("0-0-0");
        let prefix = stem.rsplit_once('-').map_or(stem, |(prefix, _)| prefix);
        let name = format!("{prefix}-{}.json", rest.len());
        let bytes = serde_json::to_vec(rest).map_err(io::Error::other)?;
        let aside = self.write_aside(&name, &bytes)?;
        self.remove_oldest(n);
        self.put(aside, &name, &bytes, rest, Place::First)
    }

    /// Writes a batch's bytes under a temporary name (which the spool never lists); a write that
    /// fails (a full disk) leaves nothing behind, outside the spool's limit.
    fn write_aside(&self, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let aside = self.dir.join(format!("{name}{ASIDE}"));
        fs::write(&aside, bytes).inspect_err(|_| {
            let _ = fs::remove_file(&aside);
        })?;
        Ok(aside)
    }

    /// Puts `batch`, written aside as `bytes`, in place as `name`, and indexes it first or last.
    fn put(
        &mut self,
        aside: PathBuf,
        name: &str,
        bytes: &[u8],
        batch: &[Value],
        place: Place,
    ) -> io::Result<()> {
        let path = self.dir.join(name);
        fs::rename(aside, &path)?;
        self.bytes += bytes.len() as u64;
        let spooled = Spooled {
            path,
            bytes: bytes.len() as u64,
            events: batch.len() as u64,
        };
        match place {
            Place::First => self.index.push_front(spooled),
            Place::Last => self.index.push_back(spooled),
        }
        Ok(())
    }

    /// The oldest readable batches, merged while they fit in `max_events` (the first always
    /// does), and how many of the oldest files they are: the files stay until
    /// [`Spool::remove_oldest`], so a batch the server does not take is not lost. Unreadable
    /// files are deleted (and said so).
    pub(super) fn oldest(&mut self, max_events: usize) -> Option<(usize, Vec<Value>)> {
        let mut merged: Vec<Value> = Vec::new();
        let mut files = 0;
        while let Some(next) = self.index.get(files) {
            if files > 0 && merged.len() as u64 + next.events > max_events as u64 {
                break;
            }
            match read_batch(&next.path) {
                Some(batch) => {
                    merged.extend(batch);
                    files += 1;
                }
                None => {
                    tracing::warn!(
                        "the spooled audit batch {} is unreadable and was deleted",
                        next.path.display()
                    );
                    let _ = fs::remove_file(&next.path);
                    if let Some(gone) = self.index.remove(files) {
                        self.bytes -= gone.bytes;
                        self.unreadable += gone.events;
                    }
                }
            }
        }
        (files > 0).then_some((files, merged))
    }

    /// Deletes the `n` oldest batches.
    pub(super) fn remove_oldest(&mut self, n: usize) {
        for gone in self.index.drain(..n.min(self.index.len())) {
            let _ = fs::remove_file(&gone.path);
            self.bytes -= gone.bytes;
        }
    }
}

fn read_batch(path: &Path) -> Option<Vec<Value>> {
    let bytes = fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn events_in_name(path: &Path) -> u64 {
    path.file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.rsplit('-').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn batch(n: usize, tag: &str) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"eventId": format!("{tag}-{i}"), "pad": "x".repeat(100)}))
            .collect()
    }

    pub(crate) fn dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "gf-spool-{name}-{}-{:?}",
            std::process::id(),
            std::time::Instant::now()
        ))
    }

    #[test]
    fn a_full_spool_drops_the_oldest_batches_and_gives_back_their_events() {
        let mut spool = Spool::open(dir("full"), 3000);
        spool.write(&batch(10, "a")).unwrap();
        spool.write(&batch(10, "b")).unwrap();
        assert!(spool.take_losses().0.is_empty());
        spool.write(&batch(10, "c")).unwrap();
        assert_eq!(
            spool.take_losses().0,
            batch(10, "a"),
            "a's 10 events make room for c"
        );
        let (_, oldest) = spool.oldest(1).unwrap();
        assert_eq!(oldest[0]["eventId"], "b-0");
        spool.write(&batch(100, "huge")).unwrap();
        assert_eq!(
            spool.take_losses().0.len(),
            100,
            "a batch larger than the whole limit is dropped"
        );
        fs::remove_dir_all(&spool.dir).unwrap();
    }

    #[test]
    fn a_batch_left_half_written_by_a_crash_is_removed_when_the_spool_opens() {
        let dir = dir("left-aside");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("1-1-3.json.tmp"), b"[{\"eventId\":").unwrap();
        let spool = Spool::open(dir.clone(), 1 << 20);
        assert!(spool.is_empty());
        assert!(!dir.join("1-1-3.json.tmp").exists());
    }

    #[test]
    fn unreadable_batches_are_deleted_not_retried_forever() {
        let dir = dir("bad");
        Spool::open(dir.clone(), 100_000)
            .write(&batch(1, "good"))
            .unwrap();
        fs::write(dir.join("0000000000000000000-000000-1.json"), b"not json").unwrap();
        let mut spool = Spool::open(dir.clone(), 100_000);
        let (files, oldest) = spool.oldest(1000).unwrap();
        assert_eq!((files, oldest[0]["eventId"].as_str()), (1, Some("good-0")));
        assert_eq!(spool.index.len(), 1);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn small_spooled_batches_are_resent_merged_up_to_the_batch_size() {
        let mut spool = Spool::open(dir("merge"), 10_000_000);
        for i in 0..25 {
            spool.write(&batch(100, &format!("b{i}"))).unwrap();
        }
        let (files, merged) = spool.oldest(1000).unwrap();
        assert_eq!((files, merged.len()), (10, 1000));
        assert_eq!(merged[0]["eventId"], "b0-0");
        assert_eq!(merged[999]["eventId"], "b9-99");
        spool.remove_oldest(files);
        let (files, merged) = spool.oldest(250).unwrap();
        assert_eq!((files, merged[0]["eventId"].as_str()), (2, Some("b10-0")));
        fs::remove_dir_all(&spool.dir).unwrap();
    }

    #[test]
    fn the_index_follows_the_directory_without_listing_it_again() {
        let dir = dir("index");
        let mut spool = Spool::open(dir.clone(), 10_000_000);
        for i in 0..30 {
            spool.write(&batch(3, &format!("b{i}"))).unwrap();
        }
        spool.remove_oldest(12);
        let reopened = Spool::open(dir.clone(), 10_000_000);
        assert_eq!(
            (spool.index.len(), spool.bytes()),
            (reopened.index.len(), reopened.bytes())
        );
        assert_eq!(reopened.index.len(), 18);
        fs::remove_dir_all(&dir).unwrap();
    }
}
