//! Server mode: keeps the agent's policies current from a GrantForge server, and never applies
//! anything it has not verified.
//!
//! Each round: heartbeat; when nothing is applied or the server's `policyVersion` differs,
//! a conditional download; then, before anything is used, the checks of `docs/protocol.md`:
//! signature of the exact bytes under the trusted key, format 1, `serviceType` = kafka (otherwise
//! the agent refuses everything), the same service, no rollback. Only then the snapshot is applied
//! and written to the disk cache. On start the disk cache is verified the same way, so a broker
//! starts from it when the server is away. Failures back off with jitter and are logged once per
//! distinct problem, not once per round.

use std::sync::Arc;
use std::time::{Duration, Instant as Clock};

use grantforge_engine::{Instant, Snapshot};
use grantforge_kafka::KafkaPolicies;
use serde_json::{json, Value};

use crate::agent::Agent;
use crate::cache::{Download, SnapshotCache};
use crate::client::{CallError, PolicyAnswer, ServerClient};
use crate::config::{AgentConfig, ConfigError, ServerSettings};
use crate::shipper::{DeliveryStats, Shipper};
use crate::trust::SigningKey;

/// What was applied last, to compare the next snapshot with.
#[derive(Clone, Debug)]
struct Applied {
    service: String,
    version: i64,
    etag: String,
    at: Clock,
}

pub struct ServerSync {
    settings: ServerSettings,
    client: ServerClient,
    cache: SnapshotCache,
    refresh_interval: Duration,
    /// The key snapshots must be signed with: configured, pinned on first use, or not yet known.
    trusted: Option<SigningKey>,
    applied: Option<Applied>,
    failures: u32,
    shipper: Shipper,
    /// The problem logged last: the same problem is not logged again until something changes.
    last_problem: Option<String>,
}

impl ServerSync {
    /// Validates what can be validated without the network, and opens the disk cache.
    pub fn new(settings: ServerSettings, config: &AgentConfig, delivery: Arc<DeliveryStats>) -> Result<ServerSync, ConfigError> {
        let client = ServerClient::new(&settings, config.connect_timeout, config.read_timeout, config.snapshot_max_bytes)?;
        let cache = SnapshotCache::open(&settings.cache_dir)?;
        let trusted = match &settings.signing_key {
            Some(key) => Some(key.clone()),
            None => match cache.pinned_key() {
                Ok(Some(text)) => Some(SigningKey::from_base64(&text).map_err(|e| {
                    ConfigError::new(
                        "grantforge.cache.dir",
                        format!("the pinned key {} is {e}; remove it or set grantforge.signing.key.file", cache.pinned_key_path().display()),
                    )
                })?),
                Ok(None) => None,
                Err(e) => {
                    return Err(ConfigError::new("grantforge.cache.dir", format!("cannot read {}: {e}", cache.pinned_key_path().display())))
                }
            },
        };
        warn_if_token_readable_by_others(&settings);
        let batch_size = usize::try_from(config.audit_batch_size).unwrap_or(500);
        let shipper = Shipper::new(&settings.instance, batch_size, cache.dir().join("audit-spool"), config.audit_spool_limit_bytes, delivery);
        Ok(ServerSync {
            shipper,
            settings,
            client,
            cache,
            refresh_interval: config.refresh_interval,
            trusted,
            applied: None,
            failures: 0,
            last_problem: None,
        })
    }

    /// Applies the disk cache if it verifies; an unusable cache is moved aside and logged.
    pub fn load_cache(&mut self, agent: &Agent) {
        let download = match self.cache.load() {
            Ok(Some(download)) => download,
            Ok(None) => return,
            Err(e) => return self.reject_cache(&e),
        };
        if let Err(reason) = self.accept(download, agent, false) {
            self.reject_cache(&reason);
        }
    }

    fn reject_cache(&mut self, reason: &str) {
        match self.cache.move_aside() {
            Ok(aside) => tracing::warn!("the cached snapshot in {} is not used: {reason}; moved aside to {}", self.cache.dir().display(), aside.display()),
            Err(e) => tracing::warn!("the cached snapshot in {} is not used: {reason}; moving it aside failed: {e}", self.cache.dir().display()),
        }
    }

    /// One round with the server; returns when to come back.
    pub fn refresh(&mut self, agent: &Agent) -> Duration {
        let heartbeat = match self.client.heartbeat(&self.heartbeat_body(agent)) {
            Ok(heartbeat) => heartbeat,
            Err(e) => return self.failed(agent, &e),
        };
        let stale = self.applied.as_ref().is_none_or(|a| a.version != heartbeat.policy_version);
        if stale {
            let etag = self.applied.as_ref().map(|a| a.etag.clone());
            match self.client.policies(etag.as_deref()) {
                Ok(PolicyAnswer::Unchanged) => {}
                Ok(PolicyAnswer::Download(download)) => {
                    if let Err(reason) = self.accept(download, agent, true) {
                        let kept = self.applied.as_ref().map_or("no snapshot".to_string(), |a| format!("policy version {}", a.version));
                        self.problem(format!("a snapshot from {} was refused: {reason}; {kept} stays in force", self.settings.url), true);
                        return self.back_off();
                    }
                }
                Err(e) => return self.failed(agent, &e),
            }
        }
        self.recovered();
        let seconds = heartbeat.refresh_seconds.filter(|s| *s > 0).and_then(|s| u64::try_from(s).ok());
        seconds.map_or(self.refresh_interval, Duration::from_secs)
    }

    /// Verifies, checks and applies one download (from the server or the disk cache).
    fn accept(&mut self, download: Download, agent: &Agent, from_server: bool) -> Result<(), String> {
        let key = self.key_for(&download.key_id, from_server)?;
        if !key.verifies(&download.body, &download.signature) {
            return Err(format!("its signature does not verify under the signing key {}", key.key_id()));
        }
        let snapshot = Snapshot::parse(&download.body).map_err(|e| e.to_string())?;
        if snapshot.service_type != grantforge_kafka::SERVICE_TYPE {
            agent.refuse_everything(&snapshot.service_type);
            return Err(format!("it is of service type `{}`, not kafka", snapshot.service_type));
        }
        if let Some(applied) = &self.applied {
            if snapshot.service != applied.service {
                return Err(format!("it is of service `{}`, but this agent serves `{}`", snapshot.service, applied.service));
            }
            if snapshot.policy_version < applied.version {
                return Err(format!("its policy version {} is older than the applied {} (no rollback)", snapshot.policy_version, applied.version));
            }
            if snapshot.policy_version == applied.version && download.etag != applied.etag {
                return Err(format!("it has the applied policy version {} but other content", applied.version));
            }
        }
        let policies = KafkaPolicies::from_snapshot(&snapshot, Instant::now()).map_err(|e| e.to_string())?;
        let origin = if from_server { self.settings.url.clone() } else { format!("the disk cache {}", self.cache.dir().display()) };
        agent.apply(policies, &origin);
        if from_server {
            if let Err(e) = self.cache.save(&download, &snapshot.service, snapshot.policy_version) {
                tracing::warn!("cannot write the disk cache {}: {e}; the snapshot is applied but a restart without the server will not have it", self.cache.dir().display());
            }
        }
        self.applied = Some(Applied { service: snapshot.service, version: snapshot.policy_version, etag: download.etag, at: Clock::now() });
        Ok(())
    }

    /// The key a snapshot signed by `key_id` must verify under.
    fn key_for(&mut self, key_id: &str, may_fetch: bool) -> Result<SigningKey, String> {
        if let Some(trusted) = &self.trusted {
            if trusted.key_id() == key_id {
                return Ok(trusted.clone());
            }
            return Err(match &self.settings.signing_key {
                Some(_) => format!("it is signed by key {key_id}, but grantforge.signing.key.file pins key {}", trusted.key_id()),
                None => format!(
                    "it is signed by key {key_id}, but key {} was pinned on first use in {}; if the server's key really changed, remove that file or set grantforge.signing.key.file",
                    trusted.key_id(),
                    self.cache.pinned_key_path().display()
                ),
            });
        }
        if !may_fetch {
            return Err("no signing key is trusted yet to verify it (set grantforge.signing.key.file)".to_string());
        }
        let published = self.client.signing_key().map_err(|e| format!("the signing key could not be fetched: {e}"))?;
        let key = SigningKey::from_base64(&published).map_err(|e| format!("the server's signing key is {e}"))?;
        if key.key_id() != key_id {
            return Err(format!("it is signed by key {key_id}, but the server publishes key {}", key.key_id()));
        }
        if let Err(e) = self.cache.pin_key(&published) {
            return Err(format!("the signing key could not be pinned in {}: {e}", self.cache.pinned_key_path().display()));
        }
        tracing::warn!(
            "trusting the GrantForge server's signing key {} on first use and pinning it in {}; pin it explicitly with grantforge.signing.key.file",
            key.key_id(),
            self.cache.pinned_key_path().display()
        );
        self.trusted = Some(key.clone());
        Ok(key)
    }

    /// Delivers access events (and what the spool holds) unless the server is known to be away,
    /// in which case they are spooled.
    pub fn ship(&mut self, events: &[Value]) {
        self.shipper.ship(&self.client, events, self.failures == 0);
    }

    fn heartbeat_body(&self, agent: &Agent) -> Value {
        json!({
            "instance": self.settings.instance,
            "host": self.settings.host,
            "agentVersion": env!("CARGO_PKG_VERSION"),
            "appliedPolicyVersion": self.applied.as_ref().map(|a| a.version),
            "health": {
                "snapshotAgeSeconds": self.applied.as_ref().map(|a| a.at.elapsed().as_secs()),
                "queuedEvents": agent.queued_audit_groups(),
                "spooledBytes": agent.delivery().spooled_bytes.load(std::sync::atomic::Ordering::Relaxed),
                "droppedEvents": agent.dropped_audit_events(),
                "lastError": self.last_problem,
            },
        })
    }

    fn failed(&mut self, agent: &Agent, error: &CallError) -> Duration {
        agent.metrics().heartbeat_failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let kept = self.applied.as_ref().map_or("no snapshot yet: every request but the super users' is refused".to_string(), |a| format!("policy version {} stays in force", a.version));
        self.problem(format!("GrantForge server {}: {error}; {kept}", self.settings.url), matches!(error, CallError::Status { status: 401 | 404 | 409, .. }));
        *agent.metrics().last_error.lock() = self.last_problem.clone();
        self.back_off()
    }

    /// Logs a problem once until it changes or the server recovers.
    fn problem(&mut self, message: String, error_level: bool) {
        if self.last_problem.as_deref() != Some(message.as_str()) {
            if error_level {
                tracing::error!("{message}");
            } else {
                tracing::warn!("{message}");
            }
            self.last_problem = Some(message);
        }
    }

    fn recovered(&mut self) {
        if self.failures > 0 || self.last_problem.is_some() {
            tracing::info!("GrantForge server {} answers again", self.settings.url);
        }
        self.failures = 0;
        self.last_problem = None;
    }

    /// 1 s, 2 s, 4 s … up to the refresh interval, each ±20 % so a fleet does not retry in step.
    fn back_off(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let base = Duration::from_secs(1).saturating_mul(1u32 << self.failures.min(16).saturating_sub(1));
        jitter(base.min(self.refresh_interval))
    }
}

fn jitter(delay: Duration) -> Duration {
    let mut byte = [0u8; 1];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut byte);
    let factor = 0.8 + 0.4 * f64::from(byte[0]) / 255.0;
    delay.mul_f64(factor)
}

#[cfg(unix)]
fn warn_if_token_readable_by_others(settings: &ServerSettings) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(metadata) = std::fs::metadata(&settings.token_file) {
        if metadata.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "grantforge.token.file {} can be read by other accounts; make it readable by Kafka's account only (chmod 600)",
                settings.token_file.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_token_readable_by_others(_settings: &ServerSettings) {}
