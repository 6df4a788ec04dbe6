//! The tests of `migrate-acls`: what the agent decides on the migrated snapshot, and what the
//! report says where it differs from Kafka.

use std::collections::BTreeSet;

use grantforge_engine::Instant;
use serde_json::{json, Value};

use super::writing::{fnv1a, policy_name, POLICY_NAME_MAX_CHARS};
use super::*;
use crate::conditions::KafkaContext;
use crate::policies::{Action, KafkaPolicies, Principal, RequestContext};
use crate::vocabulary::{Operation, ResourceType};

const TOPIC: u8 = 2;
const GROUP: u8 = 3;
const CLUSTER: u8 = 4;
const LITERAL: u8 = 3;
const PREFIXED: u8 = 4;
const DENY: u8 = 2;
const ALLOW: u8 = 3;

fn acl(
    resource_type: u8,
    pattern_type: u8,
    name: &str,
    principal: &str,
    host: &str,
    operation: Operation,
    permission: u8,
) -> KafkaAcl {
    KafkaAcl {
        resource_type,
        pattern_type,
        name: name.to_string(),
        principal: principal.to_string(),
        host: host.to_string(),
        operation: operation.code(),
        permission,
    }
}

fn allow(name: &str, principal: &str, operation: Operation) -> KafkaAcl {
    acl(TOPIC, LITERAL, name, principal, "*", operation, ALLOW)
}

fn deny(name: &str, principal: &str, operation: Operation) -> KafkaAcl {
    acl(TOPIC, LITERAL, name, principal, "*", operation, DENY)
}

/// Whether the agent on the migrated snapshot allows `principal` from `address` to perform
/// `operation` on `resource_type` `name`.
fn decides(
    migration: &Migration,
    principal: &str,
    address: &str,
    resource_type: ResourceType,
    name: &str,
    operation: Operation,
) -> bool {
    let policies = KafkaPolicies::load(migration.snapshot_json.as_bytes(), Instant::now()).unwrap();
    let (principal_type, principal_name) = principal.split_once(':').unwrap();
    let context = RequestContext {
        principal: Principal {
            principal_type: principal_type.to_string(),
            name: principal_name.to_string(),
        },
        conditions: KafkaContext {
            client_address: Some(address.parse().unwrap()),
            ..KafkaContext::default()
        },
        ..RequestContext::default()
    };
    let action = Action {
        operation: Some(operation),
        resource_type: Some(resource_type),
        literal: true,
        name,
        log_if_allowed: false,
        log_if_denied: false,
    };
    policies.decide(&context, &action, Instant::now()).allowed()
}

fn migrate(acls: &[KafkaAcl]) -> Migration {
    migrate_acls(acls, "kafka-migrated").unwrap()
}

#[test]
fn a_literal_allow_of_a_user_becomes_a_user_item_and_implies_describe_as_in_kafka() {
    let m = migrate(&[allow("orders", "User:alice", Operation::Read)]);
    assert_eq!((m.migrated, m.policies), (1, 1));
    assert!(m.report.is_empty(), "{:?}", m.report);
    let read = |name, op| decides(&m, "User:alice", "10.0.0.1", ResourceType::Topic, name, op);
    assert!(read("orders", Operation::Read));
    assert!(
        read("orders", Operation::Describe),
        "READ implies DESCRIBE in both"
    );
    assert!(!read("orders", Operation::Write));
    assert!(
        !read("orders2", Operation::Read),
        "a literal name is that name only"
    );
    assert!(!decides(
        &m,
        "User:bob",
        "10.0.0.1",
        ResourceType::Topic,
        "orders",
        Operation::Read
    ));
}

#[test]
fn a_prefixed_pattern_becomes_the_prefix_and_a_star() {
    let m = migrate(&[acl(
        GROUP,
        PREFIXED,
        "etl-",
        "User:alice",
        "*",
        Operation::Read,
        ALLOW,
    )]);
    let read = |name| {
        decides(
            &m,
            "User:alice",
            "10.0.0.1",
            ResourceType::Group,
            name,
            Operation::Read,
        )
    };
    assert!(read("etl-"));
    assert!(read("etl-nightly"));
    assert!(!read("et"));
    assert!(!read("x-etl-"));
    assert!(m.snapshot_json.contains("\"etl-*\""));
}

#[test]
fn the_literal_wildcard_name_covers_every_resource_of_its_type_only() {
    let m = migrate(&[allow("*", "User:alice", Operation::Write)]);
    let alice = |t, name| decides(&m, "User:alice", "10.0.0.1", t, name, Operation::Write);
    assert!(alice(ResourceType::Topic, "anything"));
    assert!(!alice(ResourceType::Group, "anything"));
}

#[test]
fn user_star_is_everyone_of_any_principal_type_as_in_kafka() {
    let m = migrate(&[allow("news", "User:*", Operation::Read)]);
    assert!(m.report.is_empty());
    for principal in ["User:alice", "User:bob", "Group:ops", "ServiceAccount:etl"] {
        assert!(
            decides(
                &m,
                principal,
                "10.0.0.1",
                ResourceType::Topic,
                "news",
                Operation::Read
            ),
            "{principal}"
        );
    }
}

#[test]
fn a_deny_beats_an_allow_of_the_same_policy_and_of_another() {
    let m = migrate(&[
        allow("*", "User:*", Operation::All),
        deny("payments", "User:alice", Operation::Write),
        acl(
            TOPIC,
            PREFIXED,
            "pay",
            "User:bob",
            "*",
            Operation::All,
            DENY,
        ),
    ]);
    let ask = |p, name, op| decides(&m, p, "10.0.0.1", ResourceType::Topic, name, op);
    assert!(!ask("User:alice", "payments", Operation::Write));
    assert!(ask("User:alice", "payments", Operation::Read));
    assert!(ask("User:alice", "orders", Operation::Write));
    assert!(
        !ask("User:bob", "payments", Operation::Read),
        "DENY ALL denies every operation"
    );
    assert!(!ask("User:bob", "payments", Operation::Describe));
    assert!(ask("User:bob", "orders", Operation::Read));
}

#[test]
fn a_deny_of_an_operation_that_implies_others_is_reported_as_narrower() {
    let acls = [
        allow("payments", "User:alice", Operation::Describe),
        deny("payments", "User:alice", Operation::Write),
        deny("payments", "User:alice", Operation::Create),
        deny("payments", "User:alice", Operation::All),
    ];
    let m = migrate(&acls);
    assert_eq!(m.report.len(), 1, "{:?}", m.report);
    let entry = &m.report[0];
    assert_eq!((entry.acl, entry.finding), (1, Finding::DenyCoversImplied));
    assert_eq!(entry.narrowed, vec![Operation::Describe]);
    assert!(
        !decides(
            &m,
            "User:alice",
            "10.0.0.1",
            ResourceType::Topic,
            "payments",
            Operation::Describe
        ),
        "the narrowing the report names is real"
    );
    assert!(m.report_text(&acls).contains(
        "narrower     TOPIC:LITERAL:payments User:alice from * DENY WRITE: GrantForge's deny of WRITE also denies DESCRIBE"
    ));
}

#[test]
fn a_host_that_is_an_ip_address_becomes_an_ip_range_condition() {
    let m = migrate(&[
        acl(
            TOPIC,
            LITERAL,
            "orders",
            "User:alice",
            "10.0.0.1",
            Operation::Read,
            ALLOW,
        ),
        acl(
            TOPIC,
            LITERAL,
            "orders",
            "User:alice",
            "0:0:0:0:0:0:0:1",
            Operation::Read,
            ALLOW,
        ),
        acl(
            TOPIC,
            LITERAL,
            "orders",
            "User:bob",
            "*",
            Operation::Read,
            ALLOW,
        ),
        acl(
            TOPIC,
            LITERAL,
            "orders",
            "User:bob",
            "10.0.0.9",
            Operation::Read,
            DENY,
        ),
    ]);
    let findings: Vec<(usize, Finding)> = m.report.iter().map(|e| (e.acl, e.finding)).collect();
    assert_eq!(
        findings,
        vec![(3, Finding::DenyCoversImplied)],
        "only the deny of READ"
    );
    let read = |p, address| {
        decides(
            &m,
            p,
            address,
            ResourceType::Topic,
            "orders",
            Operation::Read,
        )
    };
    assert!(read("User:alice", "10.0.0.1"));
    assert!(read("User:alice", "::1"));
    assert!(!read("User:alice", "10.0.0.2"));
    assert!(read("User:bob", "10.0.0.8"));
    assert!(!read("User:bob", "10.0.0.9"), "a deny from one address");
}

#[test]
fn hosts_kafka_never_matches_are_reported_and_not_read_as_addresses_or_ranges() {
    let hosts = [
        "client.example.com",
        "10.0.0.0/8",
        "::1",
        "010.0.0.1",
        "::ffff:10.0.0.1",
        "fe80:0:0:0:0:0:0:1%eth0",
    ];
    let acls: Vec<KafkaAcl> = hosts
        .iter()
        .map(|h| {
            acl(
                TOPIC,
                LITERAL,
                "orders",
                "User:alice",
                h,
                Operation::Read,
                ALLOW,
            )
        })
        .collect();
    let m = migrate(&acls);
    assert_eq!(m.migrated, 0);
    assert_eq!(m.report.len(), hosts.len());
    for (entry, host) in m.report.iter().zip(hosts) {
        assert_eq!(entry.finding, Finding::NotMigrated);
        assert!(
            entry.message.contains(&format!("the host `{host}`")),
            "{}",
            entry.message
        );
        assert_eq!(entry.narrowed, vec![Operation::Read, Operation::Describe]);
    }
    assert!(!decides(
        &m,
        "User:alice",
        "10.0.0.1",
        ResourceType::Topic,
        "orders",
        Operation::Read
    ));
}

#[test]
fn group_principals_become_groups_and_are_reported_as_a_changed_meaning() {
    let m = migrate(&[
        acl(
            TOPIC,
            LITERAL,
            "orders",
            "Group:ops",
            "*",
            Operation::AlterConfigs,
            ALLOW,
        ),
        deny("orders", "Group:ops", Operation::Delete),
    ]);
    assert_eq!(m.migrated, 2);
    let findings: Vec<(usize, Finding)> = m.report.iter().map(|e| (e.acl, e.finding)).collect();
    assert_eq!(
        findings,
        vec![
            (0, Finding::GroupMembers),
            (1, Finding::DenyCoversImplied),
            (1, Finding::GroupMembers)
        ]
    );
    assert_eq!(
        m.report[0].narrowed,
        vec![Operation::DescribeConfigs, Operation::AlterConfigs]
    );
    assert!(
        m.report[2].narrowed.is_empty(),
        "a group's deny can only widen for Group principals"
    );
    let snapshot: Value = serde_json::from_str(&m.snapshot_json).unwrap();
    let document = &snapshot["policies"][0]["document"];
    assert_eq!(document["allow"][0]["groups"], json!(["ops"]));
    assert_eq!(document["deny"][0]["groups"], json!(["ops"]));
    assert!(!decides(
        &m,
        "Group:ops",
        "10.0.0.1",
        ResourceType::Topic,
        "orders",
        Operation::AlterConfigs
    ));
}

#[test]
fn principals_without_a_grantforge_subject_are_reported_not_migrated() {
    let principals = [
        "ServiceAccount:etl",
        "Group:*",
        "Group:public",
        "User:",
        "alice",
    ];
    let acls: Vec<KafkaAcl> = principals
        .iter()
        .map(|p| acl(TOPIC, LITERAL, "orders", p, "*", Operation::Read, DENY))
        .collect();
    let m = migrate(&acls);
    assert_eq!(m.migrated, 0);
    assert_eq!(m.policies, 0);
    for entry in &m.report {
        assert_eq!(entry.finding, Finding::NotMigrated);
        assert!(entry.narrowed.is_empty(), "a deny left out can only widen");
        assert!(entry
            .message
            .ends_with("what it denied is no longer denied by it"));
    }
    assert!(m.report[0].message.contains("type `ServiceAccount`"));
    assert!(m.report[1].message.contains("`Group:*` is no wildcard"));
    assert!(m.report[2].message.contains("which is everyone"));
    assert!(m.report[3].message.contains("not `Type:name`"));
}

#[test]
fn names_with_wildcard_characters_and_unknown_codes_are_reported_not_migrated() {
    let m = migrate(&[
        acl(
            GROUP,
            LITERAL,
            "a*b",
            "User:alice",
            "*",
            Operation::Read,
            ALLOW,
        ),
        acl(
            GROUP,
            PREFIXED,
            "a?",
            "User:alice",
            "*",
            Operation::Read,
            ALLOW,
        ),
        acl(
            GROUP,
            PREFIXED,
            "*",
            "User:alice",
            "*",
            Operation::Read,
            ALLOW,
        ),
        acl(9, LITERAL, "x", "User:alice", "*", Operation::Read, ALLOW),
        acl(TOPIC, 2, "x", "User:alice", "*", Operation::Read, ALLOW),
        acl(TOPIC, LITERAL, "x", "User:alice", "*", Operation::Read, 1),
        KafkaAcl {
            operation: 99,
            ..allow("x", "User:alice", Operation::Read)
        },
    ]);
    assert_eq!(m.migrated, 0);
    let messages: Vec<&str> = m.report.iter().map(|e| e.message.as_str()).collect();
    assert!(messages[0].contains("`a*b` holds `*` or `?`"));
    assert!(messages[1].contains("`a?` holds"));
    assert!(
        messages[2].contains("`*` holds"),
        "a PREFIXED `*` is a prefix, not Kafka's wildcard"
    );
    assert!(messages[3].contains("resource type code 9"));
    assert!(messages[4].contains("pattern type code 2"));
    assert!(messages[5].contains("permission code 1"));
    assert!(messages[6].contains("operation code 99"));
}

#[test]
fn cluster_acls_and_every_resource_type_migrate() {
    let mut acls = vec![acl(
        CLUSTER,
        LITERAL,
        "kafka-cluster",
        "User:alice",
        "*",
        Operation::IdempotentWrite,
        ALLOW,
    )];
    // a describing operation Kafka asks of each type (of a user: its tokens)
    let describing = |t: ResourceType| match t {
        ResourceType::User => Operation::DescribeTokens,
        _ => Operation::Describe,
    };
    for code in 2..=7 {
        let t = ResourceType::from_code(code).unwrap();
        acls.push(acl(
            code,
            LITERAL,
            "r",
            "User:bob",
            "*",
            describing(t),
            ALLOW,
        ));
    }
    let m = migrate(&acls);
    assert_eq!((m.migrated, m.policies), (7, 7));
    assert!(decides(
        &m,
        "User:alice",
        "10.0.0.1",
        ResourceType::Cluster,
        "kafka-cluster",
        Operation::IdempotentWrite
    ));
    for code in 2..=7 {
        let t = ResourceType::from_code(code).unwrap();
        assert!(
            decides(&m, "User:bob", "10.0.0.1", t, "r", describing(t)),
            "{t:?}"
        );
    }
}

/// Every ACL Kafka's Admin API can store: each resource type, operation and permission.
fn every_storable_acl() -> Vec<KafkaAcl> {
    let mut acls = Vec::new();
    for t in ResourceType::ALL {
        for o in Operation::ALL {
            for permission in [ALLOW, DENY] {
                let name = if *t == ResourceType::Cluster {
                    "kafka-cluster"
                } else {
                    "r"
                };
                acls.push(acl(
                    t.code(),
                    LITERAL,
                    name,
                    "User:bob",
                    "*",
                    *o,
                    permission,
                ));
            }
        }
    }
    acls
}

#[test]
fn policy_requests_name_only_access_types_their_level_accepts() {
    let m = migrate(&every_storable_acl());
    let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
    let requests = requests.as_array().unwrap();
    assert_eq!(requests.len(), ResourceType::ALL.len());
    for request in requests {
        let resources = request["document"]["resources"].as_object().unwrap();
        let level = resources.keys().next().unwrap();
        let accepted: BTreeSet<&str> = ResourceType::from_level(level)
            .unwrap()
            .access_types()
            .iter()
            .map(|o| o.access_type())
            .collect();
        for list in ["allow", "deny"] {
            for item in request["document"][list].as_array().unwrap() {
                for access_type in item["accessTypes"].as_array().unwrap() {
                    let access_type = access_type.as_str().unwrap();
                    assert!(
                        accepted.contains(access_type),
                        "{list} `{access_type}` on level `{level}`: GrantForge refuses it"
                    );
                }
            }
        }
    }
}

#[test]
fn an_allow_kafka_never_asks_of_its_type_becomes_what_it_implies_that_kafka_asks() {
    let m = migrate(&[
        acl(
            CLUSTER,
            LITERAL,
            "kafka-cluster",
            "User:alice",
            "*",
            Operation::Write,
            ALLOW,
        ),
        acl(
            GROUP,
            LITERAL,
            "g",
            "User:alice",
            "*",
            Operation::Write,
            ALLOW,
        ),
    ]);
    assert_eq!((m.migrated, m.report.len()), (2, 0), "{:?}", m.report);
    let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
    for request in requests.as_array().unwrap() {
        assert_eq!(
            request["document"]["allow"][0]["accessTypes"],
            json!(["describe"])
        );
    }
    // as in Kafka, where an ALLOW WRITE allows DESCRIBE of any resource type
    assert!(decides(
        &m,
        "User:alice",
        "10.0.0.1",
        ResourceType::Cluster,
        "kafka-cluster",
        Operation::Describe
    ));
    assert!(decides(
        &m,
        "User:alice",
        "10.0.0.1",
        ResourceType::Group,
        "g",
        Operation::Describe
    ));
    assert!(!decides(
        &m,
        "User:alice",
        "10.0.0.1",
        ResourceType::Group,
        "g",
        Operation::Read
    ));
}

#[test]
fn acls_that_decide_nothing_kafka_asks_are_reported_not_migrated() {
    let acls = [
        acl(
            TOPIC,
            LITERAL,
            "t",
            "User:alice",
            "*",
            Operation::IdempotentWrite,
            ALLOW,
        ),
        acl(
            7,
            LITERAL,
            "u",
            "User:alice",
            "*",
            Operation::Describe,
            ALLOW,
        ),
        acl(
            GROUP,
            LITERAL,
            "g",
            "User:alice",
            "*",
            Operation::Write,
            DENY,
        ),
    ];
    let m = migrate(&acls);
    assert_eq!((m.migrated, m.policies), (0, 0));
    let messages: Vec<&str> = m.report.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].starts_with("Kafka never asks IDEMPOTENT_WRITE of a TOPIC and GrantForge refuses `idempotent_write` on level `topic`, and it implies nothing"), "{}", messages[0]);
    assert!(
        messages[1].starts_with("Kafka never asks DESCRIBE of a USER"),
        "{}",
        messages[1]
    );
    assert!(messages[2].starts_with("Kafka never asks WRITE of a GROUP and GrantForge refuses `write` on level `group`: this DENY decided nothing"), "{}", messages[2]);
    assert!(m.report.iter().all(|e| e.finding == Finding::NotMigrated));
}

#[test]
fn subjects_with_the_same_operations_share_one_item_and_requests_carry_the_label() {
    let m = migrate(&[
        allow("orders", "User:alice", Operation::Read),
        allow("orders", "User:bob", Operation::Read),
        allow("orders", "User:carol", Operation::Write),
    ]);
    let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
    let policy = &requests[0];
    assert_eq!(policy["labels"], json!([MIGRATION_LABEL]));
    assert_eq!(policy["name"], "kafka acls: topic orders");
    let allow = policy["document"]["allow"].as_array().unwrap();
    assert_eq!(allow.len(), 2);
    assert_eq!(allow[0]["users"], json!(["alice", "bob"]));
    assert_eq!(allow[0]["accessTypes"], json!(["read"]));
    assert_eq!(allow[1]["users"], json!(["carol"]));
}

#[test]
fn long_names_are_cut_to_grantforges_limit() {
    let long = "t".repeat(300);
    let m = migrate(&[allow(&long, "User:alice", Operation::Read)]);
    let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
    let name = requests[0]["name"].as_str().unwrap();
    assert_eq!(name.chars().count(), POLICY_NAME_MAX_CHARS);
    assert!(decides(
        &m,
        "User:alice",
        "10.0.0.1",
        ResourceType::Topic,
        &long,
        Operation::Read
    ));
}

#[test]
fn long_names_that_share_their_beginning_name_two_policies() {
    let (a, b) = (
        format!("{}a", "t".repeat(300)),
        format!("{}b", "t".repeat(300)),
    );
    let m = migrate(&[
        allow(&a, "User:alice", Operation::Read),
        allow(&b, "User:alice", Operation::Read),
    ]);
    let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
    let names: BTreeSet<&str> = requests
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names
        .iter()
        .all(|n| n.chars().count() == POLICY_NAME_MAX_CHARS));
}

#[test]
fn a_cut_name_ends_with_the_fnv1a_hash_of_its_value_in_every_release() {
    // FNV-1a's published vectors: a later run of migrate-acls names the same policies.
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    let long = "t".repeat(300);
    let suffix = format!("… #{:016x}", fnv1a(long.as_bytes()));
    assert!(policy_name("topic", &long).ends_with(&suffix));
}

#[test]
fn the_reports_summary_counts_what_was_left_out_apart_from_what_changed_meaning() {
    // One ACL left out and two narrowed: counts that differ, so neither stands in for the other.
    let acls = [
        allow("orders", "User:alice", Operation::Read),
        acl(
            TOPIC,
            LITERAL,
            "orders",
            "User:bob",
            "client.example.com",
            Operation::Read,
            ALLOW,
        ),
        deny("orders", "User:carol", Operation::Write),
        deny("payments", "User:carol", Operation::Read),
    ];
    let m = migrate(&acls);
    assert!(m.report_text(&acls).starts_with(
        "migrate-acls: 4 ACLs read, 3 migrated into 2 policies, 1 not migrated, 2 migrated with a changed meaning\n"
    ), "{}", m.report_text(&acls));
}

#[test]
fn the_finding_codes_are_those_the_shim_reads() {
    // The codes cross JNI as bare numbers; the shim's constants are read from its source, so a
    // change on either side fails here rather than mislabelling the report in Java.
    let java = include_str!(
        "../../../../java-shim/src/main/java/org/devlive/grantforge/kafka/agent/tools/AclMigration.java"
    );
    let constant = |name: &str| -> u8 {
        let declared = format!("static final int {name} = ");
        let at = java.find(&declared).expect("AclMigration.java declares it") + declared.len();
        java[at..].split(';').next().unwrap().parse().unwrap()
    };
    assert_eq!(Finding::NotMigrated.code(), constant("NOT_MIGRATED"));
    assert_eq!(
        Finding::DenyCoversImplied.code(),
        constant("DENY_COVERS_IMPLIED")
    );
    assert_eq!(Finding::GroupMembers.code(), constant("GROUP_MEMBERS"));
}

#[test]
fn no_acls_make_an_empty_snapshot_that_loads() {
    let m = migrate(&[]);
    assert_eq!((m.migrated, m.policies), (0, 0));
    assert_eq!(m.policy_requests_json, "[]");
    assert!(m.report_text(&[]).starts_with("migrate-acls: 0 ACLs read"));
}
