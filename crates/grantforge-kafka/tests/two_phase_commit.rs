//! Kafka 4.1's `TWO_PHASE_COMMIT`, asked on the transactional id of an `InitProducerId` that
//! enables two-phase commit: granted by itself and by `all` only, granting nothing else (as
//! Kafka's `StandardAuthorizer` has it), and refused to everyone, with a warning, by a snapshot of a
//! server whose service type predates it, which still answers everything else.

use grantforge_engine::Instant;
use grantforge_kafka::{
    migrate_acls, Action, KafkaAcl, KafkaPolicies, Operation, PatternType, Permission, Principal,
    Reason, RequestContext, ResourceType,
};
use serde_json::{json, Value};

const E2E: &str = include_str!("../../../tests/fixtures/snapshots/e2e.json");

/// The e2e snapshot with one more policy on transactional ids `tx-*`: alice has `all`, bob
/// `write`, carol `two_phase_commit`.
fn snapshot() -> Value {
    let mut snapshot: Value = serde_json::from_str(E2E).unwrap();
    let item = |user: &str, access: &str| {
        json!({"users": [user], "groups": [], "roles": [], "accessTypes": [access],
               "conditions": [], "maskType": null, "maskValue": null, "rowFilter": null})
    };
    snapshot["policies"].as_array_mut().unwrap().push(json!({
        "id": "7", "name": "transactions", "type": "ACCESS", "priority": "NORMAL",
        "document": {
            "resources": {"transactional_id": {"values": ["tx-*"], "excludes": false, "recursive": false}},
            "allow": [item("alice", "all"), item("bob", "write"), item("carol", "two_phase_commit")],
            "allowExceptions": [], "deny": [], "denyExceptions": [], "validity": []
        }
    }));
    snapshot
}

/// The same snapshot from a server whose `kafka` service type has no `two_phase_commit`.
fn snapshot_of_an_older_service_type() -> Value {
    let mut snapshot = snapshot();
    let definition = &mut snapshot["definition"];
    definition["accessTypes"]
        .as_array_mut()
        .unwrap()
        .retain(|a| a["name"] != "two_phase_commit");
    for access_type in definition["accessTypes"].as_array_mut().unwrap() {
        access_type["impliedGrants"]
            .as_array_mut()
            .unwrap()
            .retain(|g| g != "two_phase_commit");
    }
    let policies = snapshot["policies"].as_array_mut().unwrap();
    let last = policies.last_mut().unwrap();
    last["document"]["allow"].as_array_mut().unwrap().pop(); // carol's grant names it
    snapshot
}

fn load(snapshot: &Value) -> KafkaPolicies {
    KafkaPolicies::load(&serde_json::to_vec(snapshot).unwrap(), Instant::now()).unwrap()
}

fn decide(policies: &KafkaPolicies, user: &str, operation: Operation) -> Reason {
    let context = RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: user.into(),
        },
        ..Default::default()
    };
    let action = Action {
        operation: Some(operation),
        resource_type: Some(ResourceType::TransactionalId),
        literal: true,
        name: "tx-1",
        log_if_allowed: true,
        log_if_denied: true,
    };
    policies.decide(&context, &action, Instant::now())
}

#[test]
fn all_grants_two_phase_commit_and_write_does_not() {
    let policies = load(&snapshot());
    assert!(decide(&policies, "alice", Operation::TwoPhaseCommit).allowed());
    assert!(decide(&policies, "bob", Operation::Write).allowed());
    assert_eq!(
        decide(&policies, "bob", Operation::TwoPhaseCommit),
        Reason::NoPolicy
    );
    assert!(policies.warnings().is_empty(), "{:?}", policies.warnings());
}

#[test]
fn two_phase_commit_grants_nothing_else() {
    let policies = load(&snapshot());
    assert!(decide(&policies, "carol", Operation::TwoPhaseCommit).allowed());
    for other in [Operation::Describe, Operation::Write] {
        assert_eq!(
            decide(&policies, "carol", other),
            Reason::NoPolicy,
            "{other:?}"
        );
    }
}

#[test]
fn a_service_type_that_predates_it_loads_refuses_it_and_warns_once() {
    let policies = load(&snapshot_of_an_older_service_type());
    assert_eq!(
        decide(&policies, "alice", Operation::TwoPhaseCommit),
        Reason::Unplaced,
        "refused even to `all`"
    );
    assert!(decide(&policies, "alice", Operation::Write).allowed());
    assert!(decide(&policies, "bob", Operation::Write).allowed());
    let warnings = policies.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("TWO_PHASE_COMMIT") && warnings[0].contains("`two_phase_commit`"),
        "{warnings:?}"
    );
}

#[test]
fn a_service_type_without_an_older_operation_is_still_refused_whole() {
    let mut snapshot = snapshot_of_an_older_service_type();
    let access_types = snapshot["definition"]["accessTypes"]
        .as_array_mut()
        .unwrap();
    access_types.retain(|a| a["name"] != "idempotent_write");
    for access_type in access_types {
        access_type["impliedGrants"]
            .as_array_mut()
            .unwrap()
            .retain(|g| g != "idempotent_write");
    }
    let refused = KafkaPolicies::load(&serde_json::to_vec(&snapshot).unwrap(), Instant::now());
    assert!(refused
        .err()
        .unwrap()
        .to_string()
        .contains("no access type `idempotent_write`"));
}

#[test]
fn acls_of_two_phase_commit_migrate_to_its_access_type() {
    let acl = KafkaAcl {
        resource_type: ResourceType::TransactionalId.code(),
        pattern_type: PatternType::Prefixed.code(),
        name: "tx-".into(),
        principal: "User:dave".into(),
        host: "*".into(),
        operation: Operation::TwoPhaseCommit.code(),
        permission: Permission::Allow.code(),
    };
    let migration = migrate_acls(&[acl], "kafka").unwrap();
    assert_eq!(migration.migrated, 1, "{:?}", migration.report);
    let policies = KafkaPolicies::load(migration.snapshot_json.as_bytes(), Instant::now()).unwrap();
    assert!(decide(&policies, "dave", Operation::TwoPhaseCommit).allowed());
    assert_eq!(
        decide(&policies, "dave", Operation::Write),
        Reason::NoPolicy
    );
}
