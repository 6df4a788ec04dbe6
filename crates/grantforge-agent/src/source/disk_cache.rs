//! The disk cache (`grantforge.cache.dir`): the last applied snapshot as its exact signed bytes,
//! with what is needed to verify it again and when the live server last confirmed it (its age
//! after a restart, for `staleness`), the signing key pinned on first use, and the refusal of a
//! snapshot of another service type (so that a restart refuses everything too, instead of serving the
//! older kafka snapshot of the cache).
//!
//! Files are written to temporary names, fsynced and renamed, so a crash never leaves a
//! half-written file in place; the pair (snapshot, metadata) is not atomic, but a mismatched pair
//! fails verification and is moved aside, which is safe. Nothing read from here is trusted until
//! its signature verifies; the ETag of the cached snapshot is derived from its bytes, never read
//! from the (unsigned) metadata file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::client::Download;
use crate::config::ConfigError;

const SNAPSHOT: &str = "snapshot.json";
const METADATA: &str = "snapshot.meta.json";
const PINNED_KEY: &str = "signing-key.pin";
const REFUSED_TYPE: &str = "refused-service-type";
const REPLACED_BODIES: &str = "replaced-bodies.json";
const CONFIRMED_AT: &str = "snapshot.confirmed-at";

/// The cache directory of one agent.
#[derive(Clone, Debug)]
pub struct SnapshotCache {
    dir: PathBuf,
    /// The largest snapshot read back: the limit a download is held to.
    max_bytes: u64,
}

impl SnapshotCache {
    /// Creates the directory if needed and checks that Kafka's account can write there; no
    /// snapshot over `max_bytes` is read back.
    pub fn open(dir: &Path, max_bytes: u64) -> Result<SnapshotCache, ConfigError> {
        let key = crate::settings::CACHE_DIR.key;
        fs::create_dir_all(dir).map_err(|e| {
            ConfigError::new(
                key,
                format!(
                    "cannot create {}: {e}; make it a directory Kafka's account can write",
                    dir.display()
                ),
            )
        })?;
        let probe = dir.join(format!(".write-probe-{}", std::process::id()));
        fs::write(&probe, b"probe")
            .and_then(|_| fs::remove_file(&probe))
            .map_err(|e| {
                ConfigError::new(
                    key,
                    format!(
                        "cannot write in {}: {e}; make it writable by Kafka's account",
                        dir.display()
                    ),
                )
            })?;
        Ok(SnapshotCache {
            dir: dir.to_path_buf(),
            max_bytes,
        })
    }

    /// A cache directory to read only (for `explain`): no creation, no write check, and its
    /// snapshot read whatever its size (the operator runs the tool on it on purpose).
    pub fn at(dir: &Path) -> SnapshotCache {
        SnapshotCache {
            dir: dir.to_path_buf(),
            max_bytes: u64::MAX,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the snapshot and its metadata (temporary files, fsync, rename).
    pub fn save(&self, download: &Download, service: &str, policy_version: i64) -> io::Result<()> {
        let metadata = json!({
            "keyId": download.key_id, "signature": download.signature,
            "service": service, "policyVersion": policy_version,
        });
        write_atomically(&self.dir.join(SNAPSHOT), &download.body)?;
        write_atomically(&self.dir.join(METADATA), metadata.to_string().as_bytes())?;
        sync_dir(&self.dir)
    }

    /// The cached download, unverified; `Ok(None)` when there is none, `Err` when it is unreadable
    /// or larger than a download may be.
    pub fn load(&self) -> Result<Option<Download>, String> {
        let snapshot = self.dir.join(SNAPSHOT);
        let metadata = self.dir.join(METADATA);
        if !snapshot.exists() && !metadata.exists() {
            return Ok(None);
        }
        let body = read_at_most(&snapshot, self.max_bytes)?;
        let meta: Value = fs::read(&metadata)
            .map_err(|e| format!("cannot read {}: {e}", metadata.display()))
            .and_then(|bytes| {
                serde_json::from_slice(&bytes)
                    .map_err(|e| format!("{} is not JSON: {e}", metadata.display()))
            })?;
        let field = |name: &str| {
            meta[name]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{} lacks `{name}`", metadata.display()))
        };
        Ok(Some(Download {
            body,
            key_id: field("keyId")?,
            signature: field("signature")?,
        }))
    }

    /// Moves an unusable cache aside (kept for inspection, never trusted again); returns where.
    pub fn move_aside(&self) -> io::Result<PathBuf> {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let aside = self.dir.join(format!("rejected-{stamp}"));
        fs::create_dir_all(&aside)?;
        for name in [SNAPSHOT, METADATA, CONFIRMED_AT] {
            let from = self.dir.join(name);
            if from.exists() {
                fs::rename(&from, aside.join(name))?;
            }
        }
        Ok(aside)
    }

    /// The signing key pinned on first use, if any (Base64 SPKI).
    pub fn pinned_key(&self) -> io::Result<Option<String>> {
        match fs::read_to_string(self.dir.join(PINNED_KEY)) {
            Ok(text) => Ok(Some(text.trim().to_string())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Records that the live server confirmed the cached snapshot at `at` (wall-clock milliseconds
    /// since the epoch, as text). Written after the snapshot, so a crash in between leaves an
    /// older time: the snapshot then looks older than it is, never younger.
    pub fn save_confirmed_at(&self, at: SystemTime) -> io::Result<()> {
        let millis = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        write_atomically(&self.confirmed_at_path(), millis.to_string().as_bytes())
    }

    /// How long before `now` the live server last confirmed the cached snapshot, or why that is
    /// not known (no record, an unreadable one, or a time after `now`: the clock went back).
    pub fn confirmed_age(&self, now: SystemTime) -> Result<Duration, String> {
        let path = self.confirmed_at_path();
        let text = fs::read_to_string(&path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => format!("{} does not exist", path.display()),
            _ => format!("cannot read {}: {e}", path.display()),
        })?;
        let millis: u64 = text.trim().parse().map_err(|_| {
            format!(
                "{} holds `{}`, not milliseconds since the epoch",
                path.display(),
                text.trim()
            )
        })?;
        now.duration_since(UNIX_EPOCH + Duration::from_millis(millis))
            .map_err(|_| {
                format!(
                    "{} records a time after now (the clock went back)",
                    path.display()
                )
            })
    }

    pub fn confirmed_at_path(&self) -> PathBuf {
        self.dir.join(CONFIRMED_AT)
    }

    pub fn pin_key(&self, base64_spki: &str) -> io::Result<()> {
        write_atomically(&self.dir.join(PINNED_KEY), base64_spki.as_bytes())?;
        sync_dir(&self.dir)
    }

    pub fn pinned_key_path(&self) -> PathBuf {
        self.dir.join(PINNED_KEY)
    }

    /// The service type of a refused snapshot, if the last verified snapshot was not of type kafka:
    /// everything stays refused (even after a restart) until a kafka snapshot is installed.
    pub fn refused_service_type(&self) -> io::Result<Option<String>> {
        match fs::read_to_string(self.refused_type_path()) {
            Ok(text) => Ok(Some(text.trim().to_string())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn save_refusal(&self, service_type: &str) -> io::Result<()> {
        write_atomically(&self.refused_type_path(), service_type.as_bytes())?;
        sync_dir(&self.dir)
    }

    pub fn clear_refusal(&self) -> io::Result<()> {
        match fs::remove_file(self.refused_type_path()) {
            Ok(()) => sync_dir(&self.dir),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    pub fn refused_type_path(&self) -> PathBuf {
        self.dir.join(REFUSED_TYPE)
    }

    /// The ETags the applied version served and replaced (`memberships::ReplacedBodies`), kept so
    /// that a restart still refuses a replay of one; `Ok(None)` when there are none.
    pub fn replaced_bodies(&self) -> io::Result<Option<Vec<u8>>> {
        match fs::read(self.replaced_bodies_path()) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn save_replaced_bodies(&self, bytes: &[u8]) -> io::Result<()> {
        write_atomically(&self.replaced_bodies_path(), bytes)?;
        sync_dir(&self.dir)
    }

    pub fn replaced_bodies_path(&self) -> PathBuf {
        self.dir.join(REPLACED_BODIES)
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it and renames it into place: after a
/// crash `path` holds the old bytes or the new ones, never a part.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The bytes of `path`, refused when there are more than `max_bytes` of them (without reading
/// more than one byte past the limit).
fn read_at_most(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    let unreadable = |e: io::Error| format!("cannot read {}: {e}", path.display());
    let mut body = Vec::new();
    fs::File::open(path)
        .map_err(unreadable)?
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(unreadable)?;
    if body.len() as u64 > max_bytes {
        return Err(format!(
            "{} is larger than {} ({max_bytes} bytes)",
            path.display(),
            crate::settings::SNAPSHOT_MAX_BYTES.key
        ));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "gf-cache-{name}-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn saves_loads_and_moves_aside() {
        let dir = temp_dir("roundtrip");
        let cache = SnapshotCache::open(&dir, 1024).unwrap();
        assert_eq!(cache.load().unwrap(), None);
        let download = Download {
            body: b"{}".to_vec(),
            key_id: "k".into(),
            signature: "s".into(),
        };
        cache.save(&download, "svc", 3).unwrap();
        assert_eq!(cache.load().unwrap(), Some(download));
        let aside = cache.move_aside().unwrap();
        assert!(aside.join(SNAPSHOT).exists());
        assert_eq!(cache.load().unwrap(), None);
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("tmp"))
            .collect();
        assert!(leftovers.is_empty());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_last_confirmation_is_recorded_and_a_missing_garbled_or_future_one_is_unknown() {
        let dir = temp_dir("confirmed");
        let cache = SnapshotCache::open(&dir, 1024).unwrap();
        let now = SystemTime::now();
        assert!(cache
            .confirmed_age(now)
            .unwrap_err()
            .contains("does not exist"));
        cache
            .save_confirmed_at(now - Duration::from_secs(90))
            .unwrap();
        let age = cache.confirmed_age(now).unwrap();
        assert!(
            age >= Duration::from_secs(90) && age < Duration::from_secs(91),
            "{age:?}"
        );
        assert!(cache
            .confirmed_age(now - Duration::from_secs(91))
            .unwrap_err()
            .contains("after now"));
        fs::write(cache.confirmed_at_path(), "yesterday").unwrap();
        assert!(cache
            .confirmed_age(now)
            .unwrap_err()
            .contains("`yesterday`"));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_cached_snapshot_over_the_download_limit_is_an_error_naming_it() {
        let dir = temp_dir("over-limit");
        let cache = SnapshotCache::open(&dir, 1024).unwrap();
        let download = Download {
            body: vec![b' '; 2048],
            key_id: "k".into(),
            signature: "s".into(),
        };
        cache.save(&download, "svc", 3).unwrap();
        let error = cache.load().unwrap_err();
        assert!(
            error.contains("is larger than grantforge.snapshot.max.bytes (1024 bytes)"),
            "{error}"
        );
        let at_the_limit = SnapshotCache::open(&dir, 2048).unwrap();
        assert_eq!(at_the_limit.load().unwrap(), Some(download));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_half_written_pair_is_an_error_not_a_snapshot() {
        let dir = temp_dir("half");
        let cache = SnapshotCache::open(&dir, 1024).unwrap();
        fs::write(dir.join(SNAPSHOT), b"{}").unwrap();
        assert!(cache.load().is_err());
        fs::write(dir.join(METADATA), b"{\"etag\":1}").unwrap();
        assert!(cache.load().is_err());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn pins_a_key() {
        let dir = temp_dir("pin");
        let cache = SnapshotCache::open(&dir, 1024).unwrap();
        assert_eq!(cache.pinned_key().unwrap(), None);
        cache.pin_key("AAAA").unwrap();
        assert_eq!(cache.pinned_key().unwrap().as_deref(), Some("AAAA"));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_etag_of_the_metadata_file_is_never_read() {
        let dir = temp_dir("etag");
        let cache = SnapshotCache::open(&dir, 1024).unwrap();
        let download = Download {
            body: b"{}".to_vec(),
            key_id: "k".into(),
            signature: "s".into(),
        };
        cache.save(&download, "svc", 3).unwrap();
        let meta: Value = serde_json::from_slice(&fs::read(dir.join(METADATA)).unwrap()).unwrap();
        assert!(
            meta.get("etag").is_none(),
            "no ETag is written: it is derived from the body"
        );
        fs::write(
            dir.join(METADATA),
            br#"{"etag":"\"tampered\"","keyId":"k","signature":"s"}"#,
        )
        .unwrap();
        assert_eq!(
            cache.load().unwrap(),
            Some(download),
            "an ETag written by someone else changes nothing"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn records_and_clears_a_refused_service_type() {
        let dir = temp_dir("refusal");
        let cache = SnapshotCache::open(&dir, 1024).unwrap();
        assert_eq!(cache.refused_service_type().unwrap(), None);
        cache.save_refusal("hive").unwrap();
        assert_eq!(
            cache.refused_service_type().unwrap().as_deref(),
            Some("hive")
        );
        cache.move_aside().unwrap();
        assert_eq!(
            cache.refused_service_type().unwrap().as_deref(),
            Some("hive"),
            "moving a snapshot aside keeps the refusal"
        );
        cache.clear_refusal().unwrap();
        cache.clear_refusal().unwrap();
        assert_eq!(cache.refused_service_type().unwrap(), None);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_unwritable_directory_names_the_key() {
        // Below a regular file no directory can be made, even by root (unlike a read-only mode or
        // a system path such as /proc).
        let file = std::env::temp_dir().join(format!(
            "gf-cache-not-a-dir-{}-{:?}",
            std::process::id(),
            std::time::Instant::now()
        ));
        fs::write(&file, b"").unwrap();
        let err = SnapshotCache::open(&file.join("cache"), 1024).unwrap_err();
        fs::remove_file(&file).unwrap();
        assert_eq!(err.key, "grantforge.cache.dir");
    }
}
