//! Offline mode: policies from a local snapshot file, reloaded when it changes.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use grantforge_engine::Instant;
use grantforge_kafka::KafkaPolicies;

use crate::config::ConfigError;
use crate::settings;
use crate::source::trust::SigningKey;

const POLICY_FILE: &str = settings::POLICY_FILE.key;
const SNAPSHOT_MAX_BYTES: &str = settings::SNAPSHOT_MAX_BYTES.key;

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
    let bytes = read_policy_file(path, max_bytes)?;
    if let Some(key) = key {
        verify_policy_file(path, &bytes, key)?;
    }
    KafkaPolicies::load(&bytes, Instant::now()).map_err(|e| {
        ConfigError::new(
            POLICY_FILE,
            format!("{} is not a usable GrantForge snapshot: {e}; fix the file (docs/operations.md shows the format)", path.display()),
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
pub fn read_policy_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, ConfigError> {
    let shown = path.display();
    let metadata = fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ConfigError::new(POLICY_FILE, format!("the file {shown} does not exist; point {POLICY_FILE} at a GrantForge snapshot file (format 1)"))
        } else {
            ConfigError::new(POLICY_FILE, format!("cannot read {shown}: {e}; make it readable by Kafka's account"))
        }
    })?;
    if !metadata.is_file() {
        return Err(ConfigError::new(POLICY_FILE, format!("{shown} is not a regular file; point {POLICY_FILE} at a GrantForge snapshot file (format 1)")));
    }
    if metadata.len() > max_bytes {
        return Err(ConfigError::new(
            POLICY_FILE,
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
                POLICY_FILE,
                format!("cannot read {shown}: {e}; make it readable by Kafka's account"),
            )
        })?;
    if bytes.len() as u64 > max_bytes {
        return Err(ConfigError::new(POLICY_FILE, format!("{shown} grew past {SNAPSHOT_MAX_BYTES} ({max_bytes}) while it was read; raise that limit")));
    }
    Ok(bytes)
}
