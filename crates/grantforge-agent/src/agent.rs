//! The agent: the snapshot in force, Kafka's questions answered against it, and its lifecycle.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use grantforge_engine::Instant;
use grantforge_kafka::{Action, Decided, KafkaPolicies, Operation, RequestContext, ResourceType};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::config::{AgentConfig, ConfigError, PolicySource};
use crate::source::{load_policy_file, stamp};

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
    watcher: Mutex<Option<JoinHandle<()>>>,
}

impl Agent {
    /// Starts an agent: in offline mode the policy file is loaded now, so a bad file stops the
    /// broker at start, and a watcher thread applies later changes.
    pub fn start(config: AgentConfig) -> Result<Arc<Agent>, ConfigError> {
        let PolicySource::File(path) = config.source.clone();
        let initial_stamp = stamp(&path);
        let policies = load_policy_file(&path, config.snapshot_max_bytes)?;
        let agent = Arc::new(Agent {
            config,
            current: RwLock::new(None),
            generation: AtomicU64::new(0),
            state: Mutex::new(()),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            watcher: Mutex::new(None),
        });
        agent.apply(policies, &path.display().to_string());
        let watcher = Arc::clone(&agent);
        let handle = std::thread::Builder::new()
            .name("grantforge-policy-file".to_string())
            .spawn(move || watcher.watch_policy_file(initial_stamp))
            .map_err(|e| ConfigError::new("grantforge.policy.file", format!("cannot start the policy file watcher: {e}")))?;
        *agent.watcher.lock() = Some(handle);
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
            audit(context, action, &decided, policies.policy_version);
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

    /// Stops the watcher and drops the snapshot: a closed agent refuses everything.
    pub fn shutdown(&self) {
        self.stopping.store(true, Ordering::Release);
        {
            let _state = self.state.lock();
            self.changed.notify_all();
        }
        if let Some(handle) = self.watcher.lock().take() {
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

    /// Applies every change of the policy file; a bad version is logged once and the last good
    /// snapshot stays in force.
    fn watch_policy_file(&self, mut last_seen: Option<crate::source::FileStamp>) {
        let PolicySource::File(path) = &self.config.source;
        let shown = path.display().to_string();
        loop {
            {
                let mut state = self.state.lock();
                if self.stopping.load(Ordering::Acquire) {
                    return;
                }
                self.changed.wait_for(&mut state, self.config.policy_file_poll_interval);
                if self.stopping.load(Ordering::Acquire) {
                    return;
                }
            }
            let now_seen = stamp(path);
            if now_seen == last_seen {
                continue;
            }
            last_seen = now_seen;
            match load_policy_file(path, self.config.snapshot_max_bytes) {
                Ok(policies) => self.apply(policies, &shown),
                Err(e) => {
                    let kept = self.policies().map(|p| p.policy_version);
                    tracing::error!("{e}; policy version {} stays in force", kept.map_or("none".to_string(), |v| v.to_string()));
                }
            }
        }
    }
}

/// Offline mode audits to the log, in the style of Kafka's authorizer log: refusals Kafka asks to
/// report at INFO, allowed accesses at DEBUG. A disabled service is not audited.
fn audit(context: &RequestContext, action: &Action<'_>, decided: &Decided, version: i64) {
    if decided.unchecked || !(if decided.allowed { action.log_if_allowed } else { action.log_if_denied }) {
        return;
    }
    let verdict = if decided.allowed { "Allowed" } else { "Denied" };
    let operation = action.operation.map_or("UNKNOWN", Operation::kafka_name);
    let resource_type = action.resource_type.map_or("unknown", ResourceType::level);
    let host = context.conditions.client_address.map_or("unknown".to_string(), |a| a.to_string());
    let basis = decided.policy_id.map_or("no policy decided (refused)".to_string(), |id| format!("policy {id}"));
    let principal = context.principal.to_kafka_string();
    let line = format!(
        "Principal = {principal} is {verdict} operation = {operation} from host = {host} on resource = {resource_type}:{name} for request = api key {key} v{version_no} with listener {listener} and client id {client} based on {basis} of policy version {version}",
        name = action.name,
        key = context.request_type,
        version_no = context.request_version,
        listener = context.conditions.listener,
        client = context.conditions.client_id,
    );
    if decided.allowed {
        tracing::debug!(target: "grantforge.audit", "{line}");
    } else {
        tracing::info!(target: "grantforge.audit", "{line}");
    }
}
