//! The agent: the snapshot in force, Kafka's questions answered against it, and its lifecycle.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use grantforge_engine::Instant;
use grantforge_kafka::{Action, KafkaPolicies, Operation, RequestContext, ResourceType};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::config::{AgentConfig, ConfigError, PolicySource};
use crate::audit::Auditor;
use crate::source::{load_policy_file, stamp, FileStamp};

/// One agent, shared by every authorizer of its configuration in this JVM.
pub struct Agent {
    config: AgentConfig,
    /// The snapshot in force; `None` means none yet, and everything but super users is refused.
    current: RwLock<Option<Arc<KafkaPolicies>>>,
    /// Bumped on every applied snapshot: the shim recomputes what it derives (the ACL view) on change.
    generation: AtomicU64,
    /// Signalled when the first snapshot is applied and when the agent stops.
    state: Mutex<()>,
    changed: Condvar,
    stopping: AtomicBool,
    auditor: Auditor,
    background: Mutex<Option<JoinHandle<()>>>,
}

impl Agent {
    /// Starts an agent: in offline mode the policy file is loaded now, so a bad file stops the
    /// broker at start, and a watcher thread applies later changes.
    pub fn start(config: AgentConfig) -> Result<Arc<Agent>, ConfigError> {
        let PolicySource::File(path) = config.source.clone();
        let initial_stamp = stamp(&path);
        let policies = load_policy_file(&path, config.snapshot_max_bytes)?;
        let agent = Arc::new(Agent {
            current: RwLock::new(None),
            generation: AtomicU64::new(0),
            state: Mutex::new(()),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            auditor: Auditor::new(usize::try_from(config.audit_queue_capacity).unwrap_or(usize::MAX)),
            background: Mutex::new(None),
            config,
        });
        agent.apply(policies, &path.display().to_string());
        let worker = Arc::clone(&agent);
        let handle = std::thread::Builder::new()
            .name("grantforge-agent".to_string())
            .spawn(move || worker.run_background(initial_stamp))
            .map_err(|e| ConfigError::new("grantforge.policy.file", format!("cannot start the agent's thread: {e}")))?;
        *agent.background.lock() = Some(handle);
        Ok(agent)
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The snapshot in force, if any.
    pub fn policies(&self) -> Option<Arc<KafkaPolicies>> {
        self.current.read().clone()
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Decides every action of one `authorize` call against the same snapshot; `allowed[i]` is set
    /// for each allowed action (the slice starts all false: refusal is the default).
    pub fn authorize(&self, context: &RequestContext, actions: &[Action<'_>], allowed: &mut [bool]) {
        if self.is_super_user(context) {
            allowed.iter_mut().for_each(|a| *a = true);
            return;
        }
        let Some(policies) = self.policies() else {
            return;
        };
        let now = Instant::now();
        for (action, allowed) in actions.iter().zip(allowed.iter_mut()) {
            let decided = policies.decide(context, action, now);
            *allowed = decided.allowed;
            self.auditor.record(context, action, &decided, policies.policy_version, now);
        }
    }

    /// Kafka's `authorizeByResourceType` (asked for idempotent producers): never audited.
    pub fn authorize_by_resource_type(
        &self,
        context: &RequestContext,
        operation: Option<Operation>,
        resource_type: Option<ResourceType>,
    ) -> bool {
        if self.is_super_user(context) {
            return true;
        }
        let (Some(policies), Some(operation), Some(resource_type)) = (self.policies(), operation, resource_type) else {
            return false;
        };
        policies.holds_on_some_resource(context, operation, resource_type, Instant::now())
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
    /// closed agent refuses everything.
    pub fn shutdown(&self) {
        self.stopping.store(true, Ordering::Release);
        {
            let _state = self.state.lock();
            self.changed.notify_all();
        }
        if let Some(handle) = self.background.lock().take() {
            let _ = handle.join();
        }
        *self.current.write() = None;
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    fn is_super_user(&self, context: &RequestContext) -> bool {
        let principal = &context.principal;
        self.config.super_users.iter().any(|entry| {
            entry
                .strip_prefix(principal.principal_type.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|name| name == principal.name)
        })
    }

    fn apply(&self, policies: KafkaPolicies, from: &str) {
        tracing::info!(
            "applied policy version {} of service {} from {from}: {} access policies{}",
            policies.policy_version,
            policies.service,
            policies.access_policies,
            if policies.service_enabled { "" } else { "; the service is disabled, so Kafka is unchecked" }
        );
        *self.current.write() = Some(Arc::new(policies));
        self.generation.fetch_add(1, Ordering::AcqRel);
        let _state = self.state.lock();
        self.changed.notify_all();
    }

    /// The agent's own thread: applies changes of the policy file and writes out the folded audit
    /// every fold window, and once more when the agent stops.
    fn run_background(&self, mut last_seen: Option<FileStamp>) {
        let poll = self.config.policy_file_poll_interval;
        let fold_window = self.config.audit_fold_window;
        let started = std::time::Instant::now();
        let (mut next_poll, mut next_flush) = (started + poll, started + fold_window);
        loop {
            {
                let mut state = self.state.lock();
                if !self.stopping.load(Ordering::Acquire) {
                    self.changed.wait_until(&mut state, next_poll.min(next_flush));
                }
            }
            if self.stopping.load(Ordering::Acquire) {
                self.auditor.flush();
                return;
            }
            let now = std::time::Instant::now();
            if now >= next_poll {
                self.check_policy_file(&mut last_seen);
                next_poll = now + poll;
            }
            if now >= next_flush {
                self.auditor.flush();
                next_flush = now + fold_window;
            }
        }
    }

    /// Applies a changed policy file; a bad version is logged once and the last good snapshot
    /// stays in force.
    fn check_policy_file(&self, last_seen: &mut Option<FileStamp>) {
        let PolicySource::File(path) = &self.config.source;
        let now_seen = stamp(path);
        if now_seen == *last_seen {
            return;
        }
        *last_seen = now_seen;
        match load_policy_file(path, self.config.snapshot_max_bytes) {
            Ok(policies) => self.apply(policies, &path.display().to_string()),
            Err(e) => {
                let kept = self.policies().map_or("none".to_string(), |p| p.policy_version.to_string());
                tracing::error!("{e}; policy version {kept} stays in force");
            }
        }
    }
}
