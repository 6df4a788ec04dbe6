//! The Kafka mapping on the snapshot the end-to-end tests and the demo use
//! (`tests/fixtures/snapshots/e2e.json`): the same answers the broker tests expect, without a broker.

mod common;

use grantforge_engine::Instant;
use grantforge_kafka::{
    Action, KafkaContext, KafkaPolicies, Operation, PatternType, Permission, Principal, Reason,
    RequestContext, ResourceType,
};

fn policies() -> KafkaPolicies {
    let bytes = std::fs::read(common::in_crate("../../tests/fixtures/snapshots/e2e.json")).unwrap();
    KafkaPolicies::load(&bytes, Instant::now()).unwrap()
}

fn user(name: &str) -> RequestContext {
    RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: name.into(),
        },
        conditions: KafkaContext {
            client_address: Some("127.0.0.1".parse().unwrap()),
            ..Default::default()
        },
        request_type: 0,
        request_version: 9,
    }
}

fn action(operation: Operation, resource_type: ResourceType, name: &str) -> Action<'_> {
    Action {
        operation: Some(operation),
        resource_type: Some(resource_type),
        literal: true,
        name,
        log_if_allowed: true,
        log_if_denied: true,
    }
}

fn allowed(
    p: &KafkaPolicies,
    who: &str,
    operation: Operation,
    resource_type: ResourceType,
    name: &str,
) -> bool {
    p.decide(
        &user(who),
        &action(operation, resource_type, name),
        Instant::now(),
    )
    .allowed()
}

#[test]
fn alice_works_with_orders_and_bob_does_not() {
    let p = policies();
    assert!(allowed(
        &p,
        "alice",
        Operation::Write,
        ResourceType::Topic,
        "orders"
    ));
    assert!(allowed(
        &p,
        "alice",
        Operation::Read,
        ResourceType::Topic,
        "orders"
    ));
    assert!(
        allowed(
            &p,
            "alice",
            Operation::Describe,
            ResourceType::Topic,
            "orders"
        ),
        "write implies describe"
    );
    assert!(
        allowed(
            &p,
            "alice",
            Operation::Read,
            ResourceType::Topic,
            "orders-eu"
        ),
        "role analyst, prefixed"
    );
    assert!(allowed(
        &p,
        "alice",
        Operation::Read,
        ResourceType::Group,
        "alice-1"
    ));
    assert!(!allowed(
        &p,
        "alice",
        Operation::Read,
        ResourceType::Group,
        "bob-1"
    ));
    assert!(!allowed(
        &p,
        "bob",
        Operation::Write,
        ResourceType::Topic,
        "orders"
    ));
    assert!(
        allowed(
            &p,
            "bob",
            Operation::Describe,
            ResourceType::Topic,
            "orders"
        ),
        "public describe"
    );
    assert!(!allowed(
        &p,
        "alice",
        Operation::Create,
        ResourceType::Topic,
        "orders"
    ));
}

#[test]
fn a_service_not_in_use_decides_nothing_by_its_policies_and_leaves_kafka_unchecked() {
    let enabled = policies();
    let file = std::fs::read_to_string(common::in_crate("../../tests/fixtures/snapshots/e2e.json"))
        .unwrap();
    let disabled_file = file.replacen(r#""serviceEnabled":true"#, r#""serviceEnabled":false"#, 1);
    assert_ne!(disabled_file, file);
    let disabled = KafkaPolicies::load(disabled_file.as_bytes(), Instant::now()).unwrap();
    // Allowed by policy 1, refused by policy 5, and by no policy: in use, three different
    // answers; not in use, none of them is the policies' (docs/kafka-service-type.md, rule 3).
    let questions = [
        ("alice", Operation::Write, "orders"),
        ("alice", Operation::Write, "payments"),
        ("bob", Operation::Write, "orders"),
    ];
    let in_use: Vec<Reason> = questions
        .iter()
        .map(|(who, op, topic)| {
            enabled.decide(
                &user(who),
                &action(*op, ResourceType::Topic, topic),
                Instant::now(),
            )
        })
        .collect();
    assert_eq!(
        in_use,
        [
            Reason::Policy {
                id: 1,
                allowed: true
            },
            Reason::Policy {
                id: 5,
                allowed: false
            },
            Reason::NoPolicy
        ]
    );
    for (who, op, topic) in questions {
        let reason = disabled.decide(
            &user(who),
            &action(op, ResourceType::Topic, topic),
            Instant::now(),
        );
        assert_eq!(reason, Reason::ServiceDisabled, "{who} {op:?} {topic}");
        assert!(reason.allowed() && !reason.checked() && reason.policy_id().is_none());
    }
    assert!(!enabled.holds_on_some_resource(
        &user("bob"),
        Operation::Write,
        ResourceType::Topic,
        Instant::now()
    ));
    assert!(disabled.holds_on_some_resource(
        &user("bob"),
        Operation::Write,
        ResourceType::Topic,
        Instant::now()
    ));
}

#[test]
fn a_denial_of_write_hides_the_topic() {
    let p = policies();
    let reason = p.decide(
        &user("alice"),
        &action(Operation::Describe, ResourceType::Topic, "payments"),
        Instant::now(),
    );
    assert_eq!(
        reason,
        Reason::Policy {
            id: 5,
            allowed: false
        }
    );
    assert!(allowed(
        &p,
        "bob",
        Operation::Describe,
        ResourceType::Topic,
        "payments"
    ));
}

#[test]
fn other_principal_types_and_odd_requests_are_refused() {
    let p = policies();
    let mut group = user("alice");
    group.principal.principal_type = "Group".into();
    assert!(!p
        .decide(
            &group,
            &action(Operation::Write, ResourceType::Topic, "orders"),
            Instant::now()
        )
        .allowed());
    assert!(
        p.decide(
            &group,
            &action(Operation::Describe, ResourceType::Topic, "orders"),
            Instant::now()
        )
        .allowed(),
        "public"
    );
    let empty_group = action(Operation::Read, ResourceType::Group, "");
    assert_eq!(
        p.decide(&user("alice"), &empty_group, Instant::now()),
        Reason::Unplaced
    );
    let mut prefixed = action(Operation::Write, ResourceType::Topic, "orders");
    prefixed.literal = false;
    assert_eq!(
        p.decide(&user("alice"), &prefixed, Instant::now()),
        Reason::Unplaced
    );
    let mut unknown = action(Operation::Write, ResourceType::Topic, "orders");
    unknown.operation = None;
    assert_eq!(
        p.decide(&user("alice"), &unknown, Instant::now()),
        Reason::Unplaced
    );
    assert_eq!(
        p.decide(
            &user("alice"),
            &action(Operation::Create, ResourceType::Topic, "orders"),
            Instant::now()
        ),
        Reason::NoPolicy
    );
}

#[test]
fn idempotent_producers_need_write_on_some_topic() {
    let p = policies();
    let now = Instant::now();
    assert!(p.holds_on_some_resource(&user("alice"), Operation::Write, ResourceType::Topic, now));
    assert!(!p.holds_on_some_resource(&user("bob"), Operation::Write, ResourceType::Topic, now));
    assert!(p.holds_on_some_resource(&user("bob"), Operation::Describe, ResourceType::Topic, now));
}

#[test]
fn policies_show_as_acl_rows() {
    let p = policies();
    let view = p.acl_view();
    let rows: Vec<(u8, PatternType, &str, &str, Operation, Permission)> = view
        .rows()
        .map(|r| {
            (
                r.resource_type,
                r.pattern_type,
                r.name,
                r.principal,
                r.operation,
                r.permission,
            )
        })
        .collect();
    let topic = ResourceType::Topic.code();
    let group = ResourceType::Group.code();
    let expected = vec![
        (
            topic,
            PatternType::Literal,
            "*",
            "User:*",
            Operation::Describe,
            Permission::Allow,
        ),
        (
            topic,
            PatternType::Literal,
            "orders",
            "Group:ops",
            Operation::AlterConfigs,
            Permission::Allow,
        ),
        (
            topic,
            PatternType::Literal,
            "orders",
            "User:alice",
            Operation::Read,
            Permission::Allow,
        ),
        (
            topic,
            PatternType::Literal,
            "orders",
            "User:alice",
            Operation::Write,
            Permission::Allow,
        ),
        (
            topic,
            PatternType::Literal,
            "payments",
            "User:alice",
            Operation::Write,
            Permission::Deny,
        ),
        (
            topic,
            PatternType::Prefixed,
            "orders",
            "Role:analyst",
            Operation::Read,
            Permission::Allow,
        ),
        (
            group,
            PatternType::Prefixed,
            "alice-",
            "User:alice",
            Operation::Read,
            Permission::Allow,
        ),
    ];
    let mut sorted_expected = expected.clone();
    sorted_expected.sort();
    let mut sorted_rows = rows.clone();
    sorted_rows.sort();
    assert_eq!(sorted_rows, sorted_expected);
}

#[test]
fn another_service_type_or_a_foreign_definition_is_refused_at_load() {
    let bytes = std::fs::read(common::in_crate("../../tests/fixtures/snapshots/e2e.json")).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let hive = text.replace("\"serviceType\":\"kafka\"", "\"serviceType\":\"hive\"");
    let err = KafkaPolicies::load(hive.as_bytes(), Instant::now()).expect_err("refused");
    assert!(err.to_string().contains("`hive`"), "{err}");
    let renamed = text.replace("{\"name\":\"transactional_id\"", "{\"name\":\"txn\"");
    let err = KafkaPolicies::load(renamed.as_bytes(), Instant::now()).expect_err("refused");
    assert!(err.to_string().contains("transactional_id"), "{err}");
}

#[test]
fn a_disabled_service_leaves_kafka_unchecked_and_unaudited() {
    let bytes =
        std::fs::read_to_string(common::in_crate("../../tests/fixtures/snapshots/e2e.json"))
            .unwrap();
    let disabled = bytes.replacen("\"serviceEnabled\":true", "\"serviceEnabled\":false", 1);
    assert_ne!(bytes, disabled, "the fixture says serviceEnabled");
    let p = KafkaPolicies::load(disabled.as_bytes(), Instant::now()).unwrap();
    let refused_when_enabled = action(Operation::Write, ResourceType::Topic, "orders");
    let reason = p.decide(&user("bob"), &refused_when_enabled, Instant::now());
    assert_eq!(reason, Reason::ServiceDisabled);
    assert!(reason.allowed() && !reason.checked());
    assert!(p.holds_on_some_resource(
        &user("bob"),
        Operation::Write,
        ResourceType::Topic,
        Instant::now()
    ));
    assert!(!allowed(
        &policies(),
        "bob",
        Operation::Write,
        ResourceType::Topic,
        "orders"
    ));
}
