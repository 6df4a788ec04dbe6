//! Audit of the accesses Kafka asks to report, folded.
//!
//! Identical allowed accesses within the fold window (same principal, client address, resource,
//! access type, request type and deciding policy) become one event that says how many there were
//! and when the first and last happened; refusals are reported one by one at once. Offline mode
//! writes the events to the log (logger `grantforge.audit`, one line per event, in the style of
//! Kafka's authorizer log). Memory is bounded by `grantforge.audit.queue.capacity` groups: beyond
//! it new groups are dropped and counted, and the count is logged with the next flush.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use grantforge_engine::Instant;
use grantforge_kafka::{Action, Decided, Operation, RequestContext, ResourceType};
use parking_lot::Mutex;

/// Shards of the fold table: request threads folding different accesses rarely share a lock.
const SHARDS: usize = 16;

/// What makes two allowed accesses "identical" for the audit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FoldKey {
    principal: String,
    client: Option<IpAddr>,
    resource_type: Option<ResourceType>,
    resource: String,
    operation: Option<Operation>,
    request_type: i16,
    policy_id: Option<i64>,
}

/// One folded group of allowed accesses.
#[derive(Clone, Debug)]
struct Group {
    count: u64,
    first: Instant,
    last: Instant,
    request_version: i16,
    listener: String,
    client_id: String,
    policy_version: i64,
}

pub struct Auditor {
    capacity: usize,
    hasher: RandomState,
    shards: Vec<Mutex<HashMap<FoldKey, Group>>>,
    groups: AtomicUsize,
    dropped: AtomicU64,
    dropped_total: AtomicU64,
}

impl Auditor {
    pub fn new(capacity: usize) -> Auditor {
        Auditor {
            capacity,
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            groups: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            dropped_total: AtomicU64::new(0),
        }
    }

    /// Records one decided action, if Kafka asked to report it (`logIfAllowed` / `logIfDenied`).
    /// A disabled service is never audited; super users never reach this.
    pub fn record(&self, context: &RequestContext, action: &Action<'_>, decided: &Decided, version: i64, now: Instant) {
        if decided.unchecked {
            return;
        }
        if !decided.allowed {
            if action.log_if_denied {
                let key = fold_key(context, action, decided);
                let line = describe(&key, "Denied", version);
                tracing::info!(target: "grantforge.audit", "{line}; at {now}");
            }
            return;
        }
        if action.log_if_allowed {
            self.fold(fold_key(context, action, decided), context, version, now);
        }
    }

    fn fold(&self, key: FoldKey, context: &RequestContext, version: i64, now: Instant) {
        let mut hasher = self.hasher.build_hasher();
        key.hash(&mut hasher);
        let mut shard = self.shards[hasher.finish() as usize % SHARDS].lock();
        if let Some(group) = shard.get_mut(&key) {
            group.count += 1;
            group.last = now;
            return;
        }
        if self.groups.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.groups.fetch_sub(1, Ordering::AcqRel);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            self.dropped_total.fetch_add(1, Ordering::Relaxed);
            return;
        }
        shard.insert(
            key,
            Group {
                count: 1,
                first: now,
                last: now,
                request_version: context.request_version,
                listener: context.conditions.listener.clone(),
                client_id: context.conditions.client_id.clone(),
                policy_version: version,
            },
        );
    }

    /// Folded groups waiting to be written out.
    pub fn queued(&self) -> usize {
        self.groups.load(Ordering::Acquire)
    }

    /// Accesses dropped because the group table was full, since start.
    pub fn dropped_total(&self) -> u64 {
        self.dropped_total.load(Ordering::Relaxed)
    }

    /// Writes out every folded group (called every fold window and when the agent stops).
    pub fn flush(&self) {
        for shard in &self.shards {
            let groups = std::mem::take(&mut *shard.lock());
            self.groups.fetch_sub(groups.len(), Ordering::AcqRel);
            for (key, group) in groups {
                let line = describe(&key, "Allowed", group.policy_version);
                let times = if group.count == 1 {
                    format!("at {}", group.first)
                } else {
                    format!("{} identical accesses, first at {}, last at {}", group.count, group.first, group.last)
                };
                tracing::info!(
                    target: "grantforge.audit",
                    "{line}; {times} (request version {}, listener {}, client id {})",
                    group.request_version,
                    group.listener,
                    group.client_id
                );
            }
        }
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(
                "{dropped} allowed accesses were not audited because grantforge.audit.queue.capacity groups were already waiting; raise it or shorten grantforge.audit.fold.window.ms"
            );
        }
    }
}

fn fold_key(context: &RequestContext, action: &Action<'_>, decided: &Decided) -> FoldKey {
    FoldKey {
        principal: context.principal.to_kafka_string(),
        client: context.conditions.client_address,
        resource_type: action.resource_type,
        resource: action.name.to_string(),
        operation: action.operation,
        request_type: context.request_type,
        policy_id: decided.policy_id,
    }
}

/// `Principal = User:alice is Allowed operation = WRITE from host = 10.0.0.1 on resource =
/// topic:orders for request = api key 0 based on policy 1 of policy version 7`.
fn describe(key: &FoldKey, verdict: &str, version: i64) -> String {
    let host = key.client.map_or("unknown".to_string(), |a| a.to_string());
    let basis = key.policy_id.map_or("no policy (refused: nothing decided)".to_string(), |id| format!("policy {id}"));
    format!(
        "Principal = {} is {verdict} operation = {} from host = {host} on resource = {}:{} for request = api key {} based on {basis} of policy version {version}",
        key.principal,
        key.operation.map_or("UNKNOWN", Operation::kafka_name),
        key.resource_type.map_or("unknown", ResourceType::level),
        key.resource,
        key.request_type,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use grantforge_engine::Outcome;
    use grantforge_kafka::{KafkaContext, Principal};

    fn context(user: &str) -> RequestContext {
        RequestContext {
            principal: Principal { principal_type: "User".into(), name: user.into() },
            conditions: KafkaContext { client_address: Some("10.0.0.1".parse().unwrap()), listener: "L".into(), client_id: "c".into() },
            request_type: 0,
            request_version: 9,
        }
    }

    fn write(topic: &str) -> Action<'_> {
        Action {
            operation: Some(Operation::Write),
            resource_type: Some(ResourceType::Topic),
            literal: true,
            name: topic,
            log_if_allowed: true,
            log_if_denied: true,
        }
    }

    const ALLOWED: Decided = Decided { allowed: true, outcome: Outcome::Allowed, policy_id: Some(1), unchecked: false, cacheable: true };

    #[test]
    fn identical_allowed_accesses_fold_into_one_group_and_capacity_bounds_groups() {
        let auditor = Auditor::new(2);
        let now = Instant::now();
        for _ in 0..1000 {
            auditor.record(&context("alice"), &write("orders"), &ALLOWED, 1, now);
        }
        assert_eq!(auditor.groups.load(Ordering::Acquire), 1);
        auditor.record(&context("alice"), &write("payments"), &ALLOWED, 1, now);
        auditor.record(&context("bob"), &write("orders"), &ALLOWED, 1, now);
        assert_eq!(auditor.groups.load(Ordering::Acquire), 2);
        assert_eq!(auditor.dropped.load(Ordering::Acquire), 1);
        let total: u64 = auditor.shards.iter().flat_map(|s| s.lock().values().map(|g| g.count).collect::<Vec<_>>()).sum();
        assert_eq!(total, 1001);
        auditor.flush();
        assert_eq!(auditor.groups.load(Ordering::Acquire), 0);
    }

    #[test]
    fn unchecked_and_unrequested_accesses_are_not_folded() {
        let auditor = Auditor::new(10);
        let mut quiet = write("orders");
        quiet.log_if_allowed = false;
        auditor.record(&context("alice"), &quiet, &ALLOWED, 1, Instant::now());
        let unchecked = Decided { unchecked: true, ..ALLOWED };
        auditor.record(&context("alice"), &write("orders"), &unchecked, 1, Instant::now());
        assert_eq!(auditor.groups.load(Ordering::Acquire), 0);
    }
}
