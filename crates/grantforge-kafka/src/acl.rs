//! Policies shown as Kafka ACLs (`Authorizer.acls`, `kafka-acls --list`).
//!
//! A projection, computed once per snapshot: what ACLs can express is shown, the rest is left out
//! (see `docs/operations.md`). Priorities cannot be expressed in ACLs, so both are listed; the
//! `explain` command gives the true answer for one request.
//!
//! A large snapshot has millions of rows (200,000 policies × 50 users × their operations), built from
//! a few distinct names and principals: rows share them (`Arc<str>`, one allocation per distinct
//! string) instead of owning copies, and are collected in a vector, sorted and deduplicated.

use std::collections::HashMap;
use std::sync::Arc;

use grantforge_engine::{Instant, Item, PolicyRecord, Snapshot};

use crate::names::{Operation, ResourceType};

/// How an ACL's resource name matches, as Kafka's `PatternType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PatternType {
    Literal,
    Prefixed,
}

impl PatternType {
    /// Kafka's `PatternType.code()`.
    pub fn code(self) -> u8 {
        match self {
            PatternType::Literal => 3,
            PatternType::Prefixed => 4,
        }
    }
}

/// Kafka's `AclPermissionType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    Deny,
    Allow,
}

impl Permission {
    /// Kafka's `AclPermissionType.code()`.
    pub fn code(self) -> u8 {
        match self {
            Permission::Deny => 2,
            Permission::Allow => 3,
        }
    }
}

/// One ACL binding (the host is always `*`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclRow {
    pub resource_type: u8,
    pub pattern_type: PatternType,
    pub name: Arc<str>,
    /// `Type:name`, e.g. `User:alice`, `Group:ops`, `Role:analyst` or `User:*` for the public group.
    pub principal: Arc<str>,
    pub operation: Operation,
    pub permission: Permission,
}

/// The ACL rows of the policies of `snapshot` that apply at `now`, sorted and without duplicates.
pub fn acl_rows(snapshot: &Snapshot, now: Instant) -> Vec<AclRow> {
    let mut rows = Vec::new();
    let mut principals = Interner::default();
    for policy in snapshot.policies.iter().filter(|p| p.applies_at(now)) {
        add_policy_rows(policy, &mut principals, &mut rows);
    }
    rows.sort_unstable();
    rows.dedup();
    rows.shrink_to_fit();
    rows
}

/// One shared copy of each distinct principal.
#[derive(Default)]
struct Interner(HashMap<String, Arc<str>>);

impl Interner {
    fn get(&mut self, text: String) -> Arc<str> {
        if let Some(shared) = self.0.get(&text) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(text.as_str());
        self.0.insert(text, Arc::clone(&shared));
        shared
    }
}

fn add_policy_rows(policy: &PolicyRecord, principals: &mut Interner, rows: &mut Vec<AclRow>) {
    // A Kafka policy names exactly one level: every level of the kafka type is a root.
    let mut levels = policy.resources.iter();
    let (Some((level, values)), None) = (levels.next(), levels.next()) else { return };
    let Some(resource_type) = ResourceType::from_level(level) else { return };
    if values.excludes {
        return;
    }
    let patterns: Vec<(PatternType, Arc<str>)> =
        values.values.iter().filter_map(|v| pattern_of(v)).map(|(pattern, name)| (pattern, Arc::from(name))).collect();
    let mut emit = |items: &[Item], permission: Permission| {
        for item in items.iter().filter(|item| item.conditions.is_empty()) {
            for principal in principals_of(item).map(|p| principals.get(p)) {
                for operation in item.access_types.iter().filter_map(|a| Operation::from_access_type(a)) {
                    for (pattern_type, name) in &patterns {
                        rows.push(AclRow {
                            resource_type: resource_type.code(),
                            pattern_type: *pattern_type,
                            name: Arc::clone(name),
                            principal: Arc::clone(&principal),
                            operation,
                            permission,
                        });
                    }
                }
            }
        }
    };
    // Items carved by exceptions cannot be expressed as ACLs: leave them out rather than overstate.
    if policy.allow_exceptions.is_empty() {
        emit(&policy.allow, Permission::Allow);
    }
    if policy.deny_exceptions.is_empty() {
        emit(&policy.deny, Permission::Deny);
    }
}

/// `*` is Kafka's wildcard, `orders*` a prefixed pattern, a plain value a literal one; any other
/// use of `*` or `?` has no ACL form.
fn pattern_of(value: &str) -> Option<(PatternType, &str)> {
    if value == "*" {
        return Some((PatternType::Literal, value));
    }
    let is_wild = |c: char| c == '*' || c == '?';
    match value.strip_suffix('*') {
        Some(prefix) if !prefix.is_empty() && !prefix.contains(is_wild) => Some((PatternType::Prefixed, prefix)),
        Some(_) => None,
        None if value.contains(is_wild) => None,
        None => Some((PatternType::Literal, value)),
    }
}

fn principals_of(item: &Item) -> impl Iterator<Item = String> + '_ {
    let users = item.users.iter().map(|u| format!("User:{u}"));
    let groups = item.groups.iter().map(|g| if g == "public" { "User:*".to_string() } else { format!("Group:{g}") });
    let roles = item.roles.iter().map(|r| format!("Role:{r}"));
    users.chain(groups).chain(roles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_literal_prefixed_or_wildcard_patterns() {
        assert_eq!(pattern_of("orders"), Some((PatternType::Literal, "orders")));
        assert_eq!(pattern_of("orders*"), Some((PatternType::Prefixed, "orders")));
        assert_eq!(pattern_of("*"), Some((PatternType::Literal, "*")));
        assert_eq!(pattern_of("or*ders"), None);
        assert_eq!(pattern_of("orders?"), None);
        assert_eq!(pattern_of("or*ders*"), None);
        assert_eq!(pattern_of("**"), None);
        assert_eq!(pattern_of("*orders"), None);
    }
}
