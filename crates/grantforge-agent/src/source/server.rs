//! Server mode: keeps the agent's policies current from a GrantForge server, and never applies
//! anything it has not verified.
//!
//! Each round: heartbeat; when nothing is applied, the server's `policyVersion` differs, or a
//! snapshot of another service type is being refused, a download (conditional on the applied
//! snapshot's ETag, except while refusing); then, before anything is used, the checks of
//! `docs/protocol.md`: signature of the exact bytes under the trusted key, format 1, `serviceType` =
//! kafka (otherwise the agent refuses everything, and records it in the cache directory so a restart
//! refuses too), the same service (a rename is named in an ERROR with its fix), no rollback. While
//! the version stays, the snapshot is revalidated every `grantforge.revalidate.interval.ms` (a
//! conditional download): GrantForge changes role holders and group members without moving the
//! version, and a body of the applied version with other content is taken from the live server
//! only, never one replaced at that version before (see `memberships`). Only then the snapshot is
//! applied and written to the disk cache. On start the disk cache is verified the same way, so a
//! broker starts from it when the server is away, as old as the cache records its last
//! confirmation to be. Each round tells `staleness` whether it confirmed the snapshot in force.
//! Failures back off with jitter and are logged once per distinct problem, not once per round.
//!
//! Nothing the server says is trusted beyond its signature: a snapshot's ETag is derived from its
//! verified body, `refreshSeconds` is held within [`server_round_range`], a 304 that contradicts
//! the heartbeat is checked with an unconditional download, and a refused snapshot does not stop
//! the audit, which still reaches a server that answers.

use std::sync::Arc;
use std::time::{Duration, Instant as Clock, SystemTime};

use grantforge_engine::Instant;
use grantforge_kafka::{KafkaPolicies, LoadError};
use serde_json::{json, Value};

use crate::audit::delivery::{DeliveryStats, Shipper, RESEND_BUDGET};
use crate::audit::events::AccessEvent;
use crate::audit::ledger::accesses_in;
use crate::client::{CallError, Download, PolicyAnswer, ServerClient, Timeouts};
use crate::config::{AgentConfig, ConfigError, ServerSettings};
use crate::settings::{self, CACHE_DIR, SIGNING_KEY_FILE, SNAPSHOT_MAX_AGE};
use crate::source::break_glass::BreakGlassDir;
use crate::source::disk_cache::SnapshotCache;
use crate::source::memberships::{Memberships, ReplacedBodies};
use crate::source::{Holder, Source};
use crate::trust::{etag_of, SigningKey};

pub(crate) mod failures;
mod glass;
mod key;
mod succession;

use failures::{back_off, random_fraction, Trouble};
use succession::{replaced_bodies, LastApplied, Succession};

/// The shortest round the server can ask for with `refreshSeconds`.
pub(crate) const SERVER_ROUND_MIN: Duration = Duration::from_secs(1);
/// The longest round the server can ask for is this many times `grantforge.refresh.interval.ms`…
pub(crate) const SERVER_ROUND_FACTOR: u32 = 10;
/// … and never more than an hour.
pub(crate) const SERVER_ROUND_MAX: Duration = Duration::from_secs(3600);

/// The rounds the server's `refreshSeconds` may ask for, given the configured refresh interval:
/// from 1 s to ten times the interval, at most an hour (1 s to 5 minutes with the default 30 s).
pub(crate) fn server_round_range(refresh_interval: Duration) -> (Duration, Duration) {
    let longest = refresh_interval
        .saturating_mul(SERVER_ROUND_FACTOR)
        .clamp(SERVER_ROUND_MIN, SERVER_ROUND_MAX);
    (SERVER_ROUND_MIN, longest)
}

pub struct ServerSync {
    settings: ServerSettings,
    client: ServerClient,
    cache: SnapshotCache,
    refresh_interval: Duration,
    download_jitter: Duration,
    /// How long the snapshot in force goes without a conditional download while the policy
    /// version stays: GrantForge changes memberships without moving the version.
    revalidate_interval: Duration,
    /// The staleness limit (`staleness`): with one, a round is never longer than a third of it.
    max_age: Option<Duration>,
    /// Whether writing the time of a confirmation to the cache failed, so it is logged once.
    confirmation_unrecorded: bool,
    /// Where the JAR's `break-glass` command hands snapshots to this node, if anywhere.
    break_glass_dir: Option<BreakGlassDir>,
    /// The policy version of the break-glass snapshot in force, until the server's lifts it.
    break_glass: Option<i64>,
    /// Bodies of the applied version that were replaced: a replay of one is refused.
    replaced: ReplacedBodies,
    /// When a revalidation's body was last refused: the refusal stands (and the body is not
    /// downloaded again) until the next revalidation an interval later, so a renamed service or
    /// a replaying cache costs one download per interval, not one per round.
    revalidation_refused_at: Option<Clock>,
    /// Whether the download of a changed version was put off by a random wait already: the next
    /// round downloads whatever version is announced then, so a stream of changes cannot put it
    /// off forever.
    download_deferred: bool,
    /// The key snapshots must be signed with: configured, pinned on first use, or not yet known.
    trusted: Option<SigningKey>,
    applied: Option<LastApplied>,
    /// Failed calls in a row: while there are any, the server is taken to be away and the audit is
    /// spooled instead of sent.
    failures: u32,
    /// Refused snapshots in a row (the server answers): their own backoff, the audit keeps flowing.
    refusals: u32,
    /// Deliveries of access events in a row that the server did not take while it answered
    /// heartbeats, and when events may be sent again: the spool waits a back-off of its own.
    delivery_failures: u32,
    next_delivery: Option<Clock>,
    /// The service type of the snapshot that made the agent refuse everything, as recorded in the
    /// cache directory; `None` when nothing is refused for that reason.
    refused_type: Option<String>,
    shipper: Shipper,
    /// The problem logged last: the same problem is not logged again until something changes.
    last_problem: Option<String>,
    /// The `refreshSeconds` last reported as out of range, so it is reported once.
    clamped_round: Option<i64>,
    /// (applied, announced) versions of the last 304 that contradicted the heartbeat, logged once.
    stale_not_modified: Option<(i64, i64)>,
}

impl ServerSync {
    /// Validates what can be validated without the network, and opens the disk cache.
    pub fn new(
        settings: ServerSettings,
        config: &AgentConfig,
        delivery: Arc<DeliveryStats>,
    ) -> Result<ServerSync, ConfigError> {
        crate::config::plain_http_needs_a_signing_key(
            &settings.url,
            settings.signing_key.is_some(),
        )?;
        let timeouts = Timeouts {
            connect: config.connect_timeout,
            read: config.read_timeout,
            snapshot: config.snapshot_timeout,
        };
        let client = ServerClient::new(&settings, timeouts, config.snapshot_max_bytes)?;
        let cache = SnapshotCache::open(&settings.cache_dir, config.snapshot_max_bytes)?;
        let trusted = match &settings.signing_key {
            Some(key) => Some(key.clone()),
            None => match cache.pinned_key() {
                Ok(Some(text)) => Some(SigningKey::from_base64(&text).map_err(|e| {
                    ConfigError::new(
                        CACHE_DIR.key,
                        format!(
                            "the pinned key {} is {e}; remove it or set {}",
                            cache.pinned_key_path().display(),
                            SIGNING_KEY_FILE.key
                        ),
                    )
                })?),
                Ok(None) => None,
                Err(e) => {
                    return Err(ConfigError::new(
                        CACHE_DIR.key,
                        format!("cannot read {}: {e}", cache.pinned_key_path().display()),
                    ))
                }
            },
        };
        let refused_type = cache.refused_service_type().map_err(|e| {
            ConfigError::new(
                CACHE_DIR.key,
                format!(
                    "cannot read {}: {e}; make it readable by Kafka's account",
                    cache.refused_type_path().display()
                ),
            )
        })?;
        warn_if_token_readable_by_others(&settings);
        if crate::config::is_plain_http(&settings.url) {
            tracing::warn!(
                "{} {} is plain HTTP: the agent token travels in clear and can be read on the way; use an https URL",
                settings::SERVER_URL.key,
                settings.url
            );
        }
        let replaced = replaced_bodies(&cache)?;
        let batch_size = usize::try_from(config.audit_batch_size).unwrap_or(500);
        let shipper = Shipper::new(
            &settings.instance,
            batch_size,
            cache.dir().join("audit-spool"),
            config.audit_spool_limit_bytes,
            delivery,
        );
        Ok(ServerSync {
            shipper,
            settings,
            client,
            cache,
            refresh_interval: config.refresh_interval,
            download_jitter: config.download_jitter,
            revalidate_interval: config.revalidate_interval,
            max_age: config.snapshot_max_age,
            confirmation_unrecorded: false,
            break_glass_dir: config
                .break_glass_dir
                .as_deref()
                .map(|dir| BreakGlassDir::open(dir, config.snapshot_max_bytes))
                .transpose()?,
            break_glass: None,
            replaced,
            revalidation_refused_at: None,
            download_deferred: false,
            trusted,
            applied: None,
            failures: 0,
            refusals: 0,
            delivery_failures: 0,
            next_delivery: None,
            refused_type,
            last_problem: None,
            clamped_round: None,
            stale_not_modified: None,
        })
    }

    /// Applies the disk cache if it verifies; an unusable cache is moved aside and logged. When the
    /// cache directory records a refused service type, everything stays refused: the cached kafka
    /// snapshot is verified and kept to compare the next one with, but not put in force.
    fn load_cache(&mut self, agent: &dyn Holder) {
        if let Some(refused) = self.refused_type.clone() {
            agent.refuse_everything(&refused);
            tracing::warn!(
                "{} records that the last snapshot from the GrantForge server was of service type `{refused}`; the cached kafka snapshot is not used, and every request but the super users' stays refused until the server sends a kafka snapshot",
                self.cache.refused_type_path().display()
            );
        }
        let download = match self.cache.load() {
            Ok(Some(download)) => download,
            Ok(None) => return,
            Err(e) => return self.reject_cache(&e),
        };
        match self.accept(download, agent, None) {
            Ok(()) => self.date_cache(agent),
            Err(reason) => self.reject_cache(&reason),
        }
    }

    /// The cached snapshot is as old as the cache records its last confirmation to be: a node
    /// restarted during a long outage must not serve an arbitrarily old cache. Unrecorded, its age
    /// is unknown, and past any limit.
    fn date_cache(&mut self, agent: &dyn Holder) {
        let age = self.cache.confirmed_age(SystemTime::now());
        if let (Err(why), Some(_)) = (&age, self.max_age) {
            tracing::warn!(
                "{why}: the age of the cached snapshot is unknown, so {} refuses every request but the super users' until the GrantForge server confirms a snapshot",
                SNAPSHOT_MAX_AGE.key
            );
        }
        agent.staleness().cached(Clock::now(), age.ok());
    }

    fn reject_cache(&mut self, reason: &str) {
        match self.cache.move_aside() {
            Ok(aside) => tracing::warn!(
                "the cached snapshot in {} is not used: {reason}; moved aside to {}",
                self.cache.dir().display(),
                aside.display()
            ),
            Err(e) => tracing::warn!(
                "the cached snapshot in {} is not used: {reason}; moving it aside failed: {e}",
                self.cache.dir().display()
            ),
        }
    }

    /// One round with the server; returns when to come back.
    fn refresh(&mut self, agent: &dyn Holder) -> Duration {
        self.take_break_glass(agent);
        let heartbeat = match self.client.heartbeat(&self.heartbeat_body(agent)) {
            Ok(heartbeat) => heartbeat,
            Err(e) => return self.failed(agent, &e),
        };
        let round = self.round(heartbeat.refresh_seconds);
        let stale = self.refused_type.is_some()
            || self
                .applied
                .as_ref()
                .is_none_or(|a| a.version != heartbeat.policy_version);
        if !stale {
            self.download_deferred = false;
            if self.revalidation_due() {
                match self.revalidate(agent, heartbeat.policy_version) {
                    Ok(()) => {}
                    Err(Trouble::Server(e)) => return self.failed(agent, &e),
                    Err(Trouble::Refused(reason)) => {
                        self.revalidation_refused_at = Some(Clock::now());
                        return self.refused(agent, &reason);
                    }
                }
            } else if self.revalidation_refused_at.is_some() {
                // The server answers (the audit flows), but the refused body still stands: no
                // recovery until a revalidation or a new version says otherwise.
                self.failures = 0;
                agent.staleness().unconfirmed(true);
                return round;
            }
        } else {
            // Not a recovery: the heartbeat answered, but a refused snapshot or a failed
            // download is only over once a download succeeds.
            if let Some(wait) = self.defer_download() {
                agent.staleness().reached();
                return wait;
            }
            match self.download(agent, heartbeat.policy_version) {
                Ok(()) => {}
                Err(Trouble::Server(e)) => return self.failed(agent, &e),
                Err(Trouble::Refused(reason)) => return self.refused(agent, &reason),
            }
        }
        self.recovered(agent);
        round
    }

    /// Whether the snapshot in force went unconfirmed by the live server for the revalidation
    /// interval (a snapshot from the disk cache was never confirmed: at once), and no
    /// revalidation was refused within the interval.
    fn revalidation_due(&self) -> bool {
        let refused_lately = self
            .revalidation_refused_at
            .is_some_and(|at| at.elapsed() < self.revalidate_interval);
        !refused_lately
            && self.applied.as_ref().is_some_and(|a| {
                a.confirmed
                    .is_none_or(|at| at.elapsed() >= self.revalidate_interval)
            })
    }

    /// The conditional download of the applied version's snapshot, on the revalidation schedule:
    /// a 304 confirms the memberships in force; a body is checked as any download, and may be
    /// one of the same version with other content (see [`ServerSync::may_replace`]).
    fn revalidate(&mut self, agent: &dyn Holder, announced: i64) -> Result<(), Trouble> {
        let Some(etag) = self.applied.as_ref().map(|a| a.etag.clone()) else {
            return Ok(());
        };
        match self.client.policies(Some(&etag))? {
            PolicyAnswer::Unchanged => {
                self.confirmed(agent);
                Ok(())
            }
            PolicyAnswer::Download(download) => self
                .accept(download, agent, Some(announced))
                .map_err(Trouble::Refused),
        }
    }

    /// The live server confirmed the body in force: its memberships are current as of now.
    fn confirmed(&mut self, agent: &dyn Holder) {
        let now = Clock::now();
        if let Some(applied) = &mut self.applied {
            applied.confirmed = Some(now);
        }
        *agent.metrics().memberships_confirmed.lock() = Some(now);
    }

    /// A random wait before downloading a changed version, once per change, so that a fleet that
    /// learns of a version in the same second does not download it in the same second. The first
    /// snapshot (nothing applied: listeners may be waiting for it), a snapshot while another
    /// service type is refused, and the retry of a refused snapshot are not put off.
    fn defer_download(&mut self) -> Option<Duration> {
        // After a refused download its back-off already spreads the retries. (After an outage
        // it does not: the fleet's back-offs end when the server is back, so the wait applies.)
        let settled = self.applied.is_some() && self.refused_type.is_none() && self.refusals == 0;
        let jitter = self.download_jitter.min(self.refresh_interval);
        if !settled || jitter.is_zero() || std::mem::take(&mut self.download_deferred) {
            return None;
        }
        self.download_deferred = true;
        Some(jitter.mul_f64(random_fraction()))
    }

    /// The server's `refreshSeconds`, held within [`server_round_range`]; none (or ≤ 0) means the
    /// configured refresh interval.
    fn round(&mut self, refresh_seconds: Option<i64>) -> Duration {
        let Some(asked) = refresh_seconds.filter(|s| *s > 0) else {
            return self.within_max_age(self.refresh_interval);
        };
        let asked_for = Duration::from_secs(asked.unsigned_abs());
        let (shortest, longest) = server_round_range(self.refresh_interval);
        let round = asked_for.clamp(shortest, longest);
        if round != asked_for && self.clamped_round != Some(asked) {
            tracing::warn!(
                "GrantForge server {} asks for a round every {asked} s (refreshSeconds); the agent comes back after {} s: it honours from {} s to {} times {}, at most {} s",
                self.settings.url,
                round.as_secs(),
                shortest.as_secs(),
                SERVER_ROUND_FACTOR,
                settings::REFRESH_INTERVAL.key,
                SERVER_ROUND_MAX.as_secs()
            );
            self.clamped_round = Some(asked);
        }
        self.within_max_age(round)
    }

    /// With a staleness limit, a round is at most a third of it: a round, the random wait before a
    /// download and a retry fit in the limit (`config` refuses a limit shorter than three refresh
    /// intervals), so a node whose server answers never refuses.
    fn within_max_age(&self, round: Duration) -> Duration {
        self.max_age.map_or(round, |max| round.min(max / 3))
    }

    /// Downloads the snapshot and applies it if it passes every check. A 304 while the heartbeat
    /// announces another version than the applied one is not believed: the snapshot is downloaded
    /// again without `If-None-Match`.
    fn download(&mut self, agent: &dyn Holder, announced: i64) -> Result<(), Trouble> {
        // While everything is refused the download is unconditional: only the snapshot the server
        // serves now can tell whether the refusal ends.
        let etag = match self.refused_type {
            Some(_) => None,
            None => self.applied.as_ref().map(|a| a.etag.clone()),
        };
        let download = match self.client.policies(etag.as_deref())? {
            PolicyAnswer::Download(download) => download,
            PolicyAnswer::Unchanged => {
                let applied = match (&etag, &self.applied) {
                    (Some(_), Some(applied)) => applied.version,
                    _ => return Err(Trouble::Server(unasked_not_modified())),
                };
                if applied == announced {
                    self.confirmed(agent);
                    return Ok(());
                }
                if self.stale_not_modified != Some((applied, announced)) {
                    tracing::warn!(
                        "GrantForge server {} answered 304 Not Modified for the applied policy version {applied}, but its heartbeat announces policy version {announced}; the snapshot is downloaded again without If-None-Match",
                        self.settings.url
                    );
                    self.stale_not_modified = Some((applied, announced));
                }
                match self.client.policies(None)? {
                    PolicyAnswer::Download(download) => download,
                    PolicyAnswer::Unchanged => return Err(Trouble::Server(unasked_not_modified())),
                }
            }
        };
        self.accept(download, agent, Some(announced))
            .map_err(Trouble::Refused)
    }

    /// Verifies, checks and applies one download: from the live server, whose heartbeat announced
    /// `announced`, or from the disk cache (`None`).
    fn accept(
        &mut self,
        download: Download,
        agent: &dyn Holder,
        announced: Option<i64>,
    ) -> Result<(), String> {
        let from_server = announced.is_some();
        let key = self.key_for(&download.key_id, from_server)?;
        if !key.verifies(&download.body, &download.signature) {
            return Err(format!(
                "its signature does not verify under the signing key {}",
                key.key_id()
            ));
        }
        // Read and compiled in one pass: an older or the applied version is refused after that
        // work, which only the rare unconditional download repeats.
        let policies = match KafkaPolicies::load(&download.body, Instant::now()) {
            Ok(policies) => policies,
            Err(LoadError::WrongServiceType(service_type)) => {
                self.refuse_type(agent, &service_type);
                return Err(format!("it is of service type `{service_type}`, not kafka"));
            }
            Err(e) => return Err(e.to_string()),
        };
        // Derived from the verified bytes: neither the server's ETag header nor the cache's metadata
        // file (unsigned) can make other content pass for the applied one.
        let etag = etag_of(&download.body);
        let succession = match &self.applied {
            None => Succession::First,
            Some(applied) => self.succession(applied, &policies, &etag, announced)?,
        };
        if succession == Succession::Same && self.refused_type.is_none() {
            self.confirmed(agent);
            return Ok(()); // the very snapshot in force
        }
        let now = Clock::now();
        let applied = LastApplied {
            service: policies.service.clone(),
            version: policies.policy_version,
            etag,
            at: now,
            // A cached body was never confirmed by the live server: revalidated on the first round.
            confirmed: from_server.then_some(now),
            memberships: Memberships::of(&download.body),
        };
        if !from_server && self.refused_type.is_some() {
            // Verified, but a snapshot of another type came after it: kept to compare the next
            // download with, never put in force.
            self.applied = Some(applied);
            return Ok(());
        }
        let origin = if from_server {
            self.settings.url.clone()
        } else {
            format!("the disk cache {}", self.cache.dir().display())
        };
        agent.apply(policies, &origin);
        *agent.metrics().memberships_confirmed.lock() = applied.confirmed;
        if from_server {
            self.lift_break_glass(agent, applied.version);
            self.tell_replaced(succession, &applied);
            self.save_to_cache(&download, &applied);
        }
        self.applied = Some(applied);
        Ok(())
    }

    fn save_to_cache(&mut self, download: &Download, applied: &LastApplied) {
        if let Err(e) = self.cache.save(download, &applied.service, applied.version) {
            tracing::warn!("cannot write the disk cache {}: {e}; the snapshot is applied but a restart without the server will not have it", self.cache.dir().display());
        }
        if self.refused_type.take().is_some() {
            if let Err(e) = self.cache.clear_refusal() {
                tracing::warn!(
                    "cannot remove {}: {e}; a restart will refuse everything until the server sends a kafka snapshot again",
                    self.cache.refused_type_path().display()
                );
            }
        }
    }

    /// A verified snapshot of another service type: everything is refused, and the refusal is
    /// recorded in the cache directory so that a restart refuses too instead of serving the older
    /// kafka snapshot of the cache. If it cannot be recorded, the cached snapshot is moved aside.
    fn refuse_type(&mut self, agent: &dyn Holder, service_type: &str) {
        agent.refuse_everything(service_type);
        if self.refused_type.as_deref() == Some(service_type) {
            return;
        }
        if let Err(e) = self.cache.save_refusal(service_type) {
            let aside = self.cache.move_aside().map_or_else(
                |e| format!("moving the cached snapshot aside failed too: {e}"),
                |to| format!("the cached snapshot was moved aside to {}", to.display()),
            );
            tracing::error!(
                "cannot record the refusal in {}: {e}; {aside}, so that a restart does not serve it",
                self.cache.refused_type_path().display()
            );
        }
        self.refused_type = Some(service_type.to_string());
    }

    /// Delivers access events (and what the spool holds) unless the server is known to be away,
    /// in which case they are spooled. A refused snapshot does not make the server away. If the
    /// delivery panics, its events are spooled before the panic goes on to the agent's thread.
    fn ship(&mut self, events: &[Value]) {
        self.ship_within(events, RESEND_BUDGET);
    }

    fn ship_within(&mut self, events: &[Value], budget: Duration) {
        let backing_off = self.next_delivery.is_some_and(|at| Clock::now() < at);
        let deliverable = self.failures == 0 && !backing_off;
        let (shipper, client) = (&mut self.shipper, &self.client);
        let shipped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shipper.ship(client, events, deliverable, budget)
        }));
        match shipped {
            Ok(true) => {
                // The heartbeat answers but the events are not taken: spooled, and sent again
                // after a back-off of their own.
                self.delivery_failures = self.delivery_failures.saturating_add(1);
                let wait = back_off(self.delivery_failures, self.refresh_interval);
                self.next_delivery = Some(Clock::now() + wait);
            }
            Ok(false) if deliverable => {
                self.delivery_failures = 0;
                self.next_delivery = None;
            }
            Ok(false) => {}
            Err(panic) => {
                self.shipper.spool_in_flight();
                std::panic::resume_unwind(panic);
            }
        }
    }

    /// The last delivery, when the agent closes: the events go to the disk spool first, then the
    /// spool is sent. `close()` waits for this only so long (`CLOSE_DEADLINE`); whatever a slow
    /// server has not taken by then is still in the spool for the next start.
    fn ship_last(&mut self, events: &[Value]) {
        self.shipper.spool_only(events);
        self.next_delivery = None; // one last try, whatever the back-off
        self.ship_within(&[], crate::source::CLOSE_DEADLINE);
    }

    fn heartbeat_body(&self, agent: &dyn Holder) -> Value {
        json!({
            "instance": self.settings.instance,
            "host": self.settings.host,
            "agentVersion": self.settings.agent_version,
            "appliedPolicyVersion": self.applied.as_ref().map(|a| a.version),
            "health": {
                "snapshotAgeSeconds": self.applied.as_ref().map(|a| a.at.elapsed().as_secs()),
                "membershipsAgeSeconds": self.applied.as_ref().and_then(|a| a.confirmed).map(|at| at.elapsed().as_secs()),
                "queuedEvents": agent.queued_audit_groups(),
                "spooledBytes": agent.delivery().spooled_bytes.load(std::sync::atomic::Ordering::Relaxed),
                "droppedEvents": agent.dropped_audit_events(),
                "lastError": self.last_problem,
                "state": agent.staleness().state().name(),
                "serverReachable": agent.staleness().server_reachable(),
                "refusedWithoutSnapshot": agent.refused_without_snapshot(),
            },
        })
    }
}

fn unasked_not_modified() -> CallError {
    CallError::Invalid("304 Not Modified to a request without If-None-Match".to_string())
}

#[cfg(unix)]
fn warn_if_token_readable_by_others(settings: &ServerSettings) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(metadata) = std::fs::metadata(&settings.token_file) {
        if metadata.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "{} {} can be read by other accounts; make it readable by Kafka's account only (chmod 600)",
                crate::settings::TOKEN_FILE.key,
                settings.token_file.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_token_readable_by_others(_settings: &ServerSettings) {}

impl Source for ServerSync {
    fn start(&mut self, agent: &dyn Holder) {
        self.load_cache(agent);
        if let Some(dir) = &self.break_glass_dir {
            dir.refuse_waiting("it was waiting when the agent started: a break-glass file is applied only to a running node, by the break-glass command");
        }
    }

    /// At once: the server may have a newer snapshot than the cache.
    fn first_round_after(&self) -> Duration {
        Duration::ZERO
    }

    fn round(&mut self, agent: &dyn Holder) -> Duration {
        self.refresh(agent)
    }

    fn after_a_failed_round(&self) -> Duration {
        self.refresh_interval
    }

    fn hand_on(&mut self, events: &[AccessEvent], retry_spool: bool, closing: bool) {
        if events.is_empty() && !retry_spool && !self.has_backlog() {
            return;
        }
        let batch: Vec<Value> = events.iter().map(AccessEvent::to_json).collect();
        if closing {
            self.ship_last(&batch);
        } else {
            self.ship(&batch);
        }
    }

    /// Whether spooled batches wait for the next tick, the last resend having run out of its
    /// budget with the server answering.
    fn has_backlog(&self) -> bool {
        self.shipper.has_backlog()
    }

    fn audit_at_close(&self) -> Option<super::AuditAtClose> {
        let spool = self.shipper.spool_beside();
        Some(Box::new(move |events: &[AccessEvent]| {
            let mut beside = spool.open();
            let in_flight = spool.take_in_flight();
            beside.spool_only(&in_flight);
            let batch: Vec<Value> = events.iter().map(AccessEvent::to_json).collect();
            beside.spool_only(&batch);
            accesses_in(&in_flight)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_round_is_held_between_one_second_and_ten_refresh_intervals_at_most_an_hour() {
        let s = Duration::from_secs;
        assert_eq!(server_round_range(s(30)), (s(1), s(300)));
        assert_eq!(server_round_range(Duration::from_millis(300)), (s(1), s(3)));
        assert_eq!(server_round_range(Duration::from_millis(1)), (s(1), s(1)));
        assert_eq!(server_round_range(s(7200)), (s(1), s(3600)));
        assert_eq!(
            server_round_range(Duration::MAX),
            (s(1), s(3600)),
            "no overflow"
        );
    }

    #[test]
    fn back_off_grows_to_the_refresh_interval_without_overflow() {
        let interval = Duration::from_secs(30);
        assert!(back_off(1, interval) <= Duration::from_millis(1200));
        assert!(back_off(u32::MAX, interval) <= Duration::from_secs(36));
        assert!(back_off(u32::MAX, Duration::MAX) <= Duration::from_secs(1 << 15).mul_f64(1.2));
    }
}
