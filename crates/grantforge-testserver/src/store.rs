//! The state directory: what survives a restart (token, signing key, policy version, accepted
//! access events) and the policies file's signature, as [`files`] names them.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::SystemTime;

use ring::rand::SystemRandom;
use serde_json::Value;

use crate::keys::{self, SigningKey};
use crate::{files, Error};

pub(crate) fn write_atomic(path: &Path, bytes: &[u8], private: bool) -> Result<(), Error> {
    let mut tmp_name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let result = (|| -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if private { 0o600 } else { 0o644 });
        }
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    let _ = private;
    result.map_err(|e| Error(format!("cannot write {}: {e}", path.display())))
}

pub(crate) fn load_or_create_token(dir: &Path, rng: &SystemRandom) -> Result<String, Error> {
    let path = dir.join(files::TOKEN);
    match fs::read_to_string(&path) {
        Ok(text) => {
            let token = text.trim().to_string();
            if keys::token_shape_ok(&token) {
                Ok(token)
            } else {
                Err(Error(format!(
                    "{} does not hold a usable token (gfa_ followed by visible ASCII, at most 128 characters); remove it",
                    path.display()
                )))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = keys::new_token(rng)?;
            write_atomic(&path, token.as_bytes(), true)?;
            Ok(token)
        }
        Err(e) => Err(Error(format!("cannot read {}: {e}", path.display()))),
    }
}

pub(crate) fn load_or_create_key(dir: &Path, rng: &SystemRandom) -> Result<SigningKey, Error> {
    let path = dir.join(files::PRIVATE_KEY);
    match fs::read(&path) {
        Ok(der) => SigningKey::from_pkcs8(&der)
            .map_err(|e| Error(format!("{}: {e}; remove it", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let (key, der) = SigningKey::generate(rng)?;
            write_atomic(&path, &der, true)?;
            Ok(key)
        }
        Err(e) => Err(Error(format!("cannot read {}: {e}", path.display()))),
    }
}

pub(crate) fn read_persisted_state(path: &Path) -> Option<(i64, String)> {
    let value: Value = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    Some((
        value.get("policyVersion")?.as_i64()?,
        value.get("contentSha256")?.as_str()?.to_string(),
    ))
}

pub(crate) fn load_events(path: &Path) -> (Vec<Value>, HashSet<String>) {
    let mut events = Vec::new();
    let mut ids = HashSet::new();
    if let Ok(file) = File::open(path) {
        for line in BufReader::new(file).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str::<Value>(&line) {
                if let Some(id) = event.get("eventId").and_then(Value::as_str) {
                    if ids.insert(id.to_string()) {
                        events.push(event);
                    }
                }
            }
        }
    }
    (events, ids)
}

pub(crate) fn file_signature(path: &Path) -> Option<(Option<SystemTime>, u64)> {
    fs::metadata(path)
        .ok()
        .map(|m| (m.modified().ok(), m.len()))
}
