//! The agent: the snapshot in force, Kafka's questions answered against it, and its lifecycle.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use grantforge_engine::Instant;
use grantforge_kafka::{
    Action, KafkaPolicies, Operation, Principal, Reason, RequestContext, ResourceType,
};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::audit::delivery::DeliveryStats;
use crate::audit::events::{AccessEvent, EventIds};
use crate::audit::fold::{is_audited, Auditor};
use crate::comparison::{is_compared, Compared, Comparisons, Decider};
use crate::config::{AgentConfig, ConfigError, PolicySource};
use crate::lockout::LockoutHint;
use crate::metrics::{Metrics, Observed, Stats};
use crate::request::decision_cache::DecisionCache;
use crate::request::lane::{self, Lane, Lanes, SnapshotInForce};
use crate::request::unaudited::{unaudited_copy, with_reflagged, with_unaudited, INLINE};
use crate::rules;
use crate::settings;
use crate::source::file::OfflineSource;
use crate::source::server::ServerSync;
use crate::source::{AuditAtClose, Holder, Source, CLOSE_DEADLINE};
use crate::staleness::Staleness;

/// Why an agent did not start.
#[derive(Debug)]
pub enum AgentError {
    /// A setting cannot be used: the error names its key and what to do.
    Config(ConfigError),
    /// The runtime failed (the agent's thread could not be started): nothing an operator's setting
    /// caused or can fix by editing it.
    Runtime(String),
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::Config(e) => write!(f, "{e}"),
            AgentError::Runtime(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for AgentError {}

impl From<ConfigError> for AgentError {
    fn from(e: ConfigError) -> AgentError {
        AgentError::Config(e)
    }
}

impl AgentError {
    /// The key a configuration error names.
    pub fn key(&self) -> Option<&str> {
        match self {
            AgentError::Config(e) => Some(&e.key),
            AgentError::Runtime(_) => None,
        }
    }
}

/// Users the audit's account per user shows (metric `audit-by-user`, the lines logged at close);
/// the others are summed in one line.
pub(crate) const REPORTED_USERS: usize = 100;

/// One agent, shared by every authorizer of its configuration in this JVM.
pub struct Agent {
    config: AgentConfig,
    /// The snapshot in force with its decision cache; `None` means none yet, and everything but
    /// super users is refused.
    current: RwLock<Option<Arc<SnapshotInForce>>>,
    /// Bumped on every applied snapshot: each lane compares it to let go of an older one. (The ACL
    /// view also changes at validity boundaries, without a bump: see `acl_view_serial`.)
    generation: AtomicU64,
    /// Bumped whenever the ACL view may have changed (a snapshot applied, a validity boundary, the
    /// agent closed): the shim keeps the view's bindings decoded while this stays the same.
    acl_view_serial: AtomicU64,
    /// Set when a snapshot is applied: the agent's thread then gives the load's freed memory back.
    loaded_since_trim: AtomicBool,
    /// Signalled when the first snapshot is applied and when the agent stops.
    state: Mutex<()>,
    changed: Condvar,
    stopping: AtomicBool,
    /// Set when the server sent a snapshot of another service type: the token belongs to another
    /// kind of service, and everything but super users is refused until a kafka snapshot arrives.
    refuse_all: AtomicBool,
    /// How old the snapshot in force is, and whether that refuses everything but super users.
    staleness: Staleness,
    auditor: Auditor,
    comparisons: Comparisons,
    /// Says when the policies refuse nodes what they do among themselves.
    lockout: LockoutHint,
    lanes: Lanes,
    metrics: Metrics,
    instance: String,
    event_ids: EventIds,
    delivery: Arc<DeliveryStats>,
    background: Mutex<Option<JoinHandle<()>>>,
    /// How `close()` keeps the audit itself when the agent's thread is held up past the deadline.
    audit_at_close: Option<AuditAtClose>,
}

impl Agent {
    /// Starts an agent. Offline mode loads the policy file now, so a bad file stops the broker at
    /// start; server mode validates its settings and applies the disk cache if it verifies (no
    /// network here). The agent's own thread then keeps the policies current.
    pub fn start(config: AgentConfig) -> Result<Arc<Agent>, AgentError> {
        for ignored in &config.ignored_settings {
            tracing::warn!("{ignored}");
        }
        let auditor =
            Auditor::new(usize::try_from(config.audit_queue_capacity).unwrap_or(usize::MAX));
        let delivery = Arc::new(DeliveryStats {
            ledger: Arc::clone(auditor.ledger()),
            ..DeliveryStats::default()
        });
        let (mut source, instance): (Box<dyn Source>, String) = match &config.source {
            PolicySource::File(path, key) => (
                Box::new(OfflineSource::open(path, key.clone(), &config)?),
                config
                    .instance
                    .clone()
                    .unwrap_or_else(crate::config::host_name),
            ),
            PolicySource::Server(settings) => (
                Box::new(ServerSync::new(
                    settings.clone(),
                    &config,
                    Arc::clone(&delivery),
                )?),
                settings.instance.clone(),
            ),
        };
        let audit_at_close = source.audit_at_close();
        let agent = Arc::new(Agent {
            current: RwLock::new(None),
            generation: AtomicU64::new(0),
            acl_view_serial: AtomicU64::new(0),
            loaded_since_trim: AtomicBool::new(false),
            state: Mutex::new(()),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            refuse_all: AtomicBool::new(false),
            staleness: Staleness::new(config.snapshot_max_age),
            auditor,
            comparisons: Comparisons::default(),
            lockout: LockoutHint::new(config.inter_node_listeners.clone()),
            lanes: Lanes::new(),
            event_ids: EventIds::new(&instance),
            metrics: Metrics::default(),
            instance,
            delivery,
            background: Mutex::new(None),
            audit_at_close,
            config,
        });
        source.start(agent.as_ref());
        // A cached snapshot past the limit refuses before the first request, not a round later.
        agent.update_staleness();
        let worker = Arc::clone(&agent);
        let handle = std::thread::Builder::new()
            .name(crate::logging::AGENT_THREAD.to_string())
            .spawn(move || worker.run_background(source))
            .map_err(|e| {
                AgentError::Runtime(format!(
                    "cannot start the agent's thread: {e}; the JVM may be out of threads or memory"
                ))
            })?;
        *agent.background.lock() = Some(handle);
        Ok(agent)
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The snapshot in force, if any.
    pub fn policies(&self) -> Option<Arc<KafkaPolicies>> {
        self.current
            .read()
            .as_ref()
            .map(|applied| Arc::clone(&applied.policies))
    }

    /// Runs `f` with this thread's lane and what answers the principal before the policies
    /// ([`rules::before_policies`]): the snapshot in force, or the reason (a super user, no
    /// snapshot, a refused service type). Each lane holds the snapshot in force for its thread,
    /// checked against the generation, so a call touches no shared lock or reference count unless a
    /// new snapshot was applied.
    fn with_deciding<R>(
        &self,
        principal: &Principal,
        f: impl FnOnce(&mut Lane, Result<&SnapshotInForce, Reason>) -> R,
    ) -> R {
        self.lanes.with_mine(|lane, held| {
            let in_force = rules::before_policies(&self.config.super_users, principal, || {
                let refusing = rules::Refusing {
                    service_type: self.refuse_all.load(Ordering::Acquire),
                    too_old: self.staleness.refusing(),
                };
                let generation = self.generation.load(Ordering::Acquire);
                if refusing == rules::Refusing::default()
                    && !matches!(held, Some((g, _)) if *g == generation)
                {
                    *held = self
                        .current
                        .read()
                        .clone()
                        .map(|applied| (generation, applied));
                }
                rules::in_force(refusing, held.as_ref().map(|(_, applied)| &**applied))
            });
            f(lane, in_force)
        })
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Changes whenever the ACL view may have: read it before the view, so that a view read
    /// with a serial is never older than that serial.
    pub fn acl_view_serial(&self) -> u64 {
        self.acl_view_serial.load(Ordering::Acquire)
    }

    /// Decides every action of one `authorize` call against the same snapshot; `allowed[i]` is set
    /// for each allowed action (the slice starts all false: refusal is the default).
    pub fn authorize(
        &self,
        context: &RequestContext,
        actions: &[Action<'_>],
        allowed: &mut [bool],
    ) {
        if self
            .config
            .audit_excluded_principals
            .contains(&context.principal)
        {
            with_unaudited(actions, |unaudited| {
                self.decide_all(context, unaudited, allowed, |_, _, _| ())
            });
        } else {
            self.decide_all(context, actions, allowed, |_, _, _| ());
        }
    }

    /// [`Agent::authorize`], and each answer compared with Kafka's (`kafka[i]`): the shadow
    /// (`Decider::Kafka`: GrantForge enforces nothing, so its answers are not audited) and compare
    /// (`Decider::GrantForge`) modes. `compared[i]` tells GrantForge's answer, whether it differs
    /// from Kafka's and whether the shim should tell the Kafka ACL behind it
    /// ([`Agent::describe_kafka_basis`]). While no snapshot may decide, nothing is compared (the
    /// questions are counted as not compared): a starting agent is no disagreement. Nor is a
    /// filter question (`comparison::is_compared`), counted as not compared too.
    pub fn compare(
        &self,
        context: &RequestContext,
        actions: &[Action<'_>],
        kafka: &[bool],
        decider: Decider,
        compared: &mut [Compared],
    ) {
        let n = actions.len();
        // Nearly every call asks about one action: no allocation up to INLINE of them.
        let (mut inline_allowed, mut heap_allowed) = ([false; INLINE], Vec::new());
        let allowed: &mut [bool] = if n <= INLINE {
            &mut inline_allowed[..n]
        } else {
            heap_allowed.resize(n, false);
            &mut heap_allowed
        };
        let count = |lane: &mut Lane, answered: bool, allowed: &[bool]| {
            if answered {
                let compared = || actions.iter().zip(allowed.iter().zip(kafka));
                let agreements = compared()
                    .filter(|(action, (g, k))| is_compared(action) && g == k)
                    .count();
                let filters = actions.iter().filter(|a| !is_compared(a)).count();
                lane.count_agreements(agreements as u64);
                lane.count_not_compared(filters);
            } else {
                lane.count_not_compared(n);
            }
            answered
        };
        let excluded = self
            .config
            .audit_excluded_principals
            .contains(&context.principal);
        let answered = with_reflagged(
            actions,
            |i, action| {
                if excluded {
                    unaudited_copy(action)
                } else {
                    audited_as_compared(action, kafka[i], decider)
                }
            },
            |asked| self.decide_all(context, asked, allowed, count),
        );
        for (out, allowed) in compared.iter_mut().zip(allowed.iter()) {
            *out = Compared::answer(*allowed);
        }
        if !answered {
            return;
        }
        // Read once, on the first disagreement (rare by the operator's aim).
        let mut applied: Option<(Option<Arc<KafkaPolicies>>, Instant)> = None;
        for (i, (action, out)) in actions.iter().zip(compared.iter_mut()).enumerate() {
            if allowed[i] == kafka[i] || !is_compared(action) {
                continue;
            }
            let (policies, now) = applied.get_or_insert_with(|| (self.policies(), Instant::now()));
            // The policies are asked again for the deciding one.
            let (reason, version) = policies
                .as_ref()
                .map_or((Reason::NoSnapshot, lane::NO_SNAPSHOT_VERSION), |p| {
                    (p.decide(context, action, *now), p.policy_version)
                });
            out.disagrees = true;
            let kept = self
                .comparisons
                .record(decider, kafka[i], context, action, reason, version, *now);
            out.wants_kafka_basis = kept == Some(true);
            if kept.is_none() && decider == Decider::GrantForge && is_audited(action, &reason) {
                // No disagreement event will carry this enforced access: audited as any other.
                self.auditor.record(context, action, &reason, version, *now);
            }
        }
    }

    /// Keeps the Kafka ACL behind Kafka's answer to a disagreement [`Agent::compare`] asked about.
    pub fn describe_kafka_basis(
        &self,
        context: &RequestContext,
        action: &Action<'_>,
        kafka_allowed: bool,
        decider: Decider,
        basis: &str,
    ) {
        self.comparisons
            .describe_kafka_basis(decider, kafka_allowed, context, action, basis);
    }

    /// The disagreements of shadow and compare modes.
    pub fn comparisons(&self) -> &Comparisons {
        &self.comparisons
    }

    /// Decides every action into `allowed`, then runs `then` with the thread's lane, whether
    /// anything could decide (false: no snapshot, or one of another service type, so every action
    /// was refused undecided) and the answers.
    fn decide_all<R>(
        &self,
        context: &RequestContext,
        actions: &[Action<'_>],
        allowed: &mut [bool],
        then: impl FnOnce(&mut Lane, bool, &[bool]) -> R,
    ) -> R {
        self.with_deciding(&context.principal, |lane, in_force| {
            // One time of access for the whole call, read only if something is audited.
            let mut now = None;
            let answered = match in_force {
                Ok(applied) => {
                    for (action, allowed) in actions.iter().zip(allowed.iter_mut()) {
                        *allowed = lane.decide(applied, context, action, &self.auditor, &mut now);
                        if !*allowed && action.operation == Some(Operation::ClusterAction) {
                            self.lockout.refused_cluster_action(
                                &context.principal,
                                &context.conditions.listener,
                            );
                        }
                    }
                    true
                }
                // Super users: allowed, not counted, not audited but for their mutations when
                // the operator asks.
                Err(reason) if reason.allowed() => {
                    allowed.iter_mut().for_each(|a| *a = true);
                    if self.config.audit_super_users_mutations {
                        for action in actions {
                            lane.audit_super_user_mutation(
                                context,
                                action,
                                &self.auditor,
                                &mut now,
                            );
                        }
                    }
                    true
                }
                // Nothing may decide: every action is refused, counted and audited.
                Err(reason) => {
                    actions.iter().for_each(|action| {
                        lane.refuse_undecided(reason, context, action, &self.auditor, &mut now)
                    });
                    false
                }
            };
            then(lane, answered, allowed)
        })
    }

    /// Kafka's `authorizeByResourceType` (asked for idempotent producers): never audited.
    pub fn authorize_by_resource_type(
        &self,
        context: &RequestContext,
        operation: Option<Operation>,
        resource_type: Option<ResourceType>,
    ) -> bool {
        self.with_deciding(&context.principal, |_, in_force| {
            match (in_force, operation, resource_type) {
                (Ok(applied), Some(operation), Some(resource_type)) => applied
                    .policies
                    .holds_on_some_resource(context, operation, resource_type, Instant::now()),
                (Err(reason), _, _) => reason.allowed(),
                _ => false,
            }
        })
    }

    /// Waits until a snapshot is in force, at most `timeout`; true if one is.
    pub fn await_snapshot(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut state = self.state.lock();
        while self.current.read().is_none() && !self.stopping.load(Ordering::Acquire) {
            if self.changed.wait_until(&mut state, deadline).timed_out() {
                break;
            }
        }
        self.current.read().is_some()
    }

    /// Stops the agent's thread (which writes out the folded audit) and drops the snapshot: a
    /// closed agent refuses everything. Waits for the final audit delivery at most
    /// [`CLOSE_DEADLINE`]: a slow or silent server must not hold up a broker's shutdown. Past it,
    /// the thread finishes on its own (what it could not send, it spools).
    pub fn shutdown(&self) {
        self.stopping.store(true, Ordering::Release);
        {
            let _state = self.state.lock();
            self.changed.notify_all();
        }
        *self.current.write() = None;
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.acl_view_serial.fetch_add(1, Ordering::AcqRel);
        if let Some(handle) = self.background.lock().take() {
            let deadline = std::time::Instant::now() + CLOSE_DEADLINE;
            while !handle.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if handle.is_finished() {
                let _ = handle.join();
            } else {
                // The thread is held up by the server: the process may end as soon as this returns,
                // so what waits in memory is kept here (spooled, or counted dropped).
                let kept = self.keep_audit_at_close();
                tracing::warn!(
                    "the agent's thread did not finish within {} s of close() (the server is slow to answer); {kept}, and the thread goes on in the background",
                    CLOSE_DEADLINE.as_secs()
                );
            }
        }
        // The metrics end with the process: the audit's account of this life stays in the log, to be
        // set beside what the server received (the soak reconciles it).
        tracing::info!(
            "closed: {} accesses were handed to the audit since start, {} of them dropped",
            self.lanes.counts().audited,
            self.dropped_audit_events()
        );
        for (user, account) in self.auditor.ledger().top(REPORTED_USERS) {
            tracing::info!(
                "closed: the audit of user {user:?}: {} accesses, {} of them dropped",
                account.accesses,
                account.dropped
            );
        }
    }

    /// Works out the staleness state now (see `staleness`).
    pub(crate) fn update_staleness(&self) {
        let version = self
            .current
            .read()
            .as_ref()
            .map(|a| a.policies.policy_version);
        self.staleness.update(std::time::Instant::now(), version);
    }

    /// Everything the metrics show, now (the table of `metrics.rs` says how each is read).
    pub fn stats(&self) -> Stats {
        let applied = self.current.read().clone();
        let reading = crate::metrics::Reading {
            agent: self,
            applied: applied.as_deref(),
            counts: self.lanes.counts(),
            instance: &self.instance,
        };
        Stats::read(&reading)
    }

    /// The agent's own thread: keeps the policies current (policy file changes, or rounds with
    /// the server) and delivers the audit: refusals within a tick, folded allowed accesses every
    /// fold window, the spool every flush interval (and without a pause while a resend that ran
    /// out of its budget has more to send), and everything once more at the end.
    ///
    /// A panic in one round (in the source's part or in the audit's) is caught, logged once, and
    /// the thread carries on with the next round: a bug met once must not leave the broker with
    /// policies that are never updated again and an audit that is never delivered. No delay can
    /// overflow the clock: whatever a setting or the server asks for, the next round is in reach.
    fn run_background(&self, mut source: Box<dyn Source>) {
        let tick = Duration::from_millis(250);
        let started = std::time::Instant::now();
        let mut next_source = later(started, source.first_round_after());
        let mut next_fold = later(started, self.config.audit_fold_window);
        let mut next_flush = later(started, self.config.audit_flush_interval);
        let (mut source_panic, mut audit_panic, mut view_panic) = (None, None, None);
        loop {
            {
                let backlog = source.has_backlog();
                let mut state = self.state.lock();
                if !self.stopping.load(Ordering::Acquire) && !backlog {
                    let wake = next_source.min(later(std::time::Instant::now(), tick));
                    self.changed.wait_until(&mut state, wake);
                }
            }
            let stopping = self.stopping.load(Ordering::Acquire);
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
            if self.loaded_since_trim.swap(false, Ordering::AcqRel) {
                give_back_freed_memory();
            }
        }
    }

    /// Once a validity period of the snapshot in force starts or ends, the ACL view is recomputed
    /// here, within a tick of the boundary, and swapped in: `acls()` callers on Kafka's request
    /// threads never build a view nor wait for one (an offline agent with an unchanged file would
    /// otherwise show the policies of the moment it loaded, forever).
    fn advance_acl_view(&self) {
        let applied = self.current.read().clone();
        let Some(applied) = applied else { return };
        let policies = &applied.policies;
        if let Some(view) = policies.advance_acl_view(Instant::now()) {
            self.acl_view_serial.fetch_add(1, Ordering::AcqRel);
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
    fn drop_expired_decisions(&self) {
        let applied = self.current.read().clone();
        if let Some(applied) = applied {
            applied.decisions.drop_expired();
        }
    }

    /// Turns due audit groups into events and hands them on to the source: to GrantForge in server
    /// mode, to the log `grantforge.audit` in offline mode.
    fn deliver_audit(&self, source: &mut dyn Source, fold_over: bool, retry_spool: bool) {
        let events = self.take_audit_events(fold_over);
        source.hand_on(&events, retry_spool, self.stopping.load(Ordering::Acquire));
    }

    /// Every access event waiting, and those of the delivery the agent's thread is held up in,
    /// from the close path: spooled beside the agent's thread (which takes no event twice, and
    /// spools none of that delivery again). Without a place to put them, they are not taken: the thread hands
    /// them on when it can. Says what became of them.
    fn keep_audit_at_close(&self) -> String {
        let Some(keep) = &self.audit_at_close else {
            return "the accesses waiting to be audited are left to it".to_string();
        };
        let events = self.take_audit_events(true);
        let in_flight = keep(&events);
        let waiting: u64 = events.iter().map(|e| e.count).sum();
        format!("{waiting} accesses waiting to be audited and {in_flight} in a delivery the server had not answered were put in the audit spool")
    }

    /// The access events due now (every folded group when `fold_over`), counted as evented.
    fn take_audit_events(&self, fold_over: bool) -> Vec<AccessEvent> {
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

impl Observed for Agent {
    fn comparisons(&self) -> &Comparisons {
        &self.comparisons
    }

    fn queued_audit_groups(&self) -> usize {
        self.auditor.queued()
    }

    /// The audit's account per user, the most accesses first ([`REPORTED_USERS`] of them).
    fn audit_by_user(&self) -> String {
        self.auditor.ledger().report(REPORTED_USERS)
    }

    fn dropped_audit_events(&self) -> u64 {
        self.auditor.dropped_total() + self.delivery.dropped.load(Ordering::Relaxed)
    }

    fn delivery(&self) -> &DeliveryStats {
        &self.delivery
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn staleness(&self) -> &Staleness {
        &self.staleness
    }
}

impl Holder for Agent {
    /// Puts a snapshot in force; a refusal of everything (another service type) is lifted only
    /// once it is, never before: no request is decided by the older snapshot in between.
    fn apply(&self, policies: KafkaPolicies, from: &str) {
        if self.stopping.load(Ordering::Acquire) {
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
        *self.current.write() = Some(Arc::new(applied));
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.acl_view_serial.fetch_add(1, Ordering::AcqRel);
        let was_refusing_all = self.refuse_all.swap(false, Ordering::AcqRel);
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
        self.loaded_since_trim.store(true, Ordering::Release);
        let _state = self.state.lock();
        self.changed.notify_all();
    }

    /// Refuses everything but super users: the snapshot's service type is not kafka. Only
    /// [`Agent::apply`] of a kafka snapshot lifts it, once that snapshot is in force.
    fn refuse_everything(&self, service_type: &str) {
        if !self.refuse_all.swap(true, Ordering::AcqRel) {
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

/// `action` as [`Agent::compare`] asks the agent: in shadow mode GrantForge enforces nothing, so
/// its answers are not audited; in compare mode a disagreement is audited once, by its
/// disagreement event (the enforced answer and Kafka's), so the access's own audit is asked for
/// only where GrantForge's answer, whichever it is, would agree with Kafka's. A question that is
/// not compared keeps Kafka's flags.
fn audited_as_compared<'a>(
    action: &Action<'a>,
    kafka_allowed: bool,
    decider: Decider,
) -> Action<'a> {
    match decider {
        Decider::Kafka => unaudited_copy(action),
        Decider::GrantForge if is_compared(action) => Action {
            log_if_allowed: action.log_if_allowed && kafka_allowed,
            log_if_denied: action.log_if_denied && !kafka_allowed,
            ..*action
        },
        Decider::GrantForge => *action,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{context, write};

    #[test]
    fn close_leaves_the_audit_to_the_agents_thread_when_it_has_nowhere_else_to_put_it() {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/snapshots/e2e.json"
        );
        let settings = [("grantforge.policy.file".to_string(), fixture.to_string())];
        let agent = Agent::start(AgentConfig::from_settings(&settings.into()).unwrap()).unwrap();
        let refused = grantforge_kafka::Reason::NoPolicy;
        agent.auditor.record(
            &context("bob"),
            &write("orders"),
            &refused,
            1,
            Instant::now(),
        );
        assert_eq!(
            agent.keep_audit_at_close(),
            "the accesses waiting to be audited are left to it",
            "offline mode: the log is the thread's"
        );
        assert_eq!(
            agent.queued_audit_groups(),
            1,
            "still there, not taken and lost"
        );
        agent.shutdown();
    }

    /// An agent on the e2e fixture, with `extra` settings.
    fn e2e_agent(extra: &[(&str, &str)]) -> Arc<Agent> {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/snapshots/e2e.json"
        );
        let settings: std::collections::BTreeMap<String, String> =
            [("grantforge.policy.file", fixture)]
                .iter()
                .chain(extra)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        Agent::start(AgentConfig::from_settings(&settings).unwrap()).unwrap()
    }

    #[test]
    fn super_users_mutations_are_audited_when_asked_and_nothing_else_of_theirs() {
        let asked = |operation, resource_type, name| Action {
            operation: Some(operation),
            resource_type: Some(resource_type),
            name,
            ..write("")
        };
        let actions = [
            asked(Operation::Delete, ResourceType::Topic, "orders"),
            asked(Operation::Create, ResourceType::Topic, "orders"),
            asked(Operation::Write, ResourceType::Topic, "orders"),
            asked(
                Operation::ClusterAction,
                ResourceType::Cluster,
                "kafka-cluster",
            ),
        ];
        for audited in [true, false] {
            let agent = e2e_agent(&[
                ("super.users", "User:admin"),
                (
                    "grantforge.audit.super.users.mutations",
                    &audited.to_string(),
                ),
            ]);
            let mut allowed = [false; 4];
            agent.authorize(&context("admin"), &actions, &mut allowed);
            assert_eq!(allowed, [true; 4], "a super user is allowed everything");
            let events = agent.take_audit_events(true);
            let lines: Vec<String> = events.iter().map(AccessEvent::log_line).collect();
            let mut operations: Vec<_> = events.iter().map(|e| e.operation).collect();
            operations.sort();
            if audited {
                assert_eq!(
                    operations,
                    [Some(Operation::Create), Some(Operation::Delete)],
                    "{lines:?}"
                );
                assert!(
                    lines
                        .iter()
                        .all(|l| l.contains("User:admin is Allowed operation = ")
                            && l.contains("as a super user")),
                    "{lines:?}"
                );
            } else {
                assert_eq!(operations, [], "off by default: {lines:?}");
            }
            agent.shutdown();
        }
    }

    #[test]
    fn a_principal_excluded_from_audit_is_decided_as_anyone_but_never_audited() {
        let agent = e2e_agent(&[("grantforge.audit.excluded.principals", "User:bob")]);
        let (mut bobs, mut alices) = ([true], [false]);
        agent.authorize(&context("bob"), &[write("orders")], &mut bobs);
        agent.authorize(&context("alice"), &[write("orders")], &mut alices);
        assert_eq!((bobs, alices), ([false], [true]), "decided as anyone");
        let users: Vec<String> = agent
            .take_audit_events(true)
            .iter()
            .map(AccessEvent::user)
            .collect();
        assert_eq!(users, ["alice"], "bob's refusal is not audited");
        agent.shutdown();
    }
}
