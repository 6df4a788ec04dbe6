//! What server mode does when a round fails: the server away (back off, the audit spooled) or a
//! snapshot refused (its own back-off, the audit still delivered); each problem logged once until
//! it changes, and the recovery said once.

use std::time::{Duration, Instant as Clock, SystemTime};

use super::ServerSync;
use crate::client::CallError;
use crate::source::Holder;

/// Why a download did not end with the snapshot in force.
pub(super) enum Trouble {
    /// The server is away or answered with an error: as a failed heartbeat.
    Server(CallError),
    /// The server answered with a snapshot that is refused: the server is there, only its snapshot
    /// is not used.
    Refused(String),
}

impl From<CallError> for Trouble {
    /// An answer the agent cannot use (larger than it takes, cut short, without its signature) is
    /// a snapshot refused: the server answered, so the audit keeps being delivered to it.
    fn from(error: CallError) -> Trouble {
        match error {
            CallError::Invalid(_) => Trouble::Refused(error.to_string()),
            error => Trouble::Server(error),
        }
    }
}

/// 1 s, 2 s, 4 s … up to the refresh interval, each ±20 % so a fleet does not retry in step;
/// `attempts` counts this one.
pub(crate) fn back_off(attempts: u32, refresh_interval: Duration) -> Duration {
    let base =
        Duration::from_secs(1).saturating_mul(1u32 << attempts.clamp(1, 16).saturating_sub(1));
    jitter(base.min(refresh_interval))
}

fn jitter(delay: Duration) -> Duration {
    delay.mul_f64(0.8 + 0.4 * random_fraction())
}

/// A random number in [0, 1].
pub(super) fn random_fraction() -> f64 {
    let mut bytes = [0u8; 2];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes);
    f64::from(u16::from_le_bytes(bytes)) / f64::from(u16::MAX)
}

impl ServerSync {
    pub(super) fn failed(&mut self, agent: &dyn Holder, error: &CallError) -> Duration {
        agent
            .metrics()
            .heartbeat_failures
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let kept = self.applied.as_ref().map_or(
            "no snapshot yet: every request but the super users' is refused".to_string(),
            |a| format!("policy version {} stays in force", a.version),
        );
        self.problem(
            format!("GrantForge server {}: {error}; {kept}", self.settings.url),
            matches!(
                error,
                CallError::Status {
                    status: 401 | 404 | 409,
                    ..
                }
            ),
        );
        *agent.metrics().last_error.lock() = self.last_problem.clone();
        agent.staleness().unconfirmed(false);
        self.failures = self.failures.saturating_add(1);
        back_off(self.failures, self.refresh_interval)
    }

    /// A refused snapshot: logged once, shown as the last refresh error, retried with its own
    /// backoff. The server answered, so the audit keeps being delivered.
    pub(super) fn refused(&mut self, agent: &dyn Holder, reason: &str) -> Duration {
        self.failures = 0;
        let kept = self
            .applied
            .as_ref()
            .map_or("no snapshot".to_string(), |a| {
                format!("policy version {}", a.version)
            });
        self.problem(
            format!(
                "a snapshot from {} was refused: {reason}; {kept} stays in force",
                self.settings.url
            ),
            true,
        );
        *agent.metrics().last_error.lock() = self.last_problem.clone();
        agent.staleness().unconfirmed(true);
        self.refusals = self.refusals.saturating_add(1);
        back_off(self.refusals, self.refresh_interval)
    }

    /// Logs a problem once until it changes or the server recovers.
    pub(super) fn problem(&mut self, message: String, error_level: bool) {
        if self.last_problem.as_deref() != Some(message.as_str()) {
            if error_level {
                tracing::error!("{message}");
            } else {
                tracing::warn!("{message}");
            }
            self.last_problem = Some(message);
        }
    }

    pub(super) fn recovered(&mut self, agent: &dyn Holder) {
        if self.failures > 0 || self.last_problem.is_some() {
            tracing::info!("GrantForge server {} answers again", self.settings.url);
        }
        self.failures = 0;
        self.refusals = 0;
        self.revalidation_refused_at = None;
        self.last_problem = None;
        *agent.metrics().last_error.lock() = None;
        if self.applied.is_some() {
            agent.staleness().confirmed(Clock::now());
            self.record_confirmation();
        }
    }

    /// Writes the time of a confirmation to the cache, for the age of the cached snapshot after a
    /// restart; a failure is logged once (the snapshot then looks older after a restart, never
    /// younger).
    pub(super) fn record_confirmation(&mut self) {
        match self.cache.save_confirmed_at(SystemTime::now()) {
            Ok(()) => self.confirmation_unrecorded = false,
            Err(e) if !self.confirmation_unrecorded => {
                tracing::warn!(
                    "cannot write {}: {e}; after a restart the cached snapshot will look as old as the last confirmation recorded there",
                    self.cache.confirmed_at_path().display()
                );
                self.confirmation_unrecorded = true;
            }
            Err(_) => {}
        }
    }
}
