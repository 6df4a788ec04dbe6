//! Where the policies come from: a snapshot [`file`] (offline mode), or a GrantForge [`server`]
//! (server mode) through the protocol's client (`crate::client`), with snapshots verified by the trusted
//! signing key (`crate::trust`) and kept in a [`disk_cache`] for restarts while the server is away. Both modes
//! are a [`Source`]: the agent's thread runs either without knowing which.

use std::sync::Arc;
use std::time::Duration;

use grantforge_kafka::KafkaPolicies;

use crate::audit::events::AccessEvent;
use crate::metrics::Observed;

pub(crate) mod break_glass;
pub(crate) mod disk_cache;
pub(crate) mod file;
pub(crate) mod memberships;
pub(crate) mod routed;
pub(crate) mod server;

/// How long `close()` waits for the agent's final audit delivery; a source's last delivery is
/// bounded by it.
pub const CLOSE_DEADLINE: Duration = Duration::from_secs(5);

/// The side of the agent a source sees: it puts policies in force or refuses everything, and
/// reads and records how they stand (through [`Observed`]). The agent implements it, so no source
/// holds or names the agent.
pub(crate) trait Holder: Observed {
    /// Puts a snapshot in force; `from` says where it came from, for the log.
    fn apply(&self, policies: KafkaPolicies, from: &str);
    /// Refuses everything but super users: the server sent a snapshot of another service type.
    fn refuse_everything(&self, service_type: &str);
    /// The snapshot in force, if any.
    fn policies(&self) -> Option<Arc<KafkaPolicies>>;
    /// Actions refused because no usable snapshot was in force, since start.
    fn refused_without_snapshot(&self) -> u64;
}

/// What keeps the policies current and takes the audit, owned by the agent's thread.
pub(crate) trait Source: Send {
    /// Puts in force what is there before any round, without the network: the policy file read
    /// when the source was opened (offline), or the disk cache if it verifies (server mode).
    fn start(&mut self, agent: &dyn Holder);

    /// How long after the thread starts the first round is due.
    fn first_round_after(&self) -> Duration;

    /// One round of keeping the policies current; returns when the next is due.
    fn round(&mut self, agent: &dyn Holder) -> Duration;

    /// When the next round is due after a round that failed (panicked).
    fn after_a_failed_round(&self) -> Duration;

    /// Hands the access events that are due on: to the log `grantforge.audit` (offline), or to the
    /// server (spooled while it is away). `retry_spool`: time to resend what is spooled; `closing`:
    /// the agent's last delivery.
    fn hand_on(&mut self, events: &[AccessEvent], retry_spool: bool, closing: bool);

    /// Whether events wait to be handed on at the next tick (the thread does not sleep then).
    fn has_backlog(&self) -> bool {
        false
    }

    /// Where `close()` puts the audit itself when the agent's thread is held up past the close
    /// deadline (by a server that does not answer): a writer of its own, usable from the closing
    /// thread beside this one. `None` when the thread hands events on without waiting for anyone.
    fn audit_at_close(&self) -> Option<AuditAtClose> {
        None
    }
}

/// Keeps access events from the closing thread: written to the audit spool, or counted dropped,
/// with those of the delivery the agent's thread holds in memory; returns the accesses of the
/// latter.
pub(crate) type AuditAtClose = Box<dyn Fn(&[AccessEvent]) -> u64 + Send + Sync>;

/// Whether a verified snapshot of `next` (service, policy version) may follow the one applied: the
/// same service, and no rollback. Server mode and a signed policy file hold snapshots to this one
/// rule; the reason says which part failed.
pub(crate) fn may_follow(applied: (&str, i64), next: (&str, i64)) -> Result<(), String> {
    let ((service, version), (next_service, next_version)) = (applied, next);
    if next_service != service {
        return Err(format!(
            "it is of service `{next_service}`, but this agent serves `{service}`"
        ));
    }
    if next_version < version {
        return Err(format!(
            "its policy version {next_version} is older than the applied {version} (no rollback)"
        ));
    }
    Ok(())
}
