//! The report of a migration: what it says about each ACL that no policy expresses exactly, as
//! entries for `--verify` and the shim and as text for people.

use std::fmt::Write as _;

use grantforge_engine::ServiceModel;

use super::mapping::{implied_operations, Mapped, Subject};
use super::{KafkaAcl, Migration};
use crate::vocabulary::{Operation, PatternType, Permission, ResourceType};

/// What the report says about one ACL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Finding {
    /// Left out: no policy expresses it exactly.
    NotMigrated,
    /// Migrated as a deny, which in GrantForge also denies what the operation implies.
    DenyCoversImplied,
    /// Migrated as a policy of a GrantForge group, which applies to the group's users rather than
    /// to a principal of type `Group`.
    GroupMembers,
}

impl Finding {
    /// The code in the JNI payload (`AclMigration.java`).
    pub fn code(self) -> u8 {
        match self {
            Finding::NotMigrated => 1,
            Finding::DenyCoversImplied => 2,
            Finding::GroupMembers => 3,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Finding::NotMigrated => "not migrated",
            Finding::DenyCoversImplied => "narrower",
            Finding::GroupMembers => "group",
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportEntry {
    /// The ACL's index in the input.
    pub acl: usize,
    pub finding: Finding,
    /// The operations the agent refuses where Kafka allowed them because of this finding, for the
    /// principal, resource and host the ACL names: what `--verify` may attribute to it. Empty when
    /// the finding can only widen (a DENY left out): such a difference is never explained.
    pub narrowed: Vec<Operation>,
    pub message: String,
}

impl Migration {
    /// The report for people: a summary line, then one line per entry naming the ACL.
    pub fn report_text(&self, acls: &[KafkaAcl]) -> String {
        let mut text = format!(
            "migrate-acls: {} ACLs read, {} migrated into {} policies, {} not migrated, {} migrated with a changed meaning\n",
            acls.len(),
            self.migrated,
            self.policies,
            self.count(Finding::NotMigrated),
            self.report.len() - self.count(Finding::NotMigrated),
        );
        for entry in &self.report {
            let _ = writeln!(
                text,
                "{:<12} {}: {}",
                entry.finding.label(),
                describe_acl(&acls[entry.acl]),
                entry.message
            );
        }
        text
    }

    fn count(&self, finding: Finding) -> usize {
        self.report.iter().filter(|e| e.finding == finding).count()
    }
}

/// The ACL in Kafka's words: `TOPIC:LITERAL:orders User:alice from * ALLOW READ`.
pub fn describe_acl(acl: &KafkaAcl) -> String {
    let resource_type = kafka_name_or_code(
        ResourceType::from_code(acl.resource_type).map(ResourceType::kafka_name),
        "type",
        acl.resource_type,
    );
    let pattern = kafka_name_or_code(
        PatternType::from_code(acl.pattern_type).map(PatternType::kafka_name),
        "pattern",
        acl.pattern_type,
    );
    let operation = kafka_name_or_code(
        Operation::from_code(acl.operation).map(Operation::kafka_name),
        "operation",
        acl.operation,
    );
    let permission = kafka_name_or_code(
        Permission::from_code(acl.permission).map(Permission::kafka_name),
        "permission",
        acl.permission,
    );
    format!(
        "{resource_type}:{pattern}:{} {} from {} {permission} {operation}",
        acl.name, acl.principal, acl.host
    )
}

/// Kafka's constant name, or `what#code` for a code this agent does not know: the report still
/// names the ACL as it was read.
fn kafka_name_or_code(name: Option<&'static str>, what: &str, code: u8) -> String {
    name.map_or_else(|| format!("{what}#{code}"), str::to_string)
}

/// What the report says about the ACL at `index`: why it was left out, or how the policy it became
/// differs from it (nothing when the policy decides exactly what the ACL decided).
pub(super) fn entries_of(
    index: usize,
    acl: &KafkaAcl,
    mapped: &Result<Mapped, String>,
    model: &ServiceModel,
) -> Vec<ReportEntry> {
    match mapped {
        Err(reason) => vec![not_migrated(index, acl, reason, model)],
        Ok(mapped) => [
            group_members(index, acl, mapped, model),
            deny_covers_implied(index, mapped, model),
        ]
        .into_iter()
        .flatten()
        .collect(),
    }
}

/// An ACL left out: an ALLOW's operations are refused now, a DENY's no longer denied by it (which
/// can only widen, so it narrows nothing).
fn not_migrated(index: usize, acl: &KafkaAcl, reason: &str, model: &ServiceModel) -> ReportEntry {
    let (narrowed, consequence) = match Permission::from_code(acl.permission) {
        Some(Permission::Allow) => (
            Operation::from_code(acl.operation)
                .map_or_else(Vec::new, |o| implied_operations(model, o)),
            "what it allowed is refused",
        ),
        _ => (Vec::new(), "what it denied is no longer denied by it"),
    };
    ReportEntry {
        acl: index,
        finding: Finding::NotMigrated,
        narrowed,
        message: format!("{reason}; {consequence}"),
    }
}

/// An ACL of a `Group:` principal, which GrantForge applies to the users of its group instead.
fn group_members(
    index: usize,
    acl: &KafkaAcl,
    mapped: &Mapped,
    model: &ServiceModel,
) -> Option<ReportEntry> {
    let Subject::Group(group) = &mapped.subject else {
        return None;
    };
    Some(ReportEntry {
        acl: index,
        finding: Finding::GroupMembers,
        narrowed: if mapped.permission == Permission::Allow {
            implied_operations(model, mapped.operation)
        } else {
            Vec::new()
        },
        message: format!(
            "becomes a policy of GrantForge group `{group}`: Kafka applied it to the principal `{}`, GrantForge applies it to the users of group `{group}` (none in the snapshot written here); check the group's members before creating the policies on a server",
            acl.principal
        ),
    })
}

/// A DENY of an operation that implies others: GrantForge's deny denies them too, Kafka's did not.
fn deny_covers_implied(index: usize, mapped: &Mapped, model: &ServiceModel) -> Option<ReportEntry> {
    if mapped.permission != Permission::Deny || mapped.operation == Operation::All {
        return None;
    }
    let also: Vec<Operation> = implied_operations(model, mapped.operation)
        .into_iter()
        .filter(|o| *o != mapped.operation)
        .collect();
    if also.is_empty() {
        return None;
    }
    let names: Vec<&str> = also.iter().map(|o| o.kafka_name()).collect();
    Some(ReportEntry {
        acl: index,
        finding: Finding::DenyCoversImplied,
        narrowed: also,
        message: format!(
            "GrantForge's deny of {} also denies {}, which it implies; Kafka's DENY {} denies {} only",
            mapped.operation.kafka_name(),
            names.join(", "),
            mapped.operation.kafka_name(),
            mapped.operation.kafka_name()
        ),
    })
}
