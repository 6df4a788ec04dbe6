//! The `kafka` service type (`kafka-service-type.json`, and its table in
//! `docs/kafka-service-type.md`) is the agent's vocabulary: a level per resource type, an access
//! type per operation (all of them implied by `all`), a condition per evaluator, and the access types
//! each level accepts (which the service plugin is held to as well). A row added to one
//! and not the other fails here.

mod common;

use std::collections::BTreeSet;

use grantforge_kafka::{kafka_evaluators, Operation, ResourceType};
use serde_json::Value;

fn service_type() -> Value {
    serde_json::from_str(include_str!("../kafka-service-type.json")).unwrap()
}

fn names(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["name"].as_str().unwrap().to_string())
        .collect()
}

fn doc() -> String {
    std::fs::read_to_string(common::in_crate("../../docs/kafka-service-type.md")).unwrap()
}

#[test]
fn a_level_per_resource_type() {
    let levels: BTreeSet<String> = ResourceType::ALL
        .iter()
        .map(|t| t.level().to_string())
        .collect();
    assert_eq!(names(&service_type()["resources"]), levels);
    for t in ResourceType::ALL {
        let row = format!("| `{}` | {}", t.level(), t.kafka_name());
        assert!(
            doc().contains(&row),
            "docs/kafka-service-type.md has `{row}`"
        );
    }
}

#[test]
fn an_access_type_per_operation_all_implied_by_all() {
    let service_type = service_type();
    let access_types: BTreeSet<String> = Operation::ALL
        .iter()
        .map(|o| o.access_type().to_string())
        .collect();
    assert_eq!(names(&service_type["accessTypes"]), access_types);
    let all = service_type["accessTypes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "all")
        .unwrap();
    let implied: BTreeSet<String> = all["impliedGrants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap().to_string())
        .collect();
    let others: BTreeSet<String> = access_types.into_iter().filter(|a| a != "all").collect();
    assert_eq!(implied, others, "`all` implies every other access type");
    for entry in service_type["accessTypes"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let operation = Operation::from_access_type(name).unwrap();
        let implies: Vec<String> = entry["impliedGrants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|grant| format!("`{}`", grant.as_str().unwrap()))
            .collect();
        let implies = match operation {
            Operation::All => "every other type".to_string(),
            _ => implies.join(", "),
        };
        let row = format!("| `{name}` | {} | {implies} |", operation.kafka_name());
        assert!(
            doc().contains(&row),
            "docs/kafka-service-type.md has `{row}`"
        );
    }
}

#[test]
fn a_condition_per_evaluator() {
    let evaluators: BTreeSet<String> = kafka_evaluators().names().map(str::to_string).collect();
    assert_eq!(names(&service_type()["conditions"]), evaluators);
    for name in &evaluators {
        let row = format!("| `{name}` |");
        assert!(
            doc().contains(&row),
            "docs/kafka-service-type.md has `{row}`"
        );
    }
}

#[test]
fn the_access_types_of_each_level_are_those_the_doc_lists_in_definition_order() {
    let service_type = service_type();
    for t in ResourceType::ALL {
        let accepted: Vec<String> = service_type["accessTypes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .filter(|name| {
                t.access_types()
                    .contains(&Operation::from_access_type(name).unwrap())
            })
            .map(|name| format!("`{name}`"))
            .collect();
        assert_eq!(accepted.len(), t.access_types().len(), "{t:?}");
        let row = format!("| `{}` | {} |", t.level(), accepted.join(", "));
        assert!(
            doc().contains(&row),
            "docs/kafka-service-type.md has `{row}`"
        );
    }
}
