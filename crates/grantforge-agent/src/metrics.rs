//! What the agent counts, for JMX and Kafka's plugin metrics (`docs/operations.md` lists them).
//!
//! The request path counts per thread (see `lane`); what is here is counted off that path.
//!
//! **The one place to add a metric** is the table in the `metrics!` invocation below: one line gives
//! the [`Stats`] field, the metric's name, its description, and how it is read from the agent. The
//! JNI bridge sends [`METRICS`] as it is (name, description, value), and the Java shim publishes
//! whatever it lists: the MBean attribute [`Metric::attribute`] (the name in camel case) and, on
//! Kafka 4.1 and later, the plugin metric [`Metric::name`].

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::audit::delivery::DeliveryStats;
use crate::comparison::Comparisons;
use crate::request::lane::{self, Counts, SnapshotInForce};
use crate::staleness::Staleness;

/// The agent's health, as its thread sees it.
#[derive(Default)]
pub struct Metrics {
    pub heartbeat_failures: AtomicU64,
    pub last_error: Mutex<Option<String>>,
    /// When the GrantForge server last confirmed the roles and groups in force (a snapshot
    /// applied from it, a 304 to a revalidation); `None` offline or before it did.
    pub memberships_confirmed: Mutex<Option<std::time::Instant>>,
}

/// What the table reads from the agent beside its snapshot and counts: the agent implements it,
/// so this module never needs the agent itself.
pub(crate) trait Observed {
    fn metrics(&self) -> &Metrics;
    fn staleness(&self) -> &Staleness;
    fn queued_audit_groups(&self) -> usize;
    fn delivery(&self) -> &DeliveryStats;
    /// The topic sink's delivery (its counts stay 0 without the topic sink).
    fn topic_delivery(&self) -> &DeliveryStats;
    fn dropped_audit_events(&self) -> u64;
    fn audit_by_user(&self) -> String;
    fn audit_by_sink(&self) -> String;
    fn comparisons(&self) -> &Comparisons;
}

/// What a metric's reading is read from: the agent, and what `Agent::stats` reads once for all
/// (the snapshot in force, the lanes' counts).
pub(crate) struct Reading<'a> {
    pub agent: &'a dyn Observed,
    pub applied: Option<&'a SnapshotInForce>,
    pub counts: Counts,
    pub instance: &'a str,
}

/// One metric as the shim publishes it, read from a reading `S`: the agent's [`Stats`], or the
/// quota table's (`crate::quotas::QuotaStats`).
pub struct Metric<S: 'static = Stats> {
    /// Kafka's plugin metric name, in kebab case (`decisions-allowed`).
    pub name: &'static str,
    pub description: &'static str,
    /// Its value in a reading.
    pub value: fn(&S) -> Value<'_>,
}

/// A metric's value: JMX type `long`, or `java.lang.String`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Number(i64),
    Text(&'a str),
}

impl<S> Metric<S> {
    /// The MBean attribute: the name in camel case, starting upper case (`DecisionsAllowed`).
    pub fn attribute(&self) -> String {
        self.name
            .split('-')
            .flat_map(|word| {
                let mut chars = word.chars();
                chars
                    .next()
                    .map(|first| first.to_ascii_uppercase())
                    .into_iter()
                    .chain(chars)
            })
            .collect()
    }
}

/// A [`Stats`] field as a [`Value`].
trait AsValue {
    fn as_value(&self) -> Value<'_>;
}

impl AsValue for u64 {
    fn as_value(&self) -> Value<'_> {
        Value::Number(*self as i64)
    }
}

impl AsValue for i64 {
    fn as_value(&self) -> Value<'_> {
        Value::Number(*self)
    }
}

impl AsValue for String {
    fn as_value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

/// Generates [`Stats`] (one field per metric, plus the instance), `Stats::read` and [`METRICS`]
/// from one table: `field: type = "name", "description", |reading| how to read it;`.
macro_rules! metrics {
    ($($(#[doc = $doc:literal])* $field:ident: $ty:ty = $name:literal, $description:literal, |$at:ident| $read:expr;)*) => {
        /// A point-in-time reading of everything the metrics show.
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct Stats {
            $($(#[doc = $doc])* pub $field: $ty,)*
            /// The agent's instance name: it names the MBean, and is no metric.
            pub instance: String,
        }

        impl Stats {
            pub(crate) fn read(reading: &Reading<'_>) -> Stats {
                Stats {
                    $($field: {
                        let $at = reading;
                        $read
                    },)*
                    instance: reading.instance.to_string(),
                }
            }
        }

        /// Every metric, in the order the shim publishes them.
        pub const METRICS: &[Metric] = &[$(Metric { name: $name, description: $description, value: |stats| stats.$field.as_value() },)*];
    };
}

metrics! {
    decisions_allowed: u64 = "decisions-allowed", "Actions allowed since the broker started", |at| at.counts.allowed;
    decisions_denied: u64 = "decisions-denied", "Actions refused since the broker started", |at| at.counts.denied;
    cache_hits: u64 = "cache-hits", "Decisions answered from the decision cache", |at| at.counts.cache_hits;
    cache_misses: u64 = "cache-misses", "Decisions made from the policies", |at| at.counts.cache_misses;
    cache_size: u64 = "cache-size", "Decisions kept in the decision cache now", |at| at.applied.map_or(0, |a| a.decisions.size());
    /// -1 without a snapshot.
    snapshot_version: i64 = "snapshot-version", "Policy version in force, -1 without a snapshot",
        |at| at.applied.map_or(lane::NO_SNAPSHOT_VERSION, |a| a.policies.policy_version);
    /// -1 without a snapshot.
    snapshot_age_seconds: i64 = "snapshot-age-seconds", "Seconds since the snapshot in force was applied, -1 without one",
        |at| at.applied.map_or(-1, |a| a.at.elapsed().as_secs() as i64);
    /// -1 offline, or before the server confirmed the snapshot in force.
    memberships_age_seconds: i64 = "memberships-age-seconds", "Seconds since the GrantForge server last confirmed the roles and groups in force, -1 without that",
        |at| at.agent.metrics().memberships_confirmed.lock().map_or(-1, |t| t.elapsed().as_secs() as i64);
    /// 0 current, 1 degraded, 2 refusing (`staleness`); -1 without a snapshot.
    snapshot_state: i64 = "snapshot-state", "The snapshot in force: 0 current, 1 degraded (the last round did not confirm it), 2 refusing (older than grantforge.snapshot.max.age.ms), -1 none",
        |at| at.applied.map_or(-1, |_| at.agent.staleness().state().number());
    /// -1 before the first round, and offline.
    server_reachable: i64 = "server-reachable", "1 when the last round reached the GrantForge server, 0 when it did not, -1 before the first round and offline",
        |at| at.agent.staleness().server_reachable();
    refused_without_snapshot: u64 = "refused-without-snapshot", "Actions refused because no usable snapshot was in force (none yet, another service type, or too old) since the broker started",
        |at| at.counts.undecided;
    heartbeat_failures: u64 = "heartbeat-failures", "Heartbeats to the GrantForge server that failed",
        |at| at.agent.metrics().heartbeat_failures.load(Ordering::Relaxed);
    audit_accesses: u64 = "audit-accesses", "Accesses handed to the audit (those Kafka asks to report) since the broker started",
        |at| at.counts.audited;
    audit_queued: u64 = "audit-queued", "Folded audit groups waiting to become events", |at| at.agent.queued_audit_groups() as u64;
    audit_spooled_bytes: u64 = "audit-spooled-bytes", "Bytes of audit events in the disk spool",
        |at| at.agent.delivery().spooled_bytes.load(Ordering::Relaxed);
    audit_topic_spooled_bytes: u64 = "audit-topic-spooled-bytes", "Bytes of audit records waiting in the topic sink's spool (audit-spool-topic/) for the audit topic to take them",
        |at| at.agent.topic_delivery().spooled_bytes.load(Ordering::Relaxed);
    audit_topic_spooled_files: u64 = "audit-topic-spooled-files", "Files (one batch each) waiting in the topic sink's spool (audit-spool-topic/)",
        |at| at.agent.topic_delivery().spooled_files.load(Ordering::Relaxed);
    audit_sent: u64 = "audit-sent", "Audit events the GrantForge server accepted", |at| at.agent.delivery().sent.load(Ordering::Relaxed);
    audit_dropped: u64 = "audit-dropped", "Audited accesses dropped (queue or spool full, or refused by the server)",
        |at| at.agent.dropped_audit_events();
    /// The account per user (`audit::ledger`), what GrantForge received set beside it.
    audit_by_user: String = "audit-by-user", "The audit per user, most accesses first: user, accesses, of them dropped (tab-separated, one per line)",
        |at| at.agent.audit_by_user();
    /// Each sink's account per user (`audit::sinks`).
    audit_by_sink: String = "audit-by-sink", "The audit per sink and user: sink, user, accesses routed to the sink, delivered, dropped (tab-separated, one per line); what the sink's spool holds is the rest",
        |at| at.agent.audit_by_sink();
    shadow_agreements: u64 = "shadow-agreements", "Shadow and compare modes: questions Kafka's ACLs and GrantForge answered alike",
        |at| at.counts.agreements;
    shadow_grantforge_refuses: u64 = "shadow-grantforge-refuses", "Shadow and compare modes: questions GrantForge refuses and Kafka's ACLs allow",
        |at| at.agent.comparisons().grantforge_refuses();
    shadow_grantforge_allows: u64 = "shadow-grantforge-allows", "Shadow and compare modes: questions GrantForge allows and Kafka's ACLs refuse",
        |at| at.agent.comparisons().grantforge_allows();
    shadow_not_compared: u64 = "shadow-not-compared", "Shadow and compare modes: questions not compared (no snapshot in force, or a filter question: a listing's)",
        |at| at.counts.not_compared;
    shadow_overflow: u64 = "shadow-overflow", "Shadow and compare modes: disagreements counted in their principal's overflow row of the table (past its share: the resource not named)",
        |at| at.agent.comparisons().overflowed();
    shadow_untracked: u64 = "shadow-untracked", "Shadow and compare modes: disagreements the table had no room for, counted by kind only",
        |at| at.agent.comparisons().untracked();
    /// The top of the disagreements table (`explain --disagreements` shows it).
    shadow_disagreements: String = "shadow-disagreements", "Shadow and compare modes: the most frequent disagreements, one per line (tab-separated)",
        |at| at.agent.comparisons().report(crate::comparison::REPORTED);
    hybrid_acl_decisions: u64 = "hybrid-acl-decisions", "Hybrid mode: questions Kafka's ACLs decided because no policy did (or outside grantforge.hybrid.resource.prefixes), but for the filter questions they refused",
        |at| at.counts.left_to_kafka;
    /// Rounded up: 0 only when none was left.
    hybrid_acl_share_percent: u64 = "hybrid-acl-share-percent", "Hybrid mode: the share of questions left to Kafka's ACLs since start, in percent rounded up (0: none, the ACLs can go)",
        |at| acl_share_percent(&at.counts);
    last_error: String = "last-refresh-error", "The last problem keeping the policies current, empty if none",
        |at| at.agent.metrics().last_error.lock().clone().unwrap_or_default();
}

/// The share of questions hybrid mode left to Kafka's ACLs, in percent rounded up.
fn acl_share_percent(counts: &Counts) -> u64 {
    let all = counts.allowed + counts.denied + counts.left_to_kafka;
    (counts.left_to_kafka * 100).div_ceil(all.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attribute_is_the_name_in_camel_case() {
        let metric = |name| Metric {
            name,
            description: "",
            value: |_: &Stats| Value::Number(0),
        };
        assert_eq!(metric("cache-hits").attribute(), "CacheHits");
        assert_eq!(
            metric("snapshot-age-seconds").attribute(),
            "SnapshotAgeSeconds"
        );
        assert_eq!(metric("last-refresh-error").attribute(), "LastRefreshError");
    }

    #[test]
    fn every_metric_is_in_the_operators_documentation_under_both_names() {
        let docs =
            std::fs::read_to_string(crate::test_support::in_crate("../../docs/operations.md"))
                .unwrap();
        for metric in METRICS {
            assert!(
                docs.contains(&format!("`{}`", metric.name)),
                "docs/operations.md does not list `{}`",
                metric.name
            );
            assert!(
                docs.contains(&format!("`{}`", metric.attribute())),
                "docs/operations.md does not list `{}`",
                metric.attribute()
            );
        }
    }

    #[test]
    fn a_reading_shows_each_field_as_its_metric() {
        let stats = Stats {
            cache_hits: 7,
            snapshot_version: -1,
            last_error: "unreachable".into(),
            ..Stats::default()
        };
        let value = |name: &str| (METRICS.iter().find(|m| m.name == name).unwrap().value)(&stats);
        assert_eq!(value("cache-hits"), Value::Number(7));
        assert_eq!(value("snapshot-version"), Value::Number(-1));
        assert_eq!(value("last-refresh-error"), Value::Text("unreachable"));
    }
}
