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

use crate::audit::delivery::topic::TopicChannel;
use crate::audit::delivery::DeliveryStats;
use crate::audit::events::EventIds;
use crate::audit::fold::{is_audited, Auditor};
use crate::audit::sinks::SinkAccounts;
use crate::comparison::{is_compared, Compared, Comparisons, Decider};
use crate::config::{AgentConfig, ConfigError, PolicySource};
use crate::lockout::LockoutHint;
use crate::metrics::{Metrics, Observed, Stats};
use crate::request::lane::{self, Lane, Lanes, SnapshotInForce, Undetermined};
use crate::request::unaudited::{unaudited_copy, with_reflagged, with_unaudited, INLINE};
use crate::rules;
use crate::source::file::OfflineSource;
use crate::source::routed::route_audit;
use crate::source::server::ServerSync;
use crate::source::{AuditAtClose, Source, CLOSE_DEADLINE};
use crate::staleness::Staleness;

mod hybrid;
mod thread;

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
    in_force: InForce,
    thread: AgentThread,
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
    /// The audit's sinks: each one's account, and the topic sink's channel to the shim.
    sinks: Arc<SinkAccounts>,
}

/// The snapshot in force, and what tells its readers that it changed.
struct InForce {
    /// The snapshot with its decision cache; `None` means none yet, and everything but super
    /// users is refused.
    current: RwLock<Option<Arc<SnapshotInForce>>>,
    /// Bumped on every applied snapshot: each lane compares it to let go of an older one. (The ACL
    /// view also changes at validity boundaries, without a bump: see `acl_view_serial`.)
    generation: AtomicU64,
    /// Bumped whenever the ACL view may have changed (a snapshot applied, a validity boundary, the
    /// agent closed): the shim keeps the view's bindings decoded while this stays the same.
    acl_view_serial: AtomicU64,
    /// Set when a snapshot is applied: the agent's thread then gives the load's freed memory back.
    loaded_since_trim: AtomicBool,
    /// Set when the server sent a snapshot of another service type: the token belongs to another
    /// kind of service, and everything but super users is refused until a kafka snapshot arrives.
    refuse_all: AtomicBool,
}

/// The agent's own thread: how it is woken and stopped, its handle, and how `close()` keeps the
/// audit itself when the thread is held up past the deadline.
struct AgentThread {
    /// Signalled when the first snapshot is applied and when the agent stops.
    state: Mutex<()>,
    changed: Condvar,
    stopping: AtomicBool,
    handle: Mutex<Option<JoinHandle<()>>>,
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
        let (source, instance): (Box<dyn Source>, String) = match &config.source {
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
        let (mut source, sinks) =
            route_audit(source, &config, &instance, &delivery, auditor.ledger());
        let audit_at_close = source.audit_at_close();
        let agent = Arc::new(Agent {
            in_force: InForce {
                current: RwLock::new(None),
                generation: AtomicU64::new(0),
                acl_view_serial: AtomicU64::new(0),
                loaded_since_trim: AtomicBool::new(false),
                refuse_all: AtomicBool::new(false),
            },
            thread: AgentThread {
                state: Mutex::new(()),
                changed: Condvar::new(),
                stopping: AtomicBool::new(false),
                handle: Mutex::new(None),
                audit_at_close,
            },
            staleness: Staleness::new(config.snapshot_max_age),
            auditor,
            comparisons: Comparisons::default(),
            lockout: LockoutHint::new(config.inter_node_listeners.clone()),
            lanes: Lanes::new(),
            event_ids: EventIds::new(&instance),
            metrics: Metrics::default(),
            instance,
            delivery,
            sinks,
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
        *agent.thread.handle.lock() = Some(handle);
        Ok(agent)
    }

    /// Where the shim's producer takes the topic sink's batches; `None` when the topic is no sink.
    pub fn audit_topic_channel(&self) -> Option<&Arc<TopicChannel>> {
        self.sinks.channel.as_ref()
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The snapshot in force, if any.
    pub fn policies(&self) -> Option<Arc<KafkaPolicies>> {
        self.in_force
            .current
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
                    service_type: self.in_force.refuse_all.load(Ordering::Acquire),
                    too_old: self.staleness.refusing(),
                };
                let generation = self.in_force.generation.load(Ordering::Acquire);
                if refusing == rules::Refusing::default()
                    && !matches!(held, Some((g, _)) if *g == generation)
                {
                    *held = self
                        .in_force
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

    /// Whether the principal is one `grantforge.audit.excluded.principals` names: decided as
    /// anyone, never audited.
    fn excluded_from_audit(&self, context: &RequestContext) -> bool {
        self.config
            .audit_excluded_principals
            .contains(&context.principal)
            || (self.config.audit_topic.as_ref()).is_some_and(|t| t.is_own_request(context))
    }

    pub fn generation(&self) -> u64 {
        self.in_force.generation.load(Ordering::Acquire)
    }

    /// Changes whenever the ACL view may have: read it before the view, so that a view read
    /// with a serial is never older than that serial.
    pub fn acl_view_serial(&self) -> u64 {
        self.in_force.acl_view_serial.load(Ordering::Acquire)
    }

    /// Decides every action of one `authorize` call against the same snapshot; `allowed[i]` is set
    /// for each allowed action (the slice starts all false: refusal is the default).
    pub fn authorize(
        &self,
        context: &RequestContext,
        actions: &[Action<'_>],
        allowed: &mut [bool],
    ) {
        if self.excluded_from_audit(context) {
            with_unaudited(actions, |unaudited| {
                self.decide_all(context, unaudited, allowed, None, |_, _, _| ())
            });
        } else {
            self.decide_all(context, actions, allowed, None, |_, _, _| ());
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
        let excluded = self.excluded_from_audit(context);
        let answered = with_reflagged(
            actions,
            |i, action| {
                if excluded {
                    unaudited_copy(action)
                } else {
                    audited_as_compared(action, kafka[i], decider)
                }
            },
            |asked| self.decide_all(context, asked, allowed, None, count),
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
    /// was refused undecided) and the answers. With `left` (hybrid mode), a question the policies
    /// leave open, or about a resource outside `grantforge.hybrid.resource.prefixes`, is marked
    /// there instead: Kafka's ACLs answer it.
    fn decide_all<R>(
        &self,
        context: &RequestContext,
        actions: &[Action<'_>],
        allowed: &mut [bool],
        mut left: Option<&mut [bool]>,
        then: impl FnOnce(&mut Lane, bool, &[bool]) -> R,
    ) -> R {
        let undetermined = match left {
            Some(_) => Undetermined::LeftToKafka,
            None => Undetermined::Refused,
        };
        self.with_deciding(&context.principal, |lane, in_force| {
            // One time of access for the whole call, read only if something is audited.
            let mut now = None;
            for (i, action) in actions.iter().enumerate() {
                if let Some(left) = left.as_deref_mut() {
                    if !self.config.hybrid_scope.covers(action.name) {
                        left[i] = true;
                        continue;
                    }
                }
                match in_force {
                    Ok(applied) => {
                        let reason = lane.decide(
                            applied,
                            context,
                            action,
                            &self.auditor,
                            &mut now,
                            undetermined,
                        );
                        if undetermined == Undetermined::LeftToKafka && reason.undetermined() {
                            if let Some(left) = left.as_deref_mut() {
                                left[i] = true;
                            }
                            continue;
                        }
                        allowed[i] = reason.allowed();
                        if !allowed[i] && action.operation == Some(Operation::ClusterAction) {
                            self.lockout.refused_cluster_action(
                                &context.principal,
                                &context.conditions.listener,
                            );
                        }
                    }
                    // Super users: allowed, not counted, not audited but for their mutations when
                    // the operator asks.
                    Err(reason) if reason.allowed() => {
                        allowed[i] = true;
                        if self.config.audit_super_users_mutations {
                            lane.audit_super_user_mutation(
                                context,
                                action,
                                &self.auditor,
                                &mut now,
                            );
                        }
                    }
                    // Nothing may decide: refused, counted and audited.
                    Err(reason) => {
                        lane.refuse_undecided(reason, context, action, &self.auditor, &mut now)
                    }
                }
            }
            let answered = in_force.map_or_else(Reason::allowed, |_| true);
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
        let mut state = self.thread.state.lock();
        while self.in_force.current.read().is_none()
            && !self.thread.stopping.load(Ordering::Acquire)
        {
            if self
                .thread
                .changed
                .wait_until(&mut state, deadline)
                .timed_out()
            {
                break;
            }
        }
        self.in_force.current.read().is_some()
    }

    /// Stops the agent's thread (which writes out the folded audit) and drops the snapshot: a
    /// closed agent refuses everything. Waits for the final audit delivery at most
    /// [`CLOSE_DEADLINE`]: a slow or silent server must not hold up a broker's shutdown. Past it,
    /// the thread finishes on its own (what it could not send, it spools).
    pub fn shutdown(&self) {
        self.thread.stopping.store(true, Ordering::Release);
        if let Some(channel) = &self.sinks.channel {
            channel.close(); // the producer closes with the agent: its last batches are spooled
        }
        {
            let _state = self.thread.state.lock();
            self.thread.changed.notify_all();
        }
        *self.in_force.current.write() = None;
        self.in_force.generation.fetch_add(1, Ordering::AcqRel);
        self.in_force.acl_view_serial.fetch_add(1, Ordering::AcqRel);
        if let Some(handle) = self.thread.handle.lock().take() {
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
        // Each sink's account too: a sink delivers in the next life what this one spooled, so a
        // reader of the topic reconciles with the sum over the lives.
        for row in self.sinks.report(REPORTED_USERS).lines() {
            tracing::info!("closed: the audit by sink: {row}");
        }
    }

    /// Works out the staleness state now (see `staleness`).
    pub(crate) fn update_staleness(&self) {
        let version = self
            .in_force
            .current
            .read()
            .as_ref()
            .map(|a| a.policies.policy_version);
        self.staleness.update(std::time::Instant::now(), version);
    }

    /// Everything the metrics show, now (the table of `metrics.rs` says how each is read).
    pub fn stats(&self) -> Stats {
        let applied = self.in_force.current.read().clone();
        let reading = crate::metrics::Reading {
            agent: self,
            applied: applied.as_deref(),
            counts: self.lanes.counts(),
            instance: &self.instance,
        };
        Stats::read(&reading)
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
        self.auditor.dropped_total()
            + self.delivery.dropped.load(Ordering::Relaxed)
            + self.sinks.topic_dropped()
    }

    fn audit_by_sink(&self) -> String {
        self.sinks.report(REPORTED_USERS)
    }

    fn delivery(&self) -> &DeliveryStats {
        &self.delivery
    }

    fn topic_delivery(&self) -> &DeliveryStats {
        &self.sinks.topic
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn staleness(&self) -> &Staleness {
        &self.staleness
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::events::AccessEvent;
    use crate::test_support::{context, e2e_agent, write};

    #[test]
    fn close_leaves_the_audit_to_the_agents_thread_when_it_has_nowhere_else_to_put_it() {
        let fixture = crate::test_support::in_crate("../../tests/fixtures/snapshots/e2e.json");
        let settings = [(
            "grantforge.policy.file".to_string(),
            fixture.display().to_string(),
        )];
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
            let mut operations: Vec<_> = events.iter().map(|e| e.access.operation).collect();
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
