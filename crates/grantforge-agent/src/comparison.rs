//! Shadow and compare modes: Kafka's own `StandardAuthorizer` and the agent answer the same
//! questions, one of them deciding ([`Decider`]), and every difference is shown.
//!
//! Each question both answered is an agreement (counted in the request thread's lane) or a
//! disagreement of one of two kinds ([`Kind`]): GrantForge would refuse what Kafka allows, or
//! allow what Kafka refuses. Disagreements are kept by principal, resource, operation and kind
//! ([`DisagreementKey`]): a count since start, a count in the current fold window, the first
//! request's context, the GrantForge policy and the Kafka ACL behind the two answers. Every fold
//! window each key that disagreed in it becomes one audit event with its count, so a storm of
//! disagreements costs a count, not a flood. The table is bounded: at most [`TRACKED`] keys, each
//! of names clamped to the audit's limits; a disagreement past that room is still counted by its
//! kind, and in [`Comparisons::untracked`].
//!
//! The request path takes the table's lock only on a disagreement, which the operator's aim is to
//! have none of.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use grantforge_engine::Instant;
use grantforge_kafka::{Action, Operation, Reason, RequestContext, ResourceType};
use parking_lot::Mutex;

use crate::audit::events::{clamp, limits, AccessEvent, Comparison, EventIds};
use crate::audit::names::{carried, kept_resource, Cut};

/// Disagreement keys kept at most (their names clamped to the audit's limits: a few KiB each).
pub const TRACKED: usize = 512;

/// Disagreements the metric `shadow-disagreements` shows, most frequent first.
pub const REPORTED: usize = 50;

/// The longest Kafka basis kept, in UTF-16 units (it goes into the event's request text).
const BASIS_LIMIT: usize = 400;

/// Which authorizer's answer the clients get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decider {
    /// Shadow mode: Kafka's ACLs decide, the agent is asked beside them (before the switch).
    Kafka,
    /// Compare mode: the agent decides, Kafka's ACLs are asked beside it (after the switch).
    GrantForge,
}

impl Decider {
    /// The mode's name, as logs and the report say it.
    pub fn mode(self) -> &'static str {
        match self {
            Decider::Kafka => "shadow",
            Decider::GrantForge => "compare",
        }
    }
}

/// One action of [`crate::Agent::compare`]: GrantForge's answer and how it compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compared {
    pub grantforge_allowed: bool,
    /// GrantForge's answer differs from Kafka's.
    pub disagrees: bool,
    /// The shim should tell the Kafka ACL behind Kafka's answer (the disagreement's key has none yet).
    pub wants_kafka_basis: bool,
}

impl Compared {
    pub(crate) fn answer(grantforge_allowed: bool) -> Compared {
        Compared {
            grantforge_allowed,
            ..Compared::default()
        }
    }
}

/// The two ways the answers can differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// GrantForge would refuse what Kafka's ACLs allow: a grant the policies lack.
    GrantForgeRefuses,
    /// GrantForge would allow what Kafka's ACLs refuse: the policies are looser.
    GrantForgeAllows,
}

impl Kind {
    fn of(kafka_allowed: bool) -> Kind {
        if kafka_allowed {
            Kind::GrantForgeRefuses
        } else {
            Kind::GrantForgeAllows
        }
    }

    pub fn kafka_allowed(self) -> bool {
        self == Kind::GrantForgeRefuses
    }

    /// The kind in words.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::GrantForgeRefuses => "GrantForge refuses what Kafka allows",
            Kind::GrantForgeAllows => "GrantForge allows what Kafka refuses",
        }
    }
}

/// What a disagreement is kept by: the question and which way the answers differ.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DisagreementKey {
    pub decider: Decider,
    pub kind: Kind,
    pub principal_type: String,
    pub principal_name: String,
    pub resource_type: Option<ResourceType>,
    pub resource: String,
    /// What the resource lost when its name was longer than the audit keeps (`audit::names`).
    pub resource_cut: Option<Cut>,
    pub operation: Option<Operation>,
}

impl DisagreementKey {
    fn of(decider: Decider, kind: Kind, context: &RequestContext, action: &Action<'_>) -> Self {
        let (resource, resource_cut) = kept_resource(action.name);
        DisagreementKey {
            decider,
            kind,
            principal_type: clamp(&context.principal.principal_type, limits::NAME).to_string(),
            principal_name: clamp(&context.principal.name, limits::USER).to_string(),
            resource_type: action.resource_type,
            resource: resource.to_string(),
            resource_cut,
            operation: action.operation,
        }
    }
}

/// One kept disagreement.
#[derive(Clone, Debug)]
pub struct Tally {
    pub total: u64,
    pub first: Instant,
    pub last: Instant,
    /// The GrantForge policy behind its answer (none: no policy decides).
    pub policy_id: Option<i64>,
    pub policy_version: i64,
    /// The Kafka ACL behind Kafka's answer, in words, once the shim has told it.
    pub kafka_basis: Option<String>,
    /// The first request's context: address, listener, client id, request type and version.
    client: Option<IpAddr>,
    listener: String,
    client_id: String,
    request_type: i16,
    request_version: i16,
    /// Disagreements in the current fold window, and when the first of them was.
    in_window: u64,
    window_first: Instant,
}

/// Every comparison of one agent.
#[derive(Default)]
pub struct Comparisons {
    grantforge_refuses: AtomicU64,
    grantforge_allows: AtomicU64,
    untracked: AtomicU64,
    table: Mutex<HashMap<DisagreementKey, Tally>>,
}

impl Comparisons {
    /// Keeps one disagreement; true when the shim should tell the Kafka ACL behind it (the key
    /// has none yet).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        decider: Decider,
        kafka_allowed: bool,
        context: &RequestContext,
        action: &Action<'_>,
        reason: Reason,
        policy_version: i64,
        now: Instant,
    ) -> bool {
        let kind = Kind::of(kafka_allowed);
        match kind {
            Kind::GrantForgeRefuses => &self.grantforge_refuses,
            Kind::GrantForgeAllows => &self.grantforge_allows,
        }
        .fetch_add(1, Ordering::Relaxed);
        let key = DisagreementKey::of(decider, kind, context, action);
        let mut table = self.table.lock();
        if let Some(tally) = table.get_mut(&key) {
            tally.total += 1;
            tally.last = now;
            if tally.in_window == 0 {
                tally.window_first = now;
            }
            tally.in_window += 1;
            tally.policy_id = reason.policy_id();
            tally.policy_version = policy_version;
            return tally.kafka_basis.is_none();
        }
        if table.len() >= TRACKED {
            self.untracked.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let conditions = &context.conditions;
        table.insert(
            key,
            Tally {
                total: 1,
                first: now,
                last: now,
                policy_id: reason.policy_id(),
                policy_version,
                kafka_basis: None,
                client: conditions.client_address,
                listener: clamp(&conditions.listener, limits::REQUEST_PART).to_string(),
                client_id: clamp(&conditions.client_id, limits::REQUEST_PART).to_string(),
                request_type: context.request_type,
                request_version: context.request_version,
                in_window: 1,
                window_first: now,
            },
        );
        true
    }

    /// Keeps the Kafka ACL behind Kafka's answer to a kept disagreement, as the shim found it.
    pub(crate) fn describe_kafka_basis(
        &self,
        decider: Decider,
        kafka_allowed: bool,
        context: &RequestContext,
        action: &Action<'_>,
        basis: &str,
    ) {
        let key = DisagreementKey::of(decider, Kind::of(kafka_allowed), context, action);
        if let Some(tally) = self.table.lock().get_mut(&key) {
            tally.kafka_basis = Some(clamp(basis, BASIS_LIMIT).to_string());
        }
    }

    pub fn grantforge_refuses(&self) -> u64 {
        self.grantforge_refuses.load(Ordering::Relaxed)
    }

    pub fn grantforge_allows(&self) -> u64 {
        self.grantforge_allows.load(Ordering::Relaxed)
    }

    /// Disagreements past the table's room: counted by kind, not kept by key.
    pub fn untracked(&self) -> u64 {
        self.untracked.load(Ordering::Relaxed)
    }

    /// The disagreements of the fold window that ends now, one event per key (with its count),
    /// and the window started afresh.
    pub(crate) fn take_events(&self, ids: &EventIds) -> Vec<AccessEvent> {
        let mut table = self.table.lock();
        let mut events = Vec::new();
        for (key, tally) in table.iter_mut().filter(|(_, t)| t.in_window > 0) {
            events.push(event(ids.next(), key, tally));
            tally.in_window = 0;
        }
        events
    }

    /// The kept disagreements, most frequent first: what `explain --disagreements` and the
    /// metric `shadow-disagreements` show.
    pub fn top(&self, limit: usize) -> Vec<(DisagreementKey, Tally)> {
        let table = self.table.lock();
        let mut rows: Vec<_> = table.iter().map(|(k, t)| (k.clone(), t.clone())).collect();
        rows.sort_by(|a, b| {
            b.1.total
                .cmp(&a.1.total)
                .then_with(|| a.0.principal_name.cmp(&b.0.principal_name))
                .then_with(|| a.0.resource.cmp(&b.0.resource))
        });
        rows.truncate(limit);
        rows
    }

    /// [`Comparisons::top`] as a table in text, one disagreement per line.
    pub fn report(&self, limit: usize) -> String {
        let rows = self.top(limit);
        if rows.is_empty() {
            return String::new();
        }
        let mut text = String::from(
            "count\tmode\tkind\tprincipal\toperation\tresource\tGrantForge policy\tKafka ACL\n",
        );
        for (key, tally) in rows {
            text.push_str(&format!(
                "{}\t{}\t{}\t{}:{}\t{}\t{}:{}\t{}\t{}\n",
                tally.total,
                key.decider.mode(),
                key.kind.describe(),
                key.principal_type,
                // names a client chose, escaped as events carry them: a tab or a line break of
                // theirs would forge a column or a row of the table
                carried(&key.principal_name),
                key.operation.map_or("UNKNOWN", Operation::kafka_name),
                key.resource_type
                    .map_or("UNKNOWN", ResourceType::kafka_name),
                carried(&key.resource),
                policy_words(tally.policy_id),
                tally.kafka_basis.as_deref().unwrap_or("(not told)"),
            ));
        }
        text
    }
}

fn policy_words(policy_id: Option<i64>) -> String {
    policy_id.map_or_else(|| "no policy".to_string(), |id| format!("policy {id}"))
}

/// A key's disagreements of the window as an access event: the decider's answer is the outcome,
/// the GrantForge policy the event's policy, and the comparison says the rest.
fn event(event_id: String, key: &DisagreementKey, tally: &Tally) -> AccessEvent {
    let kafka_allowed = key.kind.kafka_allowed();
    AccessEvent {
        event_id,
        principal_type: key.principal_type.clone(),
        principal_name: key.principal_name.clone(),
        client: tally.client,
        resource_type: key.resource_type,
        resource: key.resource.clone(),
        resource_cut: key.resource_cut,
        operation: key.operation,
        request_type: tally.request_type,
        request_version: tally.request_version,
        listener: tally.listener.clone(),
        client_id: tally.client_id.clone(),
        allowed: match key.decider {
            Decider::Kafka => kafka_allowed,
            Decider::GrantForge => !kafka_allowed,
        },
        policy_id: tally.policy_id,
        policy_version: tally.policy_version,
        count: tally.in_window,
        first: tally.window_first,
        last: tally.last,
        overflow: false,
        comparison: Some(Comparison {
            decider: key.decider,
            kafka_allowed,
            kafka_basis: tally
                .kafka_basis
                .clone()
                .unwrap_or_else(|| "(not told)".to_string()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{context, write};

    fn record(comparisons: &Comparisons, topic: &str) -> bool {
        comparisons.record(
            Decider::Kafka,
            true,
            &context("alice"),
            &write(topic),
            Reason::NoPolicy,
            1,
            Instant::from_unix_millis(0),
        )
    }

    #[test]
    fn past_its_room_the_table_counts_disagreements_by_kind_without_keeping_them() {
        let comparisons = Comparisons::default();
        for i in 0..TRACKED + 10 {
            record(&comparisons, &format!("topic-{i}"));
        }
        assert_eq!(comparisons.grantforge_refuses(), (TRACKED + 10) as u64);
        assert_eq!(comparisons.untracked(), 10);
        assert_eq!(comparisons.top(usize::MAX).len(), TRACKED);
        assert!(
            record(&comparisons, "topic-0"),
            "a kept key still wants its ACL"
        );
        assert!(
            !record(&comparisons, "one-more"),
            "no room: nothing to tell"
        );
    }

    #[test]
    fn names_a_client_chose_cannot_forge_a_row_or_a_column_of_the_report() {
        let comparisons = Comparisons::default();
        comparisons.record(
            Decider::Kafka,
            true,
            &context("mallory\n1\tshadow"),
            &write("orders\tforged"),
            Reason::NoPolicy,
            1,
            Instant::from_unix_millis(0),
        );
        let report = comparisons.report(REPORTED);
        let rows: Vec<&str> = report.lines().collect();
        assert_eq!(rows.len(), 2, "the header and one row: {report}");
        assert_eq!(rows[1].split('\t').count(), 8, "{report}");
        assert!(
            rows[1].contains(r#"(escaped) "mallory\n1\tshadow""#),
            "{report}"
        );
        assert!(
            rows[1].contains(r#"(escaped) "orders\tforged""#),
            "{report}"
        );
    }

    #[test]
    fn each_window_gives_one_event_per_key_with_the_windows_count_only() {
        let comparisons = Comparisons::default();
        let ids = EventIds::new("t");
        for _ in 0..3 {
            record(&comparisons, "orders");
        }
        let events = comparisons.take_events(&ids);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].count, 3);
        assert!(comparisons.take_events(&ids).is_empty(), "a quiet window");
        record(&comparisons, "orders");
        assert_eq!(comparisons.take_events(&ids)[0].count, 1);
        assert_eq!(comparisons.top(1)[0].1.total, 4, "the total goes on");
    }

    #[test]
    fn names_are_kept_clamped_to_the_audits_limits() {
        let comparisons = Comparisons::default();
        let long = "t".repeat(5000);
        record(&comparisons, &long);
        let basis = "b".repeat(5000);
        comparisons.describe_kafka_basis(
            Decider::Kafka,
            true,
            &context("alice"),
            &write(&long),
            &basis,
        );
        let (key, tally) = comparisons.top(1).remove(0);
        assert_eq!(key.resource.len(), crate::audit::names::CUT_KEEPS);
        assert_eq!(key.resource_cut.map(|cut| cut.units), Some(5000));
        assert_eq!(tally.kafka_basis.unwrap().len(), BASIS_LIMIT);
    }
}
