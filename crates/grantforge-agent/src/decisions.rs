//! The decision cache: a broker asks the same questions on every produce and fetch.
//!
//! One cache per applied snapshot: a new snapshot comes with a new, empty cache, so no answer of an
//! old snapshot can be served after a swap, however the races fall (a request holds the snapshot
//! and its cache together). The key holds everything a decision can read: the principal, the
//! resource, the operation, and the client address, listener and client id when some policy's
//! conditions read them. Only settled decisions are kept; errors never are. A validity period may
//! start or end up to the TTL late (documented in `docs/configuration.md`).

use std::net::IpAddr;
use std::time::Duration;

use grantforge_kafka::{Action, ConditionReads, Decided, Operation, RequestContext, ResourceType};
use moka::sync::Cache;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct DecisionKey {
    principal_type: String,
    principal_name: String,
    client_address: Option<IpAddr>,
    listener: Option<String>,
    client_id: Option<String>,
    resource_type: Option<ResourceType>,
    name: String,
    operation: Option<Operation>,
}

pub struct DecisionCache {
    cache: Option<Cache<DecisionKey, Decided>>,
    reads: ConditionReads,
}

impl DecisionCache {
    /// A cache of `max_entries` kept for `ttl`; either 0 turns caching off.
    pub fn new(max_entries: u64, ttl: Duration, reads: ConditionReads) -> DecisionCache {
        let cache = (max_entries > 0 && !ttl.is_zero()).then(|| Cache::builder().max_capacity(max_entries).time_to_live(ttl).build());
        DecisionCache { cache, reads }
    }

    /// The kept decision (and `true`), or `decide()`'s (and `false`), kept when it may be.
    pub fn get_or_decide(&self, context: &RequestContext, action: &Action<'_>, decide: impl FnOnce() -> Decided) -> (Decided, bool) {
        let Some(cache) = &self.cache else { return (decide(), false) };
        let key = self.key(context, action);
        if let Some(decided) = cache.get(&key) {
            return (decided, true);
        }
        let decided = decide();
        if decided.cacheable {
            cache.insert(key, decided);
        }
        (decided, false)
    }

    /// Decisions kept now (moka counts lazily: its pending bookkeeping is run first; this is a
    /// metrics read, never on a request path).
    pub fn size(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| {
            c.run_pending_tasks();
            c.entry_count()
        })
    }

    fn key(&self, context: &RequestContext, action: &Action<'_>) -> DecisionKey {
        let conditions = &context.conditions;
        DecisionKey {
            principal_type: context.principal.principal_type.clone(),
            principal_name: context.principal.name.clone(),
            client_address: conditions.client_address.filter(|_| self.reads.client_address),
            listener: self.reads.listener.then(|| conditions.listener.clone()),
            client_id: self.reads.client_id.then(|| conditions.client_id.clone()),
            resource_type: action.resource_type,
            name: action.name.to_string(),
            operation: action.operation,
        }
    }

}

#[cfg(test)]
mod tests {
    use super::*;
    use grantforge_engine::Outcome;
    use grantforge_kafka::{KafkaContext, Principal};
    use std::cell::Cell;

    fn context(address: &str, client_id: &str) -> RequestContext {
        RequestContext {
            principal: Principal { principal_type: "User".into(), name: "alice".into() },
            conditions: KafkaContext { client_address: Some(address.parse().unwrap()), listener: "L".into(), client_id: client_id.into() },
            request_type: 0,
            request_version: 0,
        }
    }

    fn read(topic: &str) -> Action<'_> {
        Action { operation: Some(Operation::Read), resource_type: Some(ResourceType::Topic), literal: true, name: topic, log_if_allowed: true, log_if_denied: true }
    }

    const SETTLED: Decided = Decided { allowed: true, outcome: Outcome::Allowed, policy_id: Some(1), unchecked: false, cacheable: true };
    const ERROR: Decided = Decided { allowed: false, outcome: Outcome::NotDetermined, policy_id: None, unchecked: false, cacheable: false };

    #[test]
    fn keeps_settled_decisions_and_never_errors() {
        let cache = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default());
        let asked = Cell::new(0);
        for _ in 0..3 {
            cache.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || { asked.set(asked.get() + 1); SETTLED });
        }
        assert_eq!(asked.get(), 1);
        for _ in 0..3 {
            cache.get_or_decide(&context("10.0.0.1", "a"), &read("bad"), || { asked.set(asked.get() + 1); ERROR });
        }
        assert_eq!(asked.get(), 4, "errors are decided every time");
        assert_eq!(cache.size(), 1);
    }

    #[test]
    fn the_key_holds_what_conditions_read_and_only_that() {
        let blind = DecisionCache::new(100, Duration::from_secs(60), ConditionReads::default());
        blind.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || SETTLED);
        blind.get_or_decide(&context("10.0.0.2", "b"), &read("orders"), || SETTLED);
        assert_eq!(blind.size(), 1, "no condition reads the address: one entry serves every client");
        let by_address = DecisionCache::new(100, Duration::from_secs(60), ConditionReads { client_address: true, ..Default::default() });
        by_address.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || SETTLED);
        by_address.get_or_decide(&context("10.0.0.2", "a"), &read("orders"), || SETTLED);
        by_address.get_or_decide(&context("10.0.0.2", "b"), &read("orders"), || SETTLED);
        assert_eq!(by_address.size(), 2);
    }

    #[test]
    fn zero_entries_or_ttl_turns_caching_off() {
        let off = DecisionCache::new(0, Duration::from_secs(60), ConditionReads::default());
        let asked = Cell::new(0);
        for _ in 0..2 {
            off.get_or_decide(&context("10.0.0.1", "a"), &read("orders"), || { asked.set(asked.get() + 1); SETTLED });
        }
        assert_eq!(asked.get(), 2);
    }
}
