//! Break-glass (`grantforge.break.glass.dir`): a snapshot an operator signed with the pinned key,
//! handed to a running node by the JAR's `break-glass` command while the GrantForge server is
//! lost, in force until the server's next snapshot lifts it.
//!
//! The channel is a directory only Kafka's account (and the operators it trusts) may write: a
//! file-system permission an operator already knows how to secure and audit, where a JMX operation
//! would need JMX opened with authentication on every node. The command writes the snapshot's exact
//! bytes to `<id>.json`, its Base64 signature to `<id>.json.sig`, and last `<id>.request` (the file
//! it came from and who asks). The agent takes a request by renaming it to `<id>.taken` (so the
//! command cannot withdraw it meanwhile), checks the snapshot, and answers in `<id>.result`: a
//! line `applied` or `refused`, then the message, which the command waits for and prints. Requests found when the
//! agent starts were not made to this running node: they are answered refused, never applied.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use grantforge_engine::{Instant, Snapshot};
use grantforge_kafka::{KafkaPolicies, LoadError};
use serde_json::Value;

use crate::config::ConfigError;
use crate::settings::BREAK_GLASS_DIR;
use crate::source::disk_cache::write_atomically;
use crate::trust::SigningKey;

const REQUEST: &str = "request";
const TAKEN: &str = "taken";
const RESULT: &str = "result";

/// A request the agent took: the snapshot, its signature, and who asked for what.
#[derive(Debug)]
pub(crate) struct Request {
    pub id: String,
    pub body: Vec<u8>,
    pub signature: String,
    /// The file the operator named to the command.
    pub file: String,
    /// Who ran the command (account and host, as the command saw them).
    pub by: String,
}

/// The watched directory.
#[derive(Clone, Debug)]
pub(crate) struct BreakGlassDir {
    dir: PathBuf,
    max_bytes: u64,
}

impl BreakGlassDir {
    /// Creates the directory if needed; no snapshot over `max_bytes` is read.
    pub(crate) fn open(dir: &Path, max_bytes: u64) -> Result<BreakGlassDir, ConfigError> {
        fs::create_dir_all(dir).map_err(|e| {
            ConfigError::new(
                BREAK_GLASS_DIR.key,
                format!(
                    "cannot create {}: {e}; make it a directory Kafka's account can write and other accounts cannot",
                    dir.display()
                ),
            )
        })?;
        warn_if_others_may_write(dir);
        Ok(BreakGlassDir {
            dir: dir.to_path_buf(),
            max_bytes,
        })
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes every waiting request, oldest name first: each is read, or answered refused with why
    /// it cannot be read.
    pub(crate) fn take(&self) -> Vec<Request> {
        let mut ids = self.waiting();
        ids.sort();
        ids.into_iter()
            .filter_map(|id| {
                fs::rename(self.path(&id, REQUEST), self.path(&id, TAKEN)).ok()?;
                match self.read(&id) {
                    Ok(request) => Some(request),
                    Err(why) => {
                        tracing::error!(
                            "break-glass request {id} in {} is refused: {why}",
                            self.dir.display()
                        );
                        self.answer(&id, false, &why);
                        None
                    }
                }
            })
            .collect()
    }

    /// Answers every waiting request refused: at start, nothing is applied that was not asked of
    /// this running node.
    pub(crate) fn refuse_waiting(&self, why: &str) {
        for request in self.take() {
            tracing::warn!(
                "break-glass file {} (requested by {}) is refused: {why}",
                request.file,
                request.by
            );
            self.answer(&request.id, false, why);
        }
    }

    /// Writes the answer the command waits for, and removes the request's files.
    pub(crate) fn answer(&self, id: &str, applied: bool, message: &str) {
        let answer = format!(
            "{}\n{message}\n",
            if applied { "applied" } else { "refused" }
        );
        if let Err(e) = write_atomically(&self.path(id, RESULT), answer.as_bytes()) {
            tracing::warn!(
                "cannot write the answer to break-glass request {id} in {}: {e}",
                self.dir.display()
            );
        }
        for name in [
            format!("{id}.json"),
            format!("{id}.json.sig"),
            format!("{id}.{TAKEN}"),
        ] {
            let _ = fs::remove_file(self.dir.join(name));
        }
    }

    fn waiting(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(&format!(".{REQUEST}"))
                    .map(str::to_string)
            })
            .collect()
    }

    fn read(&self, id: &str) -> Result<Request, String> {
        let unreadable =
            |path: PathBuf, e: io::Error| format!("cannot read {}: {e}", path.display());
        let taken = self.path(id, TAKEN);
        let meta: Value = fs::read(&taken)
            .map_err(|e| unreadable(taken.clone(), e))
            .and_then(|bytes| {
                serde_json::from_slice(&bytes)
                    .map_err(|e| format!("{} is not JSON: {e}", taken.display()))
            })?;
        let field = |name: &str| meta[name].as_str().unwrap_or("(not said)").to_string();
        let body_path = self.dir.join(format!("{id}.json"));
        let size = fs::metadata(&body_path)
            .map_err(|e| unreadable(body_path.clone(), e))?
            .len();
        if size > self.max_bytes {
            return Err(format!(
                "{} is larger than {} ({} bytes)",
                body_path.display(),
                crate::settings::SNAPSHOT_MAX_BYTES.key,
                self.max_bytes
            ));
        }
        let sig_path = self.dir.join(format!("{id}.json.sig"));
        Ok(Request {
            id: id.to_string(),
            body: fs::read(&body_path).map_err(|e| unreadable(body_path, e))?,
            signature: fs::read_to_string(&sig_path)
                .map_err(|e| unreadable(sig_path, e))?
                .trim()
                .to_string(),
            file: field("file"),
            by: field("by"),
        })
    }

    fn path(&self, id: &str, kind: &str) -> PathBuf {
        self.dir.join(format!("{id}.{kind}"))
    }
}

/// Whoever may write the directory may hand the node a request (its signature must still verify):
/// a directory every account may write is named in a WARN at start.
#[cfg(unix)]
fn warn_if_others_may_write(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(metadata) = fs::metadata(dir) {
        if metadata.permissions().mode() & 0o002 != 0 {
            tracing::warn!(
                "{} {} can be written by every account; make it writable by Kafka's account and the operators allowed to break the glass only (chmod 700, or 770 with a group of theirs)",
                BREAK_GLASS_DIR.key,
                dir.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_others_may_write(_dir: &Path) {}

/// Checks a break-glass snapshot before it may be applied: signed by the trusted key, of type
/// kafka, every ACCESS policy with a validity that ends and one still to come or running, of the
/// service in force and newer than the version in force (`in_force`). Returns it compiled.
pub(crate) fn check(
    request: &Request,
    key: Option<&SigningKey>,
    in_force: Option<(&str, i64)>,
    now: Instant,
) -> Result<KafkaPolicies, String> {
    let key = key.ok_or(
        "no signing key is pinned or configured to verify it (set grantforge.signing.key.file)",
    )?;
    if !key.verifies(&request.body, &request.signature) {
        return Err(format!(
            "its signature does not verify under the pinned signing key {}: it is signed by another key, or not these bytes",
            key.key_id()
        ));
    }
    let snapshot = Snapshot::parse(&request.body).map_err(|e| e.to_string())?;
    let policies = KafkaPolicies::from_snapshot(&snapshot, now).map_err(|e| match e {
        LoadError::WrongServiceType(t) => format!("it is of service type `{t}`, not kafka"),
        e => e.to_string(),
    })?;
    every_validity_ends(&snapshot, now)?;
    if let Some((service, version)) = in_force {
        super::may_follow(
            (service, version),
            (&policies.service, policies.policy_version),
        )?;
        if policies.policy_version == version {
            return Err(format!(
                "its policy version {version} is the one in force; give it a higher policyVersion, so that it replaces the version in force and the server's next version lifts it"
            ));
        }
    }
    Ok(policies)
}

/// Every ACCESS policy must stop applying on its own, and one must apply now or later: a
/// break-glass snapshot lapses even if nobody lifts it.
fn every_validity_ends(snapshot: &Snapshot, now: Instant) -> Result<(), String> {
    if let Some(policy) = snapshot
        .policies
        .iter()
        .find(|p| p.validity.is_empty() || p.validity.iter().any(|v| v.until.is_none()))
    {
        return Err(format!(
            "policy {} has no validity that ends; give every policy of a break-glass file validity periods with an `until`",
            policy.id
        ));
    }
    let last_end = snapshot
        .policies
        .iter()
        .flat_map(|p| p.validity.iter().filter_map(|v| v.until))
        .max();
    match last_end {
        None => Err("it holds no ACCESS policy".to_string()),
        Some(end) if end <= now => Err(format!(
            "it has expired: every validity period in it has ended, the last at {end}"
        )),
        Some(_) => Ok(()),
    }
}
