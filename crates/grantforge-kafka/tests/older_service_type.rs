//! A server's `kafka` service type older than the agent. An operation of
//! `Operation::NEWER_THAN_THE_SERVICE_TYPE` the definition lacks is refused as `Unplaced` to
//! everyone, `all` included, on every resource type that accepts it: the policies are never asked
//! (no `explain` of the engine, no by-resource-type answer), the operator is warned once, and every
//! other operation is decided as by the full service type. A level is never newer than the service
//! type: a definition without one of Kafka's levels is refused whole, naming it.

use grantforge_engine::Instant;
use grantforge_kafka::{
    Action, KafkaPolicies, Operation, Principal, Reason, RequestContext, ResourceType,
};
use serde_json::{json, Value};

const E2E: &str = include_str!("../../../tests/fixtures/snapshots/e2e.json");

/// The e2e snapshot with one more policy per level: olga has `all` on every resource of it.
fn olga_has_all_everywhere() -> Value {
    let mut snapshot: Value = serde_json::from_str(E2E).unwrap();
    let policies = snapshot["policies"].as_array_mut().unwrap();
    for (at, resource_type) in ResourceType::ALL.iter().enumerate() {
        policies.push(json!({
            "id": (100 + at).to_string(), "name": format!("olga on every {}", resource_type.level()),
            "type": "ACCESS", "priority": "NORMAL",
            "document": {
                "resources": {resource_type.level(): {"values": ["*"], "excludes": false, "recursive": false}},
                "allow": [{"users": ["olga"], "groups": [], "roles": [], "accessTypes": ["all"],
                           "conditions": [], "maskType": null, "maskValue": null, "rowFilter": null}],
                "allowExceptions": [], "deny": [], "denyExceptions": [], "validity": []
            }
        }));
    }
    snapshot
}

/// The same snapshot from a server whose service type has none of `lacking`'s access types.
fn without_access_types(mut snapshot: Value, lacking: &[Operation]) -> Value {
    let lacks = |name: &Value| lacking.iter().any(|o| name == o.access_type());
    let access_types = snapshot["definition"]["accessTypes"]
        .as_array_mut()
        .unwrap();
    access_types.retain(|a| !lacks(&a["name"]));
    for access_type in access_types {
        let implied = access_type["impliedGrants"].as_array_mut().unwrap();
        implied.retain(|grant| !lacks(grant));
    }
    snapshot
}

fn load(snapshot: &Value) -> KafkaPolicies {
    KafkaPolicies::load(&serde_json::to_vec(snapshot).unwrap(), Instant::now()).unwrap()
}

fn olga() -> RequestContext {
    RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: "olga".into(),
        },
        ..Default::default()
    }
}

fn action(operation: Operation, resource_type: ResourceType) -> Action<'static> {
    Action {
        operation: Some(operation),
        resource_type: Some(resource_type),
        literal: true,
        name: "kafka-cluster",
        log_if_allowed: true,
        log_if_denied: true,
    }
}

fn decide(policies: &KafkaPolicies, operation: Operation, resource_type: ResourceType) -> Reason {
    policies.decide(&olga(), &action(operation, resource_type), Instant::now())
}

fn holds_somewhere(
    policies: &KafkaPolicies,
    operation: Operation,
    resource_type: ResourceType,
) -> bool {
    policies.holds_on_some_resource(&olga(), operation, resource_type, Instant::now())
}

#[test]
fn an_operation_the_service_type_lacks_is_unplaced_on_every_type_and_the_rest_decided() {
    let full = load(&olga_has_all_everywhere());
    let mut asked = 0;
    for &newer in Operation::NEWER_THAN_THE_SERVICE_TYPE {
        let older = load(&without_access_types(olga_has_all_everywhere(), &[newer]));
        for &resource_type in ResourceType::ALL {
            if !resource_type.access_types().contains(&newer) {
                continue;
            }
            let asks = format!("{newer:?} on {resource_type:?}");
            assert!(decide(&full, newer, resource_type).allowed(), "{asks}");
            assert!(holds_somewhere(&full, newer, resource_type), "{asks}");
            assert_eq!(
                decide(&older, newer, resource_type),
                Reason::Unplaced,
                "{asks}: refused even to `all`, the policies never asked"
            );
            let action = action(newer, resource_type);
            assert!(
                older.explain(&olga(), &action, Instant::now()).is_none(),
                "{asks}: no engine answer to explain"
            );
            assert!(!holds_somewhere(&older, newer, resource_type), "{asks}");
            for &other in resource_type.access_types() {
                if other != newer {
                    assert_eq!(
                        decide(&older, other, resource_type),
                        decide(&full, other, resource_type),
                        "{other:?} on {resource_type:?} without {newer:?}"
                    );
                }
            }
            asked += 1;
        }
    }
    assert!(
        asked >= Operation::NEWER_THAN_THE_SERVICE_TYPE.len(),
        "each newer operation is asked on a type that accepts it"
    );
}

#[test]
fn the_operator_is_told_once_of_each_operation_the_service_type_lacks() {
    let newer = Operation::NEWER_THAN_THE_SERVICE_TYPE;
    assert!(load(&olga_has_all_everywhere()).warnings().is_empty());
    let warnings = load(&without_access_types(olga_has_all_everywhere(), newer)).warnings();
    assert_eq!(warnings.len(), newer.len(), "{warnings:?}");
    for (operation, warning) in newer.iter().zip(&warnings) {
        assert!(
            warning.contains(operation.kafka_name())
                && warning.contains(&format!("`{}`", operation.access_type()))
                && warning.contains("refused to everyone"),
            "{warning}"
        );
    }
}

#[test]
fn a_definition_without_one_of_kafkas_levels_is_refused_naming_it() {
    for &resource_type in ResourceType::ALL {
        let level = resource_type.level();
        let mut snapshot = olga_has_all_everywhere();
        let levels = snapshot["definition"]["resources"].as_array_mut().unwrap();
        levels.retain(|l| l["name"] != level);
        let policies = snapshot["policies"].as_array_mut().unwrap();
        policies.retain(|p| p["document"]["resources"].get(level).is_none());
        let bytes = serde_json::to_vec(&snapshot).unwrap();
        let Err(error) = KafkaPolicies::load(&bytes, Instant::now()) else {
            panic!("a definition without level `{level}` must be refused");
        };
        assert!(
            error
                .to_string()
                .contains(&format!("has no level `{level}`")),
            "{error}"
        );
    }
}
