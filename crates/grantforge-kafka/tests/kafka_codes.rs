//! The codes of Kafka's enums as kafka-clients itself defines them (`tests/fixtures/jni/kafka-codes.txt`,
//! written and checked by the shim's `KafkaCodesGoldenTest` from the kafka-clients jar): every code
//! the agent maps names the same constant in Kafka, and every other code is refused. A round trip
//! through `from_code` and `code` holds for any mapping, swapped codes included; this does not.

use std::collections::BTreeMap;

use grantforge_kafka::{Operation, PatternType, Permission, ResourceType};

/// (enum, constant) → code, from the fixture.
fn kafkas_codes() -> BTreeMap<(String, String), u8> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/jni/kafka-codes.txt"
    ))
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

#[test]
fn operations_decode_as_kafkas_acl_operation_codes() {
    let mapped = [
        "ALL",
        "READ",
        "WRITE",
        "CREATE",
        "DELETE",
        "ALTER",
        "DESCRIBE",
        "CLUSTER_ACTION",
        "DESCRIBE_CONFIGS",
        "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE",
        "CREATE_TOKENS",
        "DESCRIBE_TOKENS",
    ];
    check_decoding("AclOperation", &mapped, |code| {
        Operation::from_code(code).map(|op| op.kafka_name().to_string())
    });
    for (name, code) in constants("AclOperation") {
        if let Some(op) = Operation::from_code(code) {
            assert_eq!(op.code(), code, "{name}");
        }
    }
}

#[test]
fn resource_types_decode_as_kafkas_resource_type_codes() {
    let mapped = [
        "TOPIC",
        "GROUP",
        "CLUSTER",
        "TRANSACTIONAL_ID",
        "DELEGATION_TOKEN",
        "USER",
    ];
    // The level of the kafka service type is Kafka's constant in lower case.
    check_decoding("ResourceType", &mapped, |code| {
        ResourceType::from_code(code).map(|t| t.level().to_ascii_uppercase())
    });
    for (name, code) in constants("ResourceType") {
        if let Some(t) = ResourceType::from_code(code) {
            assert_eq!(t.code(), code, "{name}");
        }
    }
}

#[test]
fn acl_rows_carry_kafkas_pattern_and_permission_codes() {
    let kafka: BTreeMap<(String, String), u8> = kafkas_codes();
    let code = |kind: &str, constant: &str| kafka[&(kind.to_string(), constant.to_string())];
    assert_eq!(PatternType::Literal.code(), code("PatternType", "LITERAL"));
    assert_eq!(
        PatternType::Prefixed.code(),
        code("PatternType", "PREFIXED")
    );
    assert_eq!(Permission::Allow.code(), code("AclPermissionType", "ALLOW"));
    assert_eq!(Permission::Deny.code(), code("AclPermissionType", "DENY"));
}
