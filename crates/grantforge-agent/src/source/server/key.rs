//! The key a snapshot must verify under: the configured one, the one pinned on first use, or (over
//! HTTPS, and only once) the server's published key, pinned then.

use super::ServerSync;
use crate::settings::SIGNING_KEY_FILE;
use crate::trust::SigningKey;

impl ServerSync {
    /// The key a snapshot signed by `key_id` must verify under.
    pub(super) fn key_for(&mut self, key_id: &str, may_fetch: bool) -> Result<SigningKey, String> {
        if let Some(trusted) = &self.trusted {
            if trusted.key_id() == key_id {
                return Ok(trusted.clone());
            }
            return Err(match &self.settings.signing_key {
                Some(_) => format!("it is signed by key {key_id}, but {} pins key {}", SIGNING_KEY_FILE.key, trusted.key_id()),
                None => format!(
                    "it is signed by key {key_id}, but key {} was pinned on first use in {}; if the server's key really changed, remove that file and restart the broker, or set {}",
                    trusted.key_id(),
                    self.cache.pinned_key_path().display(),
                    SIGNING_KEY_FILE.key
                ),
            });
        }
        if !may_fetch {
            return Err(format!(
                "no signing key is trusted yet to verify it (set {})",
                SIGNING_KEY_FILE.key
            ));
        }
        if crate::config::is_plain_http(&self.settings.url) {
            return Err(format!(
                "over plain HTTP no signing key is trusted on first use (set {})",
                SIGNING_KEY_FILE.key
            ));
        }
        let published = self
            .client
            .signing_key()
            .map_err(|e| format!("the signing key could not be fetched: {e}"))?;
        let key = SigningKey::from_base64(&published)
            .map_err(|e| format!("the server's signing key is {e}"))?;
        if key.key_id() != key_id {
            return Err(format!(
                "it is signed by key {key_id}, but the server publishes key {}",
                key.key_id()
            ));
        }
        if let Err(e) = self.cache.pin_key(&published) {
            return Err(format!(
                "the signing key could not be pinned in {}: {e}",
                self.cache.pinned_key_path().display()
            ));
        }
        tracing::warn!(
            "trusting the GrantForge server's signing key {} on first use and pinning it in {}; pin it explicitly with {}",
            key.key_id(),
            self.cache.pinned_key_path().display(),
            SIGNING_KEY_FILE.key
        );
        self.trusted = Some(key.clone());
        Ok(key)
    }
}
