//! The documents a migration writes from its policies: a format-1 snapshot of the `kafka` service
//! type, checked to load as the agent loads it, and the bodies of GrantForge's policy requests.

use std::collections::{BTreeMap, BTreeSet};

use grantforge_engine::{Instant, FORMAT};
use serde_json::{json, Value};

use super::mapping::{Items, Policies, Subject};
use super::MIGRATION_LABEL;
use crate::policies::{KafkaPolicies, LoadError, KAFKA_DEFINITION_JSON, SERVICE_TYPE};
use crate::vocabulary::{Operation, Permission};

/// GrantForge's limit on a policy name (`PolicyRequest.name`).
pub(super) const POLICY_NAME_MAX_CHARS: usize = 128;

/// The two documents of a migration, as JSON text.
pub(super) struct Written {
    pub(super) snapshot_json: String,
    pub(super) policy_requests_json: String,
}

/// Writes the snapshot and the policy requests of `policies`, one named document each. Fails when
/// the snapshot would not load, which would be a bug here.
pub(super) fn write(policies: &Policies, service: &str) -> Result<Written, LoadError> {
    let documents: Vec<(String, Value)> = policies
        .iter()
        .map(|((level, value), items)| (policy_name(level, value), document(level, value, items)))
        .collect();
    let snapshot_json = snapshot_json(&documents, service);
    // What is written must load as the agent loads it: checked here rather than at the broker.
    KafkaPolicies::load(snapshot_json.as_bytes(), Instant::now())?;
    Ok(Written {
        snapshot_json,
        policy_requests_json: policy_requests_json(&documents),
    })
}

/// A format-1 snapshot of the `kafka` service type holding the documents as NORMAL access
/// policies, numbered from 1 in order.
fn snapshot_json(documents: &[(String, Value)], service: &str) -> String {
    let snapshot_policies: Vec<Value> = documents
        .iter()
        .enumerate()
        .map(|(at, (name, document))| {
            json!({
                "id": (at + 1).to_string(),
                "name": name,
                "type": "ACCESS",
                "priority": "NORMAL",
                "document": document,
            })
        })
        .collect();
    let definition: Value =
        serde_json::from_str(KAFKA_DEFINITION_JSON).expect("kafka-service-type.json is JSON");
    let snapshot = json!({
        "format": FORMAT,
        "service": service,
        "serviceType": SERVICE_TYPE,
        "typeVersion": 1,
        "serviceEnabled": true,
        "policyVersion": 1,
        "definition": definition,
        "policies": snapshot_policies,
        "roles": {},
        "groups": {},
    });
    serde_json::to_string_pretty(&snapshot).expect("JSON values serialise")
}

/// The bodies of `POST /api/v1/services/{id}/policies`, each with the migration's label.
fn policy_requests_json(documents: &[(String, Value)]) -> String {
    let requests: Vec<Value> = documents
        .iter()
        .map(|(name, document)| {
            json!({
                "name": name,
                "description": "migrated from Kafka's ACLs by migrate-acls",
                "labels": [MIGRATION_LABEL],
                "enabled": true,
                "priority": "NORMAL",
                "type": "ACCESS",
                "document": document,
            })
        })
        .collect();
    serde_json::to_string_pretty(&requests).expect("JSON values serialise")
}

/// A policy's name: what it covers, within GrantForge's limit. A name too long is cut and ends
/// with a hash of the whole value, so that two values that share the kept beginning still name two
/// policies (GrantForge's policy names are unique within a service).
pub(super) fn policy_name(level: &str, value: &str) -> String {
    let name = format!("kafka acls: {level} {value}");
    if name.chars().count() <= POLICY_NAME_MAX_CHARS {
        return name;
    }
    let suffix = format!("… #{:016x}", fnv1a(value.as_bytes()));
    let mut cut: String = name
        .chars()
        .take(POLICY_NAME_MAX_CHARS - suffix.chars().count())
        .collect();
    cut.push_str(&suffix);
    cut
}

/// FNV-1a, 64 bits: stable across runs and releases, so the same ACLs name the same policies.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The policy document: one level and value; per permission and host, one item per set of
/// operations naming every subject with that set.
fn document(level: &str, value: &str, items: &Items) -> Value {
    let mut allow = Vec::new();
    let mut deny = Vec::new();
    for ((permission, host), subjects) in items {
        let mut by_operations: BTreeMap<&BTreeSet<Operation>, (Vec<&str>, Vec<&str>)> =
            BTreeMap::new();
        for (subject, operations) in subjects {
            let (users, groups) = by_operations.entry(operations).or_default();
            match subject {
                Subject::User(name) => users.push(name),
                Subject::Group(name) => groups.push(name),
                Subject::Everyone => groups.push(grantforge_engine::PUBLIC_GROUP),
            }
        }
        for (operations, (users, groups)) in by_operations {
            let access_types: Vec<&str> = operations.iter().map(|o| o.access_type()).collect();
            let conditions: Vec<Value> = host
                .iter()
                .map(|h| json!({"type": "ip-range", "values": [h]}))
                .collect();
            let item = json!({
                "users": users,
                "groups": groups,
                "roles": [],
                "accessTypes": access_types,
                "conditions": conditions,
                "maskType": null,
                "maskValue": null,
                "rowFilter": null,
            });
            match permission {
                Permission::Allow => allow.push(item),
                Permission::Deny => deny.push(item),
            }
        }
    }
    json!({
        "resources": {level: {"values": [value], "excludes": false, "recursive": false}},
        "allow": allow,
        "allowExceptions": [],
        "deny": deny,
        "denyExceptions": [],
        "validity": [],
    })
}
