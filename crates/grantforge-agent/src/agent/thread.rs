//! The agent's own thread: it keeps the policies current through its source (to which the agent
//! is a [`Holder`]), delivers the audit, sweeps expired decisions and moves the ACL view at
//! validity boundaries. `agent.rs` keeps what request threads call.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use grantforge_engine::Instant;
use grantforge_kafka::KafkaPolicies;

use super::Agent;
use crate::audit::events::AccessEvent;
use crate::request::decision_cache::DecisionCache;
use crate::request::lane::{self, SnapshotInForce};
use crate::settings;
use crate::source::{Holder, Source};

impl Agent {
    /// The agent's own thread: keeps the policies current (policy file changes, or rounds with
    /// the server) and delivers the audit: refusals within a tick, folded allowed accesses every
    /// fold window, the spool every flush interval (and without a pause while a resend that ran
    /// out of its budget has more to send), and everything once more at the end.
    ///
    /// A panic in one round (in the source's part or in the audit's) is caught, logged once, and
    /// the thread carries on with the next round: a bug met once must not leave the broker with
    /// policies that are never updated again and an audit that is never delivered. No delay can
    /// overflow the clock: whatever a setting or the server asks for, the next round is in reach.
    pub(super) fn run_background(&self, mut source: Box<dyn Source>) {
        let tick = Duration::from_millis(250);
        let started = std::time::Instant::now();
        let mut next_source = later(started, source.first_round_after());
        let mut next_fold = later(started, self.config.audit_fold_window);
        let mut next_flush = later(started, self.config.audit_flush_interval);
        let (mut source_panic, mut audit_panic, mut view_panic) = (None, None, None);
        loop {
            {
                let backlog = source.has_backlog();
                let mut state = self.thread.state.lock();
                if !self.thread.stopping.load(Ordering::Acquire) && !backlog {
                    let wake = next_source.min(later(std::time::Instant::now(), tick));
                    self.thread.changed.wait_until(&mut state, wake);
                }
            }
            let stopping = self.thread.stopping.load(Ordering::Acquire);
            let now = std::time::Instant::now();
            if !stopping && now >= next_source {
                let round =
                    survive_panic("keeping the policies current", &mut source_panic, || {
                        source.round(self)
                    });
                let delay = round.unwrap_or_else(|| source.after_a_failed_round());
                next_source = later(std::time::Instant::now(), delay);
            }
            let fold_over = stopping || now >= next_fold;
            if fold_over {
                next_fold = later(now, self.config.audit_fold_window);
            }
            let retry_spool = stopping || now >= next_flush;
            if retry_spool {
                next_flush = later(now, self.config.audit_flush_interval);
            }
            survive_panic("delivering the audit", &mut audit_panic, || {
                self.deliver_audit(source.as_mut(), fold_over, retry_spool)
            });
            if stopping {
                return;
            }
            self.drop_expired_decisions();
            self.update_staleness();
            survive_panic("recomputing the ACL view", &mut view_panic, || {
                self.advance_acl_view()
            });
            // After the round that applied a snapshot has ended: what its load freed, and its
            // download (server mode holds it until the disk cache is written), can go back.
            if self
                .in_force
                .loaded_since_trim
                .swap(false, Ordering::AcqRel)
            {
                give_back_freed_memory();
            }
        }
    }

    /// Once a validity period of the snapshot in force starts or ends, the ACL view is recomputed
    /// here, within a tick of the boundary, and swapped in: `acls()` callers on Kafka's request
    /// threads never build a view nor wait for one (an offline agent with an unchanged file would
    /// otherwise show the policies of the moment it loaded, forever).
    pub(super) fn advance_acl_view(&self) {
        let applied = self.in_force.current.read().clone();
        let Some(applied) = applied else { return };
        let policies = &applied.policies;
        if let Some(view) = policies.advance_acl_view(Instant::now()) {
            self.in_force.acl_view_serial.fetch_add(1, Ordering::AcqRel);
            tracing::info!(
                "policy version {}: a validity period started or ended, the ACL view now lists {} rows",
                policies.policy_version,
                view.len()
            );
            if let Some(warning) = view.truncation_warning() {
                tracing::warn!("policy version {}: {warning}", policies.policy_version);
            }
        }
    }

    /// Expired decisions leave the cache of the snapshot in force (at most once per TTL), whether or
    /// not their shard fills.
    pub(super) fn drop_expired_decisions(&self) {
        let applied = self.in_force.current.read().clone();
        if let Some(applied) = applied {
            applied.decisions.drop_expired();
        }
    }

    /// Turns due audit groups into events and hands them on to the source: to GrantForge in server
    /// mode, to the log `grantforge.audit` in offline mode.
    pub(super) fn deliver_audit(
        &self,
        source: &mut dyn Source,
        fold_over: bool,
        retry_spool: bool,
    ) {
        let events = self.take_audit_events(fold_over);
        source.hand_on(
            &events,
            retry_spool,
            self.thread.stopping.load(Ordering::Acquire),
        );
    }

    /// Every access event waiting, and those of the delivery the agent's thread is held up in,
    /// from the close path: spooled beside the agent's thread (which takes no event twice, and
    /// spools none of that delivery again). Without a place to put them, they are not taken: the thread hands
    /// them on when it can. Says what became of them.
    pub(super) fn keep_audit_at_close(&self) -> String {
        let Some(keep) = &self.thread.audit_at_close else {
            return "the accesses waiting to be audited are left to it".to_string();
        };
        let events = self.take_audit_events(true);
        let in_flight = keep(&events);
        let waiting: u64 = events.iter().map(|e| e.count).sum();
        format!("{waiting} accesses waiting to be audited and {in_flight} in a delivery the server had not answered were put in the audit spool")
    }

    /// The access events due now (every folded group when `fold_over`), counted as evented.
    pub(super) fn take_audit_events(&self, fold_over: bool) -> Vec<AccessEvent> {
        self.lanes.hand_on(&self.auditor, self.generation());
        let mut events = self
            .auditor
            .take_events(Instant::now(), fold_over, |key, parts| {
                AccessEvent::new(self.event_ids.next(), key, parts)
            });
        if fold_over {
            events.extend(self.comparisons.take_events(&self.event_ids));
        }
        self.auditor.count_dropped_per_user();
        let users: Vec<(String, u64)> = events.iter().map(|e| (e.user(), e.count)).collect();
        self.auditor
            .ledger()
            .evented(users.iter().map(|(user, n)| (user.as_str(), *n)));
        let dropped = self.auditor.take_dropped();
        if dropped > 0 {
            tracing::warn!(
                "{dropped} accesses were not audited because {} groups were already waiting; raise it or shorten {}",
                settings::AUDIT_QUEUE_CAPACITY.key,
                settings::AUDIT_FOLD_WINDOW.key
            );
        }
        events
    }
}

impl Holder for Agent {
    /// Puts a snapshot in force; a refusal of everything (another service type) is lifted only
    /// once it is, never before: no request is decided by the older snapshot in between.
    fn apply(&self, policies: KafkaPolicies, from: &str) {
        if self.thread.stopping.load(Ordering::Acquire) {
            // A round that was under way when the agent closed: a closed agent refuses everything.
            return;
        }
        let decisions = DecisionCache::new(
            self.config.decision_cache_max_entries,
            self.config.decision_cache_ttl,
            policies.reads,
        )
        .ending_at(validity_changes_ms(&policies));
        let policies = Arc::new(policies);
        let applied = SnapshotInForce {
            id: lane::unique_id(),
            policies: Arc::clone(&policies),
            decisions,
            at: std::time::Instant::now(),
        };
        *self.in_force.current.write() = Some(Arc::new(applied));
        self.in_force.generation.fetch_add(1, Ordering::AcqRel);
        self.in_force.acl_view_serial.fetch_add(1, Ordering::AcqRel);
        let was_refusing_all = self.in_force.refuse_all.swap(false, Ordering::AcqRel);
        // Said once it is true: a reader of the log (the soak's oracle) takes its time as the moment the
        // version was in force at the latest.
        tracing::info!(
            "applied policy version {} of service {} from {from}: {} access policies{}",
            policies.policy_version,
            policies.service,
            policies.access_policies,
            if policies.service_enabled {
                ""
            } else {
                "; the service is disabled, so Kafka is unchecked"
            }
        );
        if was_refusing_all {
            tracing::info!("a kafka snapshot is in force: requests are decided again");
        }
        for warning in policies.warnings() {
            tracing::warn!("policy version {}: {warning}", policies.policy_version);
        }
        self.in_force
            .loaded_since_trim
            .store(true, Ordering::Release);
        let _state = self.thread.state.lock();
        self.thread.changed.notify_all();
    }

    /// Refuses everything but super users: the snapshot's service type is not kafka. Only
    /// [`Agent::apply`] of a kafka snapshot lifts it, once that snapshot is in force.
    fn refuse_everything(&self, service_type: &str) {
        if !self.in_force.refuse_all.swap(true, Ordering::AcqRel) {
            tracing::error!(
                "the GrantForge server sent a snapshot of service type `{service_type}`: the agent token belongs to a service that is not of type kafka; every request but the super users' is refused until a kafka snapshot is installed; issue a token of a kafka data service"
            );
        }
    }

    /// Actions refused because no usable snapshot was in force, since start.
    fn refused_without_snapshot(&self) -> u64 {
        self.lanes.counts().undecided
    }

    fn policies(&self) -> Option<Arc<KafkaPolicies>> {
        Agent::policies(self)
    }
}

/// When the validity periods of `policies` start or end, in milliseconds since 1970: the wall
/// clock the decision cache keeps time by (0 for an instant before 1970). Those passed too: the
/// clock may step back before them.
fn validity_changes_ms(policies: &KafkaPolicies) -> Vec<u64> {
    policies
        .validity_changes()
        .iter()
        .map(|at| u64::try_from(at.unix_millis()).unwrap_or(0))
        .collect()
}

/// Returns the heap pages freed since to the operating system, on the agent's thread after a
/// snapshot was applied. A load frees what it held on the way (each batch of parsed policies, the
/// snapshot in force before, the download); glibc keeps such freed pages in the process, so
/// without this the broker's resident memory stays at the load's peak (`docs/benchmarks.md`,
/// "Scale of one snapshot").
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's arenas; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `now + delay`, or as late as the clock allows (at most a day later) instead of overflowing.
fn later(now: std::time::Instant, delay: Duration) -> std::time::Instant {
    now.checked_add(delay)
        .or_else(|| now.checked_add(Duration::from_secs(86_400)))
        .unwrap_or(now)
}

/// Runs one part of a round of the agent's thread; a panic is caught and logged at ERROR once per
/// distinct panic of that part (`last` remembers it), not once per round.
fn survive_panic<R>(part: &str, last: &mut Option<String>, run: impl FnOnce() -> R) -> Option<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(result) => Some(result),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            if last.as_deref() != Some(what.as_str()) {
                tracing::error!(
                    "the agent's thread failed while {part}: {what}; it carries on with the next round (this failure is not logged again until it changes)"
                );
                *last = Some(what);
            }
            None
        }
    }
}
