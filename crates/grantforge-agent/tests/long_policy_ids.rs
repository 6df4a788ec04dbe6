//! GrantForge's policy ids are time-ordered longs of up to 19 digits, and its newest server refuses
//! an access event whose `policyId` is not `\d{1,19}` (the whole batch, 400). The fixture with such
//! ids goes through the test server, the agent's parse and decisions, the ACL view, `explain` and
//! the audit events the server takes.

mod common;

use common::*;
use grantforge_agent::registry;
use grantforge_kafka::Operation;

/// The fixture's policy `n` (1–6) as a 19-digit id, in the same ascending order.
fn long_id(n: u32) -> String {
    format!("72120000000000000{n:02}")
}

/// The fixture's policies with 19-digit ids.
fn policies_with_long_ids() -> String {
    let mut text = policies(None);
    for n in 1..=6 {
        text = text.replacen(
            &format!("\"id\": \"{n}\""),
            &format!("\"id\": \"{}\"", long_id(n)),
            1,
        );
    }
    assert!(!text.contains("\"id\": \"1\""), "every id was replaced");
    text
}

#[test]
fn nineteen_digit_policy_ids_go_through_decisions_acl_view_explain_and_audit() {
    assert_eq!(long_id(1).len(), 19);
    let server = server("long-ids");
    server
        .set_policies_json(policies_with_long_ids().as_bytes())
        .unwrap();
    let cache = temp_dir("long-ids-cache");
    let agent = agent(&server, &cache, FAST_AUDIT);
    eventually("the snapshot with long ids is in force", PATIENCE, || {
        version(&agent) == Some(server.policy_version())
    });

    // Decisions, audited: the events name the deciding policy by its long id, and the server
    // (which validates policyId as the newest GrantForge does) takes them.
    assert!(access(&agent, "alice", "orders", Operation::Write));
    assert!(!access(&agent, "alice", "payments", Operation::Write));
    eventually("both events reach the server", PATIENCE, || {
        counted(&server, "alice", "ALLOWED", "orders") == 1
            && counted(&server, "alice", "DENIED", "payments") == 1
    });
    let policy_of = |resource: &str| {
        server
            .events()
            .into_iter()
            .find(|e| e["resource"] == resource)
            .map(|e| e["policyId"].clone())
            .unwrap()
    };
    assert_eq!(policy_of("orders"), long_id(1).as_str());
    assert_eq!(policy_of("payments"), long_id(5).as_str());

    // The ACL view lists the policies whatever their ids.
    let policies = agent.policies().unwrap();
    assert!(policies
        .acl_view()
        .rows()
        .any(|r| r.principal == "User:alice" && r.name == "orders"));

    // `explain` names the deciding policy by its long id.
    let key_file = signing_key_file(&server);
    let (code, answer) = explain_alice_reads_orders(&cache, &key_file);
    assert_eq!(code, 0, "{answer}");
    assert!(
        answer.contains(&format!("decision: ALLOWED by policy {}", long_id(1))),
        "{answer}"
    );
    registry::release(&agent);
}
