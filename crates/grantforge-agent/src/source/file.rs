//! Offline mode: policies from a local snapshot file, reloaded when it changes.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use grantforge_engine::Instant;
use grantforge_kafka::KafkaPolicies;

use crate::audit::events::AccessEvent;
use crate::audit::sinks::write_log;
use crate::config::{host_name, unreadable, AgentConfig, AuditLogFormat, ConfigError};
use crate::settings;
use crate::source::{may_follow, Holder, Source};
use crate::trust::SigningKey;

const POLICY_FILE: &str = settings::POLICY_FILE.key;
const SNAPSHOT_MAX_BYTES: &str = settings::SNAPSHOT_MAX_BYTES.key;

/// Offline mode's [`Source`]: the policy file, read at start (a bad file stops the broker there)
/// and again whenever it (or its signature) changes; the audit goes to the log.
pub struct OfflineSource {
    path: PathBuf,
    key: Option<SigningKey>,
    max_bytes: u64,
    poll_interval: Duration,
    last_seen: WatchStamp,
    /// A signed file's highest version applied, kept across restarts.
    mark: Option<HighWaterMark>,
    /// The file as read at start, until [`Source::start`] puts it in force.
    initial: Option<KafkaPolicies>,
    /// How the audit log writes each event, and the agent's instance the records name.
    audit_format: AuditLogFormat,
    instance: String,
}

impl OfflineSource {
    /// Reads the policy file now, so that a bad file stops the broker at start. The file's stamp
    /// is taken before it is read, so a change in between is seen by the first round.
    pub fn open(
        path: &Path,
        key: Option<SigningKey>,
        config: &AgentConfig,
    ) -> Result<OfflineSource, ConfigError> {
        let last_seen = watch_stamp(path);
        let mark = match (&key, &config.cache_dir) {
            (Some(_), Some(dir)) => Some(HighWaterMark::open(dir)?),
            _ => None,
        };
        let policies = load_policy_file(path, key.as_ref(), config.snapshot_max_bytes)?;
        if let Some(mark) = &mark {
            above_high_water(mark, &policies, path)?;
            record_high_water(mark, &policies);
        }
        Ok(OfflineSource {
            path: path.to_path_buf(),
            key,
            max_bytes: config.snapshot_max_bytes,
            poll_interval: config.policy_file_poll_interval,
            last_seen,
            mark,
            initial: Some(policies),
            audit_format: config.audit_log_format,
            instance: config.instance.clone().unwrap_or_else(host_name),
        })
    }

    /// The changed file, if it loads and (signed) may follow the version in force.
    fn load_changed(&self, agent: &dyn Holder) -> Result<KafkaPolicies, ConfigError> {
        let policies = load_policy_file(&self.path, self.key.as_ref(), self.max_bytes)?;
        // A signed file is held to what server mode checks of a download: the same service, no
        // rollback (an old signed file copied back in place is not a policy change). The version
        // in force is checked against, not the recorded mark: it is never lower.
        match (&self.key, agent.policies()) {
            (Some(_), Some(applied)) => {
                follows_signed(&applied, &policies, &self.path)?;
                Ok(policies)
            }
            _ => Ok(policies),
        }
    }
}

impl Source for OfflineSource {
    fn start(&mut self, agent: &dyn Holder) {
        if let Some(policies) = self.initial.take() {
            agent.apply(policies, &self.path.display().to_string());
        }
    }

    fn first_round_after(&self) -> Duration {
        self.poll_interval
    }

    /// Applies a changed policy file; a bad version is logged once and the last good snapshot
    /// stays in force.
    fn round(&mut self, agent: &dyn Holder) -> Duration {
        let now_seen = watch_stamp(&self.path);
        if now_seen == self.last_seen {
            return self.poll_interval;
        }
        self.last_seen = now_seen;
        match self.load_changed(agent) {
            Ok(policies) => {
                if let Some(mark) = &self.mark {
                    record_high_water(mark, &policies);
                }
                // Cleared first: whoever sees the new version in force sees no old error.
                *agent.metrics().last_error.lock() = None;
                agent.apply(policies, &self.path.display().to_string());
            }
            Err(e) => {
                let kept = agent
                    .policies()
                    .map_or("none".to_string(), |p| p.policy_version.to_string());
                tracing::error!("{e}; policy version {kept} stays in force");
                // The operator's metric of what keeps the policies from being current, as in server mode.
                *agent.metrics().last_error.lock() = Some(e.to_string());
            }
        }
        self.poll_interval
    }

    fn after_a_failed_round(&self) -> Duration {
        self.poll_interval
    }

    fn hand_on(&mut self, events: &[AccessEvent], _retry_spool: bool, _closing: bool) {
        write_log(events, self.audit_format, &self.instance);
    }
}

/// Whether a signed policy file's version at start may follow the highest one an earlier start
/// applied (`mark`).
fn above_high_water(
    mark: &HighWaterMark,
    policies: &KafkaPolicies,
    path: &Path,
) -> Result<(), ConfigError> {
    if let Some((service, version)) = mark.read()? {
        may_follow(
            (&service, version),
            (&policies.service, policies.policy_version),
        )
        .map_err(|why| {
            ConfigError::new(
                POLICY_FILE,
                format!(
                    "{} is signed but refused: {why}; the highest version applied before, also by an earlier start, is recorded in {}",
                    path.display(),
                    mark.path().display()
                ),
            )
        })?;
    }
    Ok(())
}

/// Records the version about to be applied as the highest; if that fails, the file is still
/// applied (it is newer), and the ERROR says what protection is missing.
fn record_high_water(mark: &HighWaterMark, policies: &KafkaPolicies) {
    if let Err(e) = mark.record(&policies.service, policies.policy_version) {
        tracing::error!(
            "cannot record policy version {} in {}: {e}; after a restart an older signed policy file would not be refused. Make {} writable by Kafka's account",
            policies.policy_version,
            mark.path().display(),
            settings::CACHE_DIR.key
        );
    }
}

/// Whether a signed policy file's new version may follow the applied one (as a download must:
/// [`may_follow`]).
fn follows_signed(
    applied: &KafkaPolicies,
    next: &KafkaPolicies,
    path: &Path,
) -> Result<(), ConfigError> {
    may_follow(
        (&applied.service, applied.policy_version),
        (&next.service, next.policy_version),
    )
    .map_err(|why| {
        ConfigError::new(
            POLICY_FILE,
            format!("{} is signed but refused: {why}", path.display()),
        )
    })
}

/// What identifies one version of the file on disk, so a change is noticed without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    modified: Option<SystemTime>,
    len: u64,
}

/// The stamps of the policy file and of its signature file: a change of either is a change.
pub type WatchStamp = (Option<FileStamp>, Option<FileStamp>);

pub fn watch_stamp(path: &Path) -> WatchStamp {
    (stamp(path), stamp(&signature_file(path)))
}

fn stamp(path: &Path) -> Option<FileStamp> {
    let metadata = fs::metadata(path).ok()?;
    Some(FileStamp {
        modified: metadata.modified().ok(),
        len: metadata.len(),
    })
}

/// Reads, verifies (when a signing key is configured) and compiles the snapshot file. The error
/// names the key, the file and what to do.
pub fn load_policy_file(
    path: &Path,
    key: Option<&SigningKey>,
    max_bytes: u64,
) -> Result<KafkaPolicies, ConfigError> {
    let bytes = read_policy_file(path, max_bytes, POLICY_FILE)?;
    if let Some(key) = key {
        verify_policy_file(path, &bytes, key)?;
    }
    KafkaPolicies::load(&bytes, Instant::now()).map_err(|e| {
        ConfigError::new(
            POLICY_FILE,
            format!("{} is not a usable GrantForge snapshot: {e}; fix the file (docs/snapshot-format.md shows the format with an example)", path.display()),
        )
    })
}

/// The signature of a policy file sits beside it, `<file>.sig`: the Base64 Ed25519 signature the
/// server sent in `X-GrantForge-Signature` for exactly these bytes.
pub fn signature_file(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".sig");
    name.into()
}

fn verify_policy_file(path: &Path, bytes: &[u8], key: &SigningKey) -> Result<(), ConfigError> {
    let sig_file = signature_file(path);
    let signature = fs::read_to_string(&sig_file).map_err(|e| {
        ConfigError::new(
            settings::SIGNING_KEY_FILE.key,
            format!("is set, so {} needs its signature in {}: {e}; save the X-GrantForge-Signature of the download there", path.display(), sig_file.display()),
        )
    })?;
    if !key.verifies(bytes, &signature) {
        return Err(ConfigError::new(
            POLICY_FILE,
            format!(
                "{} does not verify under the signing key {} with {}; it is not used",
                path.display(),
                key.key_id(),
                sig_file.display()
            ),
        ));
    }
    Ok(())
}

/// The exact bytes of the snapshot file, at most `max_bytes` of them.
pub fn read_policy_file(
    path: &Path,
    max_bytes: u64,
    named_by: &str,
) -> Result<Vec<u8>, ConfigError> {
    let shown = path.display();
    let point = format!(
        "point {named_by} at a GrantForge snapshot file (format 1, docs/snapshot-format.md)"
    );
    let metadata = fs::metadata(path)
        .map_err(|e| ConfigError::new(named_by, format!("{}; {point}", unreadable(&shown, &e))))?;
    if !metadata.is_file() {
        return Err(ConfigError::new(
            named_by,
            format!("{shown} is not a regular file; {point}"),
        ));
    }
    if metadata.len() > max_bytes {
        return Err(ConfigError::new(
            named_by,
            format!("{shown} has {} bytes, more than {SNAPSHOT_MAX_BYTES} ({max_bytes}); raise that limit", metadata.len()),
        ));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    fs::File::open(path)
        .and_then(|file| {
            file.take(max_bytes.saturating_add(1))
                .read_to_end(&mut bytes)
        })
        .map_err(|e| {
            ConfigError::new(
                named_by,
                format!(
                    "{}; make it readable by Kafka's account",
                    unreadable(&shown, &e)
                ),
            )
        })?;
    if bytes.len() as u64 > max_bytes {
        return Err(ConfigError::new(named_by, format!("{shown} grew past {SNAPSHOT_MAX_BYTES} ({max_bytes}) while it was read; raise that limit")));
    }
    Ok(bytes)
}

/// The highest signed policy file applied (its service and policy version), kept in the cache
/// directory so that an older signed file is refused after a restart as well as within one
/// process: offline mode's counterpart of the disk cache that holds server mode to the same rule.
/// Like that cache, it trusts the owner of the directory.
pub struct HighWaterMark {
    path: PathBuf,
}

impl HighWaterMark {
    /// The file's name in the cache directory.
    pub const FILE: &'static str = "policy-file-applied";

    pub fn open(dir: &Path) -> Result<HighWaterMark, ConfigError> {
        fs::create_dir_all(dir).map_err(|e| {
            ConfigError::new(
                settings::CACHE_DIR.key,
                format!(
                    "cannot create {}: {e}; name a directory Kafka's account can write",
                    dir.display()
                ),
            )
        })?;
        Ok(HighWaterMark {
            path: dir.join(Self::FILE),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The service and policy version recorded, if any. A record that cannot be read is an error,
    /// never taken as none: that would reopen the door to a rollback.
    pub fn read(&self) -> Result<Option<(String, i64)>, ConfigError> {
        let shown = self.path.display();
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ConfigError::new(
                    settings::CACHE_DIR.key,
                    format!("cannot read {shown}: {e}; make it readable by Kafka's account"),
                ))
            }
        };
        let record: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        match (record["service"].as_str(), record["policyVersion"].as_i64()) {
            (Some(service), Some(version)) => Ok(Some((service.to_string(), version))),
            _ => Err(ConfigError::new(
                settings::CACHE_DIR.key,
                format!("{shown} is not the agent's record of the highest signed policy version applied; remove it to accept {POLICY_FILE} as it is"),
            )),
        }
    }

    /// Records `service` at `version`, whole or not at all: a record cut by a crash would stop the
    /// broker at its next start.
    pub fn record(&self, service: &str, version: i64) -> io::Result<()> {
        let record = serde_json::json!({"service": service, "policyVersion": version});
        super::disk_cache::write_atomically(&self.path, record.to_string().as_bytes())
    }
}
