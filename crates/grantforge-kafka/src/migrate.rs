//! Kafka's ACLs as GrantForge policies of the `kafka` service type: the inverse of the ACL view
//! (`acl.rs`), for `migrate-acls`.
//!
//! Pure: ACL bindings in, policies out, as the two documents GrantForge takes (the bodies of its
//! admin API's `POST /api/v1/services/{id}/policies`, and a format-1 snapshot the agent runs on
//! offline) and a report of every ACL that could not be expressed exactly. Nothing is ever widened
//! silently: an ACL is migrated only when the policy decides what Kafka's `StandardAuthorizer`
//! decided for it, or when the report says how the meaning changes.
//!
//! One policy per resource pattern (level and value); in it, one item per permission, host and set
//! of operations, naming every subject with that set. All policies are NORMAL: in Kafka a DENY beats
//! every ALLOW, as a deny beats an allow within one GrantForge priority.

mod mapping;
mod report;
#[cfg(test)]
mod tests;
mod writing;

use crate::policies::LoadError;
use mapping::{kafka_model, map_acl, Mapped, Policies};

pub use report::{describe_acl, Finding, ReportEntry};

/// The label every migrated policy carries on the server, so an operator can find (or remove) them.
pub const MIGRATION_LABEL: &str = "migrated-from-kafka-acls";

/// One ACL binding as Kafka's Admin API describes it, by Kafka's codes (`ResourceType.code()`,
/// `PatternType.code()`, `AclOperation.code()`, `AclPermissionType.code()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaAcl {
    pub resource_type: u8,
    pub pattern_type: u8,
    pub name: String,
    /// `Type:name`, as Kafka writes it (`User:alice`, `User:*`, `Group:ops`).
    pub principal: String,
    /// `*` or the text Kafka compares with the client's address.
    pub host: String,
    pub operation: u8,
    pub permission: u8,
}

/// The result of a migration.
#[derive(Clone, Debug)]
pub struct Migration {
    /// A format-1 snapshot of the `kafka` service type (`grantforge.policy.file`).
    pub snapshot_json: String,
    /// A JSON array of the bodies of `POST /api/v1/services/{id}/policies`, one per policy.
    pub policy_requests_json: String,
    /// Sorted by ACL index, then finding.
    pub report: Vec<ReportEntry>,
    /// How many ACLs became (part of) a policy.
    pub migrated: usize,
    pub policies: usize,
}

/// Maps ACL bindings to policies. Fails only when the snapshot it wrote would not load, which
/// would be a bug here: nothing is written then.
pub fn migrate_acls(acls: &[KafkaAcl], service: &str) -> Result<Migration, LoadError> {
    let model = kafka_model()?;
    let mut policies = Policies::new();
    let mut report = Vec::new();
    let mut migrated = 0;
    for (index, acl) in acls.iter().enumerate() {
        let mapped = map_acl(acl, &model);
        report.extend(report::entries_of(index, acl, &mapped, &model));
        if let Ok(mapped) = mapped {
            migrated += 1;
            add_to_policies(&mut policies, mapped);
        }
    }
    report.sort_by_key(|e| (e.acl, e.finding));
    let written = writing::write(&policies, service)?;
    Ok(Migration {
        snapshot_json: written.snapshot_json,
        policy_requests_json: written.policy_requests_json,
        report,
        migrated,
        policies: policies.len(),
    })
}

/// Puts the ACL's operation in its policy (by level and value), under its item (by permission and
/// host) and subject, so that ACLs that differ only there share one policy.
fn add_to_policies(policies: &mut Policies, mapped: Mapped) {
    policies
        .entry((mapped.level, mapped.value))
        .or_default()
        .entry((mapped.permission, mapped.host))
        .or_default()
        .entry(mapped.subject)
        .or_default()
        .insert(mapped.operation);
}
