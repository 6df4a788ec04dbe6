//! The codes of Kafka's enums as kafka-clients itself defines them (`tests/fixtures/jni/kafka-codes.txt`,
//! written from the newest supported release and checked against every release by the integration
//! tests' `KafkaVocabularyTest`): every row of the agent's tables names the same constant in Kafka,
//! and every other code is refused. A round trip
//! through `from_code` and `code` holds for any mapping, swapped codes included; this does not.

mod common;

use std::collections::BTreeMap;

use grantforge_kafka::{api_key_name, Operation, PatternType, Permission, ResourceType, API_KEYS};

/// (enum, constant) → code, from the fixture.
fn kafkas_codes() -> BTreeMap<(String, String), u8> {
    let text =
        std::fs::read_to_string(common::in_crate("../../tests/fixtures/jni/kafka-codes.txt"))
            .unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let [kind, constant, code] = fields[..] else {
                panic!("not `enum constant code`: {line}")
            };
            (
                (kind.to_string(), constant.to_string()),
                code.parse().unwrap(),
            )
        })
        .collect()
}

/// The constants of `kind` in Kafka, with their codes.
fn constants(kind: &str) -> Vec<(String, u8)> {
    let constants: Vec<(String, u8)> = kafkas_codes()
        .into_iter()
        .filter(|((k, _), _)| k == kind)
        .map(|((_, constant), code)| (constant, code))
        .collect();
    assert!(!constants.is_empty(), "{kind} is in the fixture");
    constants
}

/// Checks `from_code` against Kafka's constants: the ones the agent maps (`mapped`) decode to the
/// variant of that name, every other code (UNKNOWN, ANY, constants of newer releases, codes Kafka
/// does not define) is refused.
fn check_decoding(kind: &str, mapped: &[&str], decode: impl Fn(u8) -> Option<String>) {
    let kafka = constants(kind);
    for name in mapped {
        assert!(
            kafka.iter().any(|(constant, _)| constant == name),
            "{kind}.{name} is a Kafka constant"
        );
    }
    for code in 0..=u8::MAX {
        let kafkas = kafka.iter().find(|(_, c)| *c == code).map(|(n, _)| n);
        let expected = kafkas.filter(|n| mapped.contains(&n.as_str())).cloned();
        assert_eq!(
            decode(code),
            expected,
            "{kind} code {code} is Kafka's {kafkas:?}"
        );
    }
}

/// Every row of the agent's table for `kind` names Kafka's constant with Kafka's code, and every
/// other code decodes to nothing.
fn check_table(
    kind: &str,
    rows: impl Iterator<Item = (&'static str, u8)>,
    decode: impl Fn(u8) -> Option<&'static str>,
) {
    let rows: Vec<(&str, u8)> = rows.collect();
    let kafka = constants(kind);
    for (name, code) in &rows {
        assert!(
            kafka.contains(&(name.to_string(), *code)),
            "{kind}.{name} is code {code} in Kafka"
        );
    }
    let mapped: Vec<&str> = rows.iter().map(|(name, _)| *name).collect();
    check_decoding(kind, &mapped, |code| decode(code).map(str::to_string));
}

#[test]
fn operations_are_kafkas_acl_operations() {
    check_table(
        "AclOperation",
        Operation::ALL.iter().map(|o| (o.kafka_name(), o.code())),
        |code| Operation::from_code(code).map(Operation::kafka_name),
    );
}

#[test]
fn resource_types_are_kafkas_resource_types() {
    check_table(
        "ResourceType",
        ResourceType::ALL.iter().map(|t| (t.kafka_name(), t.code())),
        |code| ResourceType::from_code(code).map(ResourceType::kafka_name),
    );
}

#[test]
fn pattern_types_are_kafkas_pattern_types() {
    check_table(
        "PatternType",
        PatternType::ALL.iter().map(|p| (p.kafka_name(), p.code())),
        |code| PatternType::from_code(code).map(PatternType::kafka_name),
    );
}

#[test]
fn permissions_are_kafkas_acl_permission_types() {
    check_table(
        "AclPermissionType",
        Permission::ALL.iter().map(|p| (p.kafka_name(), p.code())),
        |code| Permission::from_code(code).map(Permission::kafka_name),
    );
}

/// Every operation of Kafka's but the filters (UNKNOWN, ANY) is one the agent knows: an operation of
/// a newer release in the fixture and not in the table fails here, not on a broker.
#[test]
fn the_agent_knows_every_operation_of_the_newest_release() {
    let unknown: Vec<String> = constants("AclOperation")
        .into_iter()
        .filter(|(name, code)| {
            !["UNKNOWN", "ANY"].contains(&name.as_str()) && Operation::from_code(*code).is_none()
        })
        .map(|(name, _)| name)
        .collect();
    assert!(
        unknown.is_empty(),
        "add a row to grantforge-kafka's vocabulary for {unknown:?} (docs/architecture.md, \"Adding a Kafka operation\")"
    );
}

/// Kafka's request types are read back as `(name, id)` pairs: the ids do not fit the fixture's
/// `u8` codes, and the table must name every type of the newest release, by id, as it does.
fn kafkas_api_keys() -> Vec<(String, i16)> {
    let text =
        std::fs::read_to_string(common::in_crate("../../tests/fixtures/jni/kafka-codes.txt"))
            .unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("ApiKeys "))
        .map(|row| {
            let (name, id) = row.split_once(' ').unwrap();
            (name.to_string(), id.parse().unwrap())
        })
        .collect()
}

#[test]
fn request_types_are_kafkas_api_keys_by_id() {
    let kafka = kafkas_api_keys();
    assert!(
        kafka.len() >= 90,
        "only {} request types: is the fixture whole?",
        kafka.len()
    );
    let table: Vec<(String, i16)> = API_KEYS
        .iter()
        .map(|(n, id)| (n.to_string(), *id))
        .collect();
    assert_eq!(
        table, kafka,
        "the vocabulary's request types are the newest release's"
    );
    for id in -1..=1024 {
        let kafkas = kafka
            .iter()
            .find(|(_, k)| *k == id)
            .map(|(n, _)| n.as_str());
        assert_eq!(api_key_name(id), kafkas, "request type {id}");
    }
}
