//! Shadow and compare modes: Kafka's own `StandardAuthorizer` and the agent answer the same
//! questions, one of them deciding ([`Decider`]), and every difference is shown.
//!
//! Each question both answered is an agreement (counted in the request thread's lane) or a
//! disagreement of one of two kinds ([`Kind`]): GrantForge would refuse what Kafka allows, or
//! allow what Kafka refuses. A filter question (a listing's "which topics may I see", asked with
//! `logIfDenied` off: Kafka expects refusals and reports none) is answered but not compared: its
//! refusal hides a name, it refuses no access, and one metadata request asks thousands.
//!
//! Disagreements are kept in [`Comparisons`] (`table`) by principal, resource, operation and kind
//! ([`DisagreementKey`]): a count since they were first seen, a count in the current fold window,
//! the first request's context, the GrantForge policy and the Kafka ACL behind the two answers.
//! Every fold window each key that disagreed in it becomes one audit event with its count, so a
//! storm of disagreements costs a count, not a flood.

mod table;

use std::borrow::Cow;
use std::net::IpAddr;

use grantforge_engine::Instant;
use grantforge_kafka::{Action, Operation, RequestContext, ResourceType};

use crate::audit::events::{AccessEvent, Comparison};
use crate::audit::limits::{self, clamp, OVERFLOW_RESOURCE};

pub use crate::audit::events::Decider;
use crate::audit::names::{carried, kept_resource, Cut};
use crate::keys::Access;

pub use table::{Comparisons, QUIET_WINDOWS_KEPT, TRACKED};

/// Disagreements the metric `shadow-disagreements` shows: each principal's most frequent first.
pub const REPORTED: usize = 50;

/// The longest Kafka basis kept, in UTF-16 units (it goes into the event's request text).
const BASIS_LIMIT: usize = 400;

/// Whether the answers to `action` are compared: not a filter question (module doc).
pub fn is_compared(action: &Action<'_>) -> bool {
    action.log_if_denied
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
    /// The principal's disagreements past its share of the table: no resource kept.
    pub overflow: bool,
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
            overflow: false,
        }
    }

    /// The key of the principal's overflow row for this disagreement.
    fn into_overflow(self) -> Self {
        DisagreementKey {
            resource: String::new(),
            resource_cut: None,
            overflow: true,
            ..self
        }
    }

    fn principal(&self) -> (String, String) {
        (self.principal_type.clone(), self.principal_name.clone())
    }
}

/// One kept disagreement.
#[derive(Clone, Debug)]
pub struct Tally {
    pub total: u64,
    pub first: Instant,
    pub last: Instant,
    /// The GrantForge policy behind its answer (none: no policy decides, or an overflow row).
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
    /// Fold windows since the key was last reported with nothing new: it ages out at
    /// [`QUIET_WINDOWS_KEPT`].
    quiet_windows: u32,
}

impl Tally {
    fn first(
        context: &RequestContext,
        policy_id: Option<i64>,
        policy_version: i64,
        now: Instant,
    ) -> Tally {
        let conditions = &context.conditions;
        Tally {
            total: 1,
            first: now,
            last: now,
            policy_id,
            policy_version,
            kafka_basis: None,
            client: conditions.client_address,
            listener: clamp(&conditions.listener, limits::REQUEST_PART).to_string(),
            client_id: clamp(&conditions.client_id, limits::REQUEST_PART).to_string(),
            request_type: context.request_type,
            request_version: context.request_version,
            in_window: 1,
            window_first: now,
            quiet_windows: 0,
        }
    }

    /// One more disagreement of the key.
    fn renew(&mut self, policy_id: Option<i64>, policy_version: i64, now: Instant) {
        self.total += 1;
        self.last = now;
        if self.in_window == 0 {
            self.window_first = now;
        }
        self.in_window += 1;
        self.policy_id = policy_id;
        self.policy_version = policy_version;
    }
}

/// The rows as a table in text, one disagreement per line.
fn report(rows: Vec<(DisagreementKey, Tally)>) -> String {
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
            // theirs would forge a column or a row of the table (and a name that reads as an
            // overflow row is escaped too)
            carried(&key.principal_name),
            key.operation.map_or("UNKNOWN", Operation::kafka_name),
            key.resource_type
                .map_or("UNKNOWN", ResourceType::kafka_name),
            if key.overflow {
                Cow::Borrowed(OVERFLOW_RESOURCE)
            } else {
                carried(&key.resource)
            },
            policy_words(key.overflow, tally.policy_id),
            tally.kafka_basis.as_deref().unwrap_or(if key.overflow {
                "(not kept)"
            } else {
                "(not told)"
            }),
        ));
    }
    text
}

fn policy_words(overflow: bool, policy_id: Option<i64>) -> String {
    match policy_id {
        _ if overflow => "policies not kept".to_string(),
        None => "no policy".to_string(),
        Some(id) => format!("policy {id}"),
    }
}

/// A key's disagreements of the window as an access event: the decider's answer is the outcome,
/// the GrantForge policy the event's policy, and the comparison says the rest.
fn event(event_id: String, key: &DisagreementKey, tally: &Tally) -> AccessEvent {
    let kafka_allowed = key.kind.kafka_allowed();
    AccessEvent {
        event_id,
        access: Access {
            principal_type: key.principal_type.clone(),
            principal_name: key.principal_name.clone(),
            client: tally.client,
            resource_type: key.resource_type,
            resource: key.resource.clone(),
            operation: key.operation,
            request_type: tally.request_type,
        },
        resource_cut: key.resource_cut,
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
        overflow: key.overflow,
        comparison: Some(Comparison {
            decider: key.decider,
            kafka_allowed,
            kafka_basis: tally
                .kafka_basis
                .clone()
                .unwrap_or_else(|| "(not told)".to_string()),
        }),
        kafka_acl: None,
    }
}
