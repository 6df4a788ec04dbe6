//! The quota table of this JVM, shared by every `GrantForgeClientQuotaCallback` in it.
//!
//! A node that is broker and controller at once creates two callback instances; both receive every
//! quota entity, and both must resolve alike (they share Kafka's metrics, so two answers would flip
//! a group's limit back and forth). So there is one table per JVM, as there is one agent per
//! policy source. The resolution itself is `grantforge-quotas` (pure); this module adds what a
//! running broker needs: a lock, a change count per quota type (an instance that did not make a
//! change tells Kafka to re-read its limits once), one WARN per oversubscribed user, one WARN per
//! operator's value too small for Kafka to enforce, and one INFO line when a burst of changes is
//! over (never one per request or per entity).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use grantforge_quotas::QuotaTable;
pub use grantforge_quotas::{
    Entity, EntityError, Part, QuotaType, Resolved, Rule, SafeBounds,
    DEFAULT_SOCKET_REQUEST_MAX_BYTES,
};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::metrics::{Metric, Value};

/// How long the entities must stay unchanged before the INFO line that sums them up.
const QUIET_BEFORE_SUMMARY: Duration = Duration::from_millis(500);

/// Why the request path could not keep an answer for later questions (the shim remembers answers in a
/// view bounded per quota type and per user: `QuotaView.java`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotKept {
    /// The view of the quota type holds as many answers as it may.
    TypeFull,
    /// The user holds its share of the view already.
    UserShareFull,
    /// The user and client id are too long to keep.
    LongNames,
}

/// The quota table of this JVM.
pub struct Quotas {
    table: RwLock<QuotaTable>,
    /// Per quota type: changes of a value so far (an update to the same value is no change).
    changes: [AtomicU64; QuotaType::COUNT],
    /// (type, user) pairs whose oversubscription was logged.
    warned: Mutex<HashSet<(QuotaType, String)>>,
    /// Per quota type: answers the request path could not keep (counted since the JVM started).
    not_kept: [AtomicU64; QuotaType::COUNT],
    /// (type, user) pairs whose full view (user `None`) or full share was logged, until that type changes.
    fills_logged: Mutex<HashSet<(QuotaType, Option<String>)>>,
    /// When the entities last changed, and whether the summary for that is still to be logged.
    pending_summary: Mutex<Option<Instant>>,
    changed: Condvar,
}

/// The table of this JVM (made on first use).
pub fn shared() -> &'static Quotas {
    static QUOTAS: OnceLock<Quotas> = OnceLock::new();
    QUOTAS.get_or_init(|| Quotas {
        table: RwLock::new(QuotaTable::new()),
        changes: Default::default(),
        warned: Mutex::new(HashSet::new()),
        not_kept: Default::default(),
        fills_logged: Mutex::new(HashSet::new()),
        pending_summary: Mutex::new(None),
        changed: Condvar::new(),
    })
}

/// A reading of the table's metrics (`MonitorableGrantForgeClientQuotaCallback` publishes them as
/// Kafka plugin metrics on Kafka 4.1 and later).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuotaStats {
    pub entities: u64,
    pub users_reserving: u64,
    pub oversubscribed: u64,
    pub changes: u64,
    pub not_kept: u64,
}

/// The table's metrics, in the order the shim publishes them (`docs/operations.md` lists them).
pub const QUOTA_METRICS: &[Metric<QuotaStats>] = &[
    Metric {
        name: "quota-entities",
        description: "Quota values configured (an entity with two quota types counts twice)",
        value: |s| Value::Number(s.entities as i64),
    },
    Metric {
        name: "quota-users-reserving",
        description: "Users with reserved sub-quotas (<user, client> entities)",
        value: |s| Value::Number(s.users_reserving as i64),
    },
    Metric {
        name: "quota-oversubscribed-users",
        description: "Users whose other clients share the smallest bound Kafka enforces because their sub-quotas leave less of their total (per quota type, counted once a client of theirs connects, until the quotas change)",
        value: |s| Value::Number(s.oversubscribed as i64),
    },
    Metric {
        name: "quota-changes",
        description: "Changes of a quota value since the JVM started",
        value: |s| Value::Number(s.changes as i64),
    },
    Metric {
        name: "quota-answers-not-kept",
        description: "Questions of Kafka's request path answered by the native library because the shim's view of answers was full (per quota type, or the user's share of it) or the names too long; counted since the JVM started",
        value: |s| Value::Number(s.not_kept as i64),
    },
];

impl Quotas {
    /// A reading of the table's metrics.
    pub fn stats(&self) -> QuotaStats {
        let table = self.table.read();
        QuotaStats {
            entities: table.entities() as u64,
            users_reserving: table.users_reserving() as u64,
            oversubscribed: self.warned.lock().len() as u64,
            changes: QuotaType::ALL.iter().map(|t| self.changes(*t)).sum(),
            not_kept: self
                .not_kept
                .iter()
                .map(|n| n.load(Ordering::Relaxed))
                .sum(),
        }
    }

    /// Takes the node's `socket.request.max.bytes`, which decides how small a bound Kafka enforces
    /// (every instance of a JVM is configured alike). Returns whether that changed an answer's
    /// possible limit, so that remembered answers must be dropped.
    pub fn configure(&self, bounds: SafeBounds) -> bool {
        let mut table = self.table.write();
        let changed = table.bounds() != bounds;
        table.set_bounds(bounds);
        changed
    }

    /// Kafka's `updateQuota`. Returns whether a value changed; a new value too small for Kafka's
    /// throttle to enforce is used as set, with one WARN naming its entity.
    pub fn update(&'static self, entity: &Entity, quota_type: QuotaType, value: f64) -> bool {
        let mut bounds = None;
        let changed = self.change(quota_type, |table| {
            let before = table.value(entity, quota_type);
            table.update(entity, quota_type, value);
            bounds = Some(table.bounds());
            before != Some(value)
        });
        match bounds {
            Some(bounds) if changed && bounds.overflows(quota_type, value) => {
                tracing::warn!(
                    "the {quota_type} of {} is {value}, below the {} that Kafka's throttle arithmetic enforces on requests of up to {} bytes (socket.request.max.bytes): a large request of its clients overflows Kafka's throttle time and goes unthrottled. The value is used as set; raise it to at least {} for Kafka to enforce it",
                    entity,
                    bounds.smallest(quota_type),
                    bounds.socket_request_max_bytes(),
                    bounds.smallest(quota_type),
                );
            }
            _ => {}
        }
        changed
    }

    /// Kafka's `removeQuota`. Returns whether a value was removed.
    pub fn remove(&'static self, entity: &Entity, quota_type: QuotaType) -> bool {
        self.change(quota_type, |table| {
            let before = table.value(entity, quota_type);
            table.remove(entity, quota_type);
            before.is_some()
        })
    }

    fn change(
        &'static self,
        quota_type: QuotaType,
        apply: impl FnOnce(&mut QuotaTable) -> bool,
    ) -> bool {
        let changed = apply(&mut self.table.write());
        if changed {
            self.changes[quota_type.index()].fetch_add(1, Ordering::AcqRel);
            self.warned.lock().retain(|(t, _)| *t != quota_type);
            self.fills_logged.lock().retain(|(t, _)| *t != quota_type);
            self.summary_after_quiet();
        }
        changed
    }

    /// Changes of `quota_type` so far: an instance that saw another count than its own last one
    /// tells Kafka to re-read its limits (`quotaResetRequired`).
    pub fn changes(&self, quota_type: QuotaType) -> u64 {
        self.changes[quota_type.index()].load(Ordering::Acquire)
    }

    /// The group and limit of a connection; an oversubscribed user is logged once (per type, until
    /// that type's entities change).
    pub fn resolve(&self, quota_type: QuotaType, user: &str, client_id: &str) -> Resolved {
        let (resolved, smallest) = {
            let table = self.table.read();
            let resolved = table.resolve(quota_type, user, client_id);
            (resolved, table.bounds().smallest(quota_type))
        };
        if resolved.oversubscribed && self.warned.lock().insert((quota_type, user.to_string())) {
            tracing::warn!(
                "the {quota_type} sub-quotas reserved for user {} leave less than {smallest} of its total ({}): its other clients share {smallest}, the smallest bound Kafka's throttle arithmetic enforces",
                user,
                resolved.rule.describe(),
            );
        }
        resolved
    }

    /// The request path could not keep this answer: counted, and one INFO line the first time a type's
    /// view (or one user's share of it) is full after a change of that type.
    pub fn not_kept(&self, quota_type: QuotaType, user: &str, why: NotKept) {
        self.not_kept[quota_type.index()].fetch_add(1, Ordering::Relaxed);
        let key = match why {
            NotKept::TypeFull => (quota_type, None),
            NotKept::UserShareFull => (quota_type, Some(user.to_string())),
            NotKept::LongNames => return,
        };
        if self.fills_logged.lock().insert(key) {
            match why {
                NotKept::TypeFull => tracing::info!(
                    "the request path's view of {quota_type} answers is full: further connections of new users and client ids are resolved by the native library on each request until the {quota_type} quotas change (quota-answers-not-kept counts them)"
                ),
                _ => tracing::info!(
                    "user {} holds its share of the request path's view of {quota_type} answers (many client ids): its further client ids are resolved by the native library on each request until the {quota_type} quotas change (quota-answers-not-kept counts them)",
                    user
                ),
            }
        }
    }

    /// Kafka's `quotaLimit(type, tags)`.
    pub fn limit_of_group(
        &self,
        quota_type: QuotaType,
        user_tag: &str,
        client_tag: &str,
    ) -> Option<f64> {
        self.table
            .read()
            .limit_of_group(quota_type, user_tag, client_tag)
    }

    /// Logs one INFO line once the entities have stayed unchanged for a moment (Kafka replays
    /// every entity at start, one call each).
    fn summary_after_quiet(&'static self) {
        static SUMMARY_THREAD: OnceLock<()> = OnceLock::new();
        // The thread is woken for the first change of a burst only; it re-reads the time itself.
        if self
            .pending_summary
            .lock()
            .replace(Instant::now())
            .is_none()
        {
            self.changed.notify_all();
        }
        SUMMARY_THREAD.get_or_init(|| {
            let _ = std::thread::Builder::new()
                .name("grantforge-quotas".to_string())
                .spawn(move || loop {
                    let mut pending = self.pending_summary.lock();
                    match *pending {
                        None => self.changed.wait(&mut pending),
                        Some(at) if at.elapsed() < QUIET_BEFORE_SUMMARY => {
                            let _ = self.changed.wait_for(
                                &mut pending,
                                QUIET_BEFORE_SUMMARY.saturating_sub(at.elapsed()),
                            );
                        }
                        Some(_) => {
                            *pending = None;
                            drop(pending);
                            tracing::info!("quotas changed: {}", self.table.read().summary());
                        }
                    }
                });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_changed_value_counts_as_a_change_of_its_type() {
        // (The other tests of this table use other types: the table is the process's.)
        let (quotas, mutation, request) =
            (shared(), QuotaType::ControllerMutation, QuotaType::Request);
        let entity = Entity::user("quotas-test-counts");
        let (mutations, requests) = (quotas.changes(mutation), quotas.changes(request));
        assert!(quotas.update(&entity, mutation, 5.0));
        assert!(
            !quotas.update(&entity, mutation, 5.0),
            "the same value again: no change"
        );
        assert!(quotas.remove(&entity, mutation));
        assert!(!quotas.remove(&entity, mutation), "nothing to remove");
        assert_eq!(quotas.changes(mutation), mutations + 2);
        assert_eq!(
            quotas.changes(request),
            requests,
            "another type is not touched"
        );
    }

    #[test]
    fn every_quota_metric_is_in_the_operators_documentation() {
        let docs =
            std::fs::read_to_string(crate::test_support::in_crate("../../docs/operations.md"))
                .unwrap();
        for metric in QUOTA_METRICS {
            assert!(
                docs.contains(&format!("`{}`", metric.name)),
                "docs/operations.md does not list `{}`",
                metric.name
            );
        }
    }

    #[test]
    fn each_field_of_a_reading_is_its_metric() {
        let stats = QuotaStats {
            entities: 1,
            users_reserving: 2,
            oversubscribed: 3,
            changes: 4,
            not_kept: 5,
        };
        let values: Vec<Value> = QUOTA_METRICS.iter().map(|m| (m.value)(&stats)).collect();
        assert_eq!(
            values,
            [1, 2, 3, 4, 5].map(Value::Number),
            "quota-entities, quota-users-reserving, quota-oversubscribed-users, quota-changes, quota-answers-not-kept"
        );
    }

    #[test]
    fn resolves_from_the_shared_table() {
        let quotas = shared();
        quotas.update(&Entity::user("quotas-test-user2"), QuotaType::Fetch, 8192.0);
        quotas.update(
            &Entity::user_client("quotas-test-user2", "clientA"),
            QuotaType::Fetch,
            20.0,
        );
        let shared_group = quotas.resolve(QuotaType::Fetch, "quotas-test-user2", "clientC");
        assert_eq!(
            (shared_group.tags(), shared_group.limit),
            (("quotas-test-user2", ""), Some(8172.0))
        );
        assert_eq!(
            quotas.limit_of_group(QuotaType::Fetch, "quotas-test-user2", "clientA"),
            Some(20.0)
        );
    }
}
