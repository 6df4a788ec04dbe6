//! Shadow and compare modes against a real server: every question counted as an agreement or a
//! disagreement of its kind, disagreements folded into one event per key and window (carrying both
//! answers and what decided each), shadow mode auditing nothing else, and nothing compared while
//! no snapshot is in force.

mod common;

use common::{
    agent, counted, eventually, on_topic, producer, server, temp_dir, FAST_AUDIT, PATIENCE,
};

use grantforge_agent::comparison::{Compared, Decider};
use grantforge_agent::Agent;
use grantforge_kafka::{Action, Operation, RequestContext};

fn alice() -> RequestContext {
    producer("alice")
}

fn write(topic: &str) -> Action<'_> {
    on_topic(topic, Operation::Write)
}

fn compare(agent: &Agent, topic: &str, kafka_allowed: bool, decider: Decider) -> Compared {
    let mut compared = [Compared::default()];
    agent.compare(
        &alice(),
        &[write(topic)],
        &[kafka_allowed],
        decider,
        &mut compared,
    );
    compared[0]
}

fn with_snapshot(name: &str) -> (grantforge_testserver::RunningServer, std::sync::Arc<Agent>) {
    let server = server(name);
    let agent = agent(&server, &temp_dir(&format!("{name}-cache")), FAST_AUDIT);
    assert!(agent.await_snapshot(PATIENCE));
    (server, agent)
}

#[test]
fn shadow_mode_counts_agreements_and_folds_each_disagreement_into_one_event_per_window() {
    let (server, agent) = with_snapshot("shadow");
    // Policy 1 lets alice write `orders`, as Kafka's ACLs do: agreements, and no access is audited.
    for _ in 0..10 {
        let compared = compare(&agent, "orders", true, Decider::Kafka);
        assert_eq!(
            compared,
            Compared {
                grantforge_allowed: true,
                ..Compared::default()
            }
        );
    }
    // Policy 5 denies alice writes to `payments`, which Kafka's ACLs allow.
    let first = compare(&agent, "payments", true, Decider::Kafka);
    assert!(first.disagrees && first.wants_kafka_basis && !first.grantforge_allowed);
    agent.describe_kafka_basis(
        &alice(),
        &write("payments"),
        true,
        Decider::Kafka,
        "ALLOW ACL TOPIC:LITERAL:payments User:alice from * ALLOW WRITE",
    );
    for _ in 0..999 {
        let again = compare(&agent, "payments", true, Decider::Kafka);
        assert!(
            again.disagrees && !again.wants_kafka_basis,
            "told once per key"
        );
    }
    let stats = agent.stats();
    assert_eq!(stats.shadow_agreements, 10);
    assert_eq!(stats.shadow_grantforge_refuses, 1000);
    assert_eq!(stats.shadow_grantforge_allows, 0);
    assert!(
        stats.shadow_disagreements.contains("1000\tshadow\tGrantForge refuses what Kafka allows\tUser:alice\tWRITE\tTOPIC:payments\tpolicy 5\tALLOW ACL TOPIC:LITERAL:payments"),
        "{}",
        stats.shadow_disagreements
    );
    eventually("the disagreements reach the server", PATIENCE, || {
        counted(&server, "alice", "ALLOWED", "payments") == 1000
    });
    let events: Vec<_> = server
        .events()
        .into_iter()
        .filter(|e| e["resource"] == "payments")
        .collect();
    assert!(
        events.len() <= 3,
        "folded, not one event per disagreement: {events:?}"
    );
    for event in &events {
        assert_eq!(event["enforcer"], "NATIVE", "Kafka decided: {event}");
        assert_eq!(event["policyId"], "5");
        assert_eq!(event["comparison"]["mode"], "shadow");
        assert_eq!(event["comparison"]["kafka"], "ALLOWED");
        assert_eq!(event["comparison"]["grantforge"], "DENIED");
        assert!(event["request"]
            .as_str()
            .unwrap()
            .starts_with("shadow disagreement (Kafka decides): GrantForge refuses (policy 5), Kafka allows (ALLOW ACL TOPIC:LITERAL:payments"));
    }
    assert_eq!(
        counted(&server, "alice", "ALLOWED", "orders"),
        0,
        "GrantForge enforces nothing in shadow mode: its answers are not audited as accesses"
    );
}

#[test]
fn compare_mode_answers_with_grantforge_and_audits_each_access_once() {
    let (server, agent) = with_snapshot("compare");
    // Kafka's ACLs refuse alice writes to `orders`; policy 1 allows them.
    let compared = compare(&agent, "orders", false, Decider::GrantForge);
    assert!(compared.grantforge_allowed && compared.disagrees);
    // Policy 5 refuses alice writes to `payments`, as Kafka's ACLs do: an agreement.
    let agreed = compare(&agent, "payments", false, Decider::GrantForge);
    assert!(!agreed.grantforge_allowed && !agreed.disagrees);
    let stats = agent.stats();
    assert_eq!(stats.shadow_grantforge_allows, 1);
    assert_eq!(stats.shadow_grantforge_refuses, 0);
    let events_on = |topic: &str| {
        server
            .events()
            .into_iter()
            .filter(|e| e["resource"] == topic)
            .collect::<Vec<_>>()
    };
    eventually("both accesses reach the server", PATIENCE, || {
        events_on("orders").len() + events_on("payments").len() >= 2
    });
    // Two more fold windows and flushes: a second event of the disagreeing access would be here.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let orders = events_on("orders");
    assert_eq!(
        orders.len(),
        1,
        "the disagreeing access, audited once: {orders:?}"
    );
    let payments = events_on("payments");
    assert_eq!(
        payments.len(),
        1,
        "the agreeing access, audited as ever: {payments:?}"
    );
    assert!(payments[0].get("comparison").is_none());
    assert_eq!(payments[0]["outcome"], "DENIED");
    let disagreement = &orders[0];
    assert_eq!(disagreement["enforcer"], "GRANTFORGE");
    assert_eq!(disagreement["outcome"], "ALLOWED");
    assert_eq!(disagreement["comparison"]["mode"], "compare");
    assert_eq!(disagreement["comparison"]["kafka"], "DENIED");
}

#[test]
fn nothing_is_compared_while_no_snapshot_is_in_force() {
    let server = server("no-snapshot");
    server
        .set_fault(common::fault(r#"{"mode":"down"}"#))
        .unwrap();
    let agent = agent(&server, &temp_dir("no-snapshot-cache"), FAST_AUDIT);
    let compared = compare(&agent, "orders", true, Decider::Kafka);
    assert!(!compared.disagrees && !compared.grantforge_allowed);
    let stats = agent.stats();
    assert_eq!(stats.shadow_not_compared, 1);
    assert_eq!(stats.shadow_grantforge_refuses, 0);
    assert_eq!(stats.shadow_disagreements, "");
}

#[test]
fn a_filter_question_is_answered_but_not_compared() {
    let (_server, agent) = with_snapshot("filter");
    // A listing's question (logIfDenied off) where the answers differ: policy 5 denies alice
    // writes to `payments`, Kafka's ACLs allow them.
    let listing = Action {
        log_if_denied: false,
        ..write("payments")
    };
    let mut compared = [Compared::default(); 2];
    agent.compare(
        &alice(),
        &[listing, write("orders")],
        &[true, true],
        Decider::GrantForge,
        &mut compared,
    );
    assert!(
        !compared[0].disagrees && !compared[0].grantforge_allowed,
        "GrantForge's answer, not compared"
    );
    assert!(compared[1].grantforge_allowed && !compared[1].disagrees);
    let stats = agent.stats();
    assert_eq!(stats.shadow_not_compared, 1, "the filter question");
    assert_eq!(stats.shadow_agreements, 1);
    assert_eq!(stats.shadow_grantforge_refuses, 0);
    assert_eq!(stats.shadow_disagreements, "");
}
