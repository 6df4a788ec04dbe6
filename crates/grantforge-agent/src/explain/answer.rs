//! The answer to one `explain` question, typed: the explainer builds it once, and it is written
//! as text for people or as JSON for scripts (`--json`), each from the same fields.

use std::fmt::Write as _;

use grantforge_engine::{Branch, Item};
use grantforge_kafka::{AclRow, Operation, ResourceType};
use serde_json::{json, Value};

use super::Question;

pub(super) struct Answer<'a> {
    pub question: &'a Question,
    pub service: &'a str,
    pub policy_version: i64,
    /// The ACL rows of the resource, as `kafka-acls --list` with Kafka's MATCH filter shows them.
    pub acls: Vec<AclRow<'a>>,
    pub allowed: bool,
    /// The rule that decided, in words.
    pub reason: &'static str,
    /// No policy decides: hybrid mode (`GrantForgeHybridAuthorizer`) leaves it to Kafka's ACLs.
    pub left_to_kafka_in_hybrid_mode: bool,
    pub deciding: Option<PolicyRef<'a>>,
    /// Every policy whose items matched or were excepted.
    pub matched: Vec<MatchedPolicy<'a>>,
}

/// A policy by id, with its name and priority when the snapshot has it.
pub(super) struct PolicyRef<'a> {
    pub id: i64,
    pub named: Option<(&'a str, &'static str)>,
}

pub(super) struct MatchedPolicy<'a> {
    pub id: i64,
    pub name: &'a str,
    pub priority: &'static str,
    pub branch: Branch,
    pub deny: Vec<ItemRef<'a>>,
    pub deny_exceptions: Vec<ItemRef<'a>>,
    pub allow: Vec<ItemRef<'a>>,
    pub allow_exceptions: Vec<ItemRef<'a>>,
}

/// An item of a policy by its index in its list (0-based), with the item when the snapshot has it.
pub(super) struct ItemRef<'a> {
    pub index: usize,
    pub item: Option<&'a Item>,
}

/// What a refused CREATE means to a Kafka Streams application on the streams protocol: the broker
/// creates its internal topics on its behalf, and answers a refusal with the group's status, which
/// the application never raises as an error (it waits, its group NOT_READY).
const STREAMS_CREATE_NOTE: &str = "a Kafka Streams application on the streams protocol \
(group.protocol=streams) sees this refusal only as its group's status MISSING_INTERNAL_TOPICS, never as an \
error: grant create on the cluster, or on the topics <application.id>-* (its internal topics)";

impl Answer<'_> {
    fn decision(&self) -> &'static str {
        if self.allowed {
            "ALLOWED"
        } else {
            "DENIED"
        }
    }

    /// What to grant, where a refusal shows as something other than an error to some client.
    fn note(&self) -> Option<&'static str> {
        let q = self.question;
        let creates_topics = q.operation == Operation::Create
            && matches!(q.resource_type, ResourceType::Topic | ResourceType::Cluster);
        (creates_topics && !self.allowed).then_some(STREAMS_CREATE_NOTE)
    }

    /// Which side decides under `GrantForgeHybridAuthorizer`.
    fn hybrid_mode(&self) -> &'static str {
        if self.left_to_kafka_in_hybrid_mode {
            "no policy decides, so GrantForgeHybridAuthorizer leaves it to Kafka's ACLs (listed below)"
        } else {
            "GrantForge's answer above is final"
        }
    }

    pub fn to_json(&self) -> Value {
        let q = self.question;
        let mut answer = json!({
            "request": {
                "principal": q.principal.to_kafka_string(), "operation": q.operation.kafka_name(),
                "resourceType": q.resource_type.level(), "resource": q.name,
                "host": q.host.map(|h| h.to_string()), "listener": q.listener, "clientId": q.client_id,
            },
            "snapshot": {"service": self.service, "policyVersion": self.policy_version},
            "acls": self.acls.iter().map(acl_json).collect::<Vec<_>>(),
            "decision": self.decision(),
            "reason": self.reason,
            "hybridMode": if self.left_to_kafka_in_hybrid_mode { "KAFKA_ACLS" } else { "GRANTFORGE" },
            "decidingPolicy": self.deciding.as_ref().map_or(Value::Null, PolicyRef::to_json),
            "policies": self.matched.iter().map(MatchedPolicy::to_json).collect::<Vec<_>>(),
        });
        if let Some(note) = self.note() {
            answer["note"] = json!(note);
        }
        answer
    }

    pub fn to_text(&self) -> String {
        let q = self.question;
        let mut out = String::new();
        let host = q.host.map(|h| format!(" from {h}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{} {} {} {}{host}",
            q.principal.to_kafka_string(),
            q.operation.kafka_name(),
            q.resource_type.level(),
            q.name
        );
        let by = self
            .deciding
            .as_ref()
            .map_or(String::new(), |p| match p.named {
                Some((name, priority)) => format!(" by policy {} \"{name}\" ({priority})", p.id),
                None => format!(" by policy {} \"\" ()", p.id),
            });
        let _ = writeln!(out, "  decision: {}{by}: {}", self.decision(), self.reason);
        if self.left_to_kafka_in_hybrid_mode {
            let _ = writeln!(out, "  in hybrid mode: {}", self.hybrid_mode());
        }
        if let Some(note) = self.note() {
            let _ = writeln!(out, "  note: {note}");
        }
        let _ = writeln!(
            out,
            "  snapshot: service {} version {}",
            self.service, self.policy_version
        );
        if !self.matched.is_empty() {
            let _ = writeln!(out, "  policies with matching items:");
        }
        for p in &self.matched {
            p.write_text(&mut out);
        }
        let _ = writeln!(
            out,
            "  ACLs for {} {}{}",
            q.resource_type.level(),
            q.name,
            if self.acls.is_empty() { ": none" } else { ":" }
        );
        for acl in &self.acls {
            let _ = writeln!(
                out,
                "    {} {} {} on {} {} {} (host *)",
                acl.permission.kafka_name(),
                acl.principal,
                acl.operation.kafka_name(),
                resource_level(acl),
                acl.pattern_type.kafka_name(),
                acl.name
            );
        }
        out.push('\n');
        out
    }
}

impl PolicyRef<'_> {
    fn to_json(&self) -> Value {
        match self.named {
            Some((name, priority)) => json!({"id": self.id, "name": name, "priority": priority}),
            None => json!({"id": self.id}),
        }
    }
}

impl MatchedPolicy<'_> {
    /// The lists of items, each with its key in JSON and its label in text.
    fn lists(&self) -> [(&'static str, &'static str, &[ItemRef<'_>]); 4] {
        [
            ("deny", "deny item", &self.deny),
            ("denyExceptions", "deny exception", &self.deny_exceptions),
            ("allow", "allow item", &self.allow),
            ("allowExceptions", "allow exception", &self.allow_exceptions),
        ]
    }

    fn to_json(&self) -> Value {
        let mut policy = json!({
            "id": self.id, "name": self.name, "priority": self.priority,
            "effect": branch_name(self.branch),
        });
        for (key, _, items) in self.lists() {
            policy[key] = items.iter().map(ItemRef::to_json).collect();
        }
        policy
    }

    fn write_text(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "    {} \"{}\" ({}): {}",
            self.id,
            self.name,
            self.priority,
            branch_name(self.branch)
        );
        for (_, label, items) in self.lists() {
            for item in items {
                let _ = writeln!(
                    out,
                    "      {label} {}: {}",
                    item.index + 1,
                    item.item.map(describe_item).unwrap_or_default()
                );
            }
        }
    }
}

impl ItemRef<'_> {
    fn to_json(&self) -> Value {
        let index = self.index + 1;
        match self.item {
            Some(item) => json!({
                "index": index, "users": item.users, "groups": item.groups, "roles": item.roles,
                "accessTypes": item.access_types,
                "conditions": item.conditions.iter().map(|c| json!({"type": c.type_name, "values": c.values})).collect::<Vec<_>>(),
            }),
            None => json!({"index": index}),
        }
    }
}

fn branch_name(branch: Branch) -> &'static str {
    match branch {
        Branch::Deny => "denies",
        Branch::Allow => "allows",
        Branch::AllowExcepted => "allow excepted",
        Branch::DenyExcepted => "deny excepted",
        Branch::NoMatch => "only exceptions matched",
    }
}

/// The level of an ACL row's resource type (`?` for a code the vocabulary lacks, which no row has).
fn resource_level(row: &AclRow) -> &'static str {
    ResourceType::from_code(row.resource_type).map_or("?", ResourceType::level)
}

fn acl_json(row: &AclRow) -> Value {
    json!({
        "resourceType": resource_level(row), "patternType": row.pattern_type.kafka_name(),
        "name": row.name, "principal": row.principal, "host": "*",
        "operation": row.operation.kafka_name(), "permission": row.permission.kafka_name(),
    })
}

/// An item in words: `users alice; groups ops: read, describe if ip-range in [10.0.0.0/8]`.
fn describe_item(item: &Item) -> String {
    let mut who = Vec::new();
    for (label, names) in [
        ("users", &item.users),
        ("groups", &item.groups),
        ("roles", &item.roles),
    ] {
        if !names.is_empty() {
            who.push(format!("{label} {}", names.join(", ")));
        }
    }
    let conditions: String = item
        .conditions
        .iter()
        .map(|c| format!(" if {} in [{}]", c.type_name, c.values.join(", ")))
        .collect();
    format!(
        "{}: {}{conditions}",
        who.join("; "),
        item.access_types.join(", ")
    )
}
