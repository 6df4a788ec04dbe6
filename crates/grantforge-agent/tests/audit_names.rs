//! No client can delay a revocation through the audit (issue 48): a client that names groups with
//! spaces or control characters, as any client may, even `User:ANONYMOUS`, gets events the server
//! takes (escaped, `docs/protocol.md`), not a batch refused whole that the agent's thread takes
//! apart one request at a time while a policy change waits. Against the project's test server,
//! which validates events as GrantForge's `AccessEventRequest` does, made slow to answer events.

mod common;

use std::time::{Duration, Instant};

use common::*;
use grantforge_agent::{registry, Agent};
use grantforge_kafka::{Action, KafkaContext, Operation, Principal, RequestContext, ResourceType};

/// Group ids of spaces and of control characters, each a name GrantForge refuses or that a
/// database cannot store as it is.
fn hostile_group_ids() -> Vec<String> {
    let mut names: Vec<String> = (1..=20).map(|n| " ".repeat(n)).collect();
    names.extend((1..=20u8).map(|c| format!("g{}", char::from(c))));
    names.push("\t\r\n".to_string());
    names.push("nul\u{0}".to_string());
    names
}

/// An anonymous client's OffsetFetch of `group`, as Kafka asks the authorizer (refused, audited).
fn anonymous_reads_group(agent: &Agent, group: &str) -> bool {
    let context = RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: "ANONYMOUS".into(),
        },
        conditions: KafkaContext {
            client_address: Some("127.0.0.1".parse().unwrap()),
            listener: "PLAINTEXT".into(),
            client_id: "\u{1}client".into(),
        },
        request_type: 9,
        request_version: 8,
    };
    let action = Action {
        operation: Some(Operation::Read),
        resource_type: Some(ResourceType::Group),
        literal: true,
        name: group,
        log_if_allowed: true,
        log_if_denied: true,
    };
    let mut allowed = [false];
    agent.authorize(&context, &[action], &mut allowed);
    allowed[0]
}

#[test]
fn a_client_naming_groups_with_spaces_and_control_characters_neither_loses_its_events_nor_delays_a_revocation(
) {
    const MARKER: &str = "revoked-soon";
    let server = server("hostile-names");
    server
        .set_policies_json(policies(Some(MARKER)).as_bytes())
        .unwrap();
    let agent = agent(
        &server,
        &temp_dir("hostile-names-cache"),
        &[FAST_AUDIT, &[("grantforge.download.jitter.ms", "0")]].concat(),
    );
    assert!(agent.await_snapshot(PATIENCE));
    assert!(may_read(&agent, MARKER));
    // Each request for events takes this long: a sender that takes a refused batch apart one
    // request at a time holds the agent's thread for many of them.
    server
        .set_fault(fault(
            r#"{"mode":"slow","delayMs":250,"endpoints":["access-events"]}"#,
        ))
        .unwrap();
    let before = last_seq(&server);
    let names = hostile_group_ids();
    for name in &names {
        assert!(!anonymous_reads_group(&agent, name));
    }
    eventually("the agent sends the refusals", PATIENCE, || {
        requests_after(&server, before)
            .iter()
            .any(|r| r.endpoint.as_deref() == Some("access-events"))
    });

    server.set_policies_json(policies(None).as_bytes()).unwrap();
    let changed = Instant::now();
    eventually("the policy change is applied", PATIENCE, || {
        !may_read(&agent, MARKER)
    });
    // The heartbeat round (1 s) that learns the new version, the download, and room for a slow
    // machine; the events' requests are slow, but there are few of them.
    let bound = Duration::from_secs(1 + 3);
    println!(
        "revocation applied {:?} after the change, beside a client of hostile group ids",
        changed.elapsed()
    );
    assert!(
        changed.elapsed() <= bound,
        "the revocation took {:?}, more than {bound:?}",
        changed.elapsed()
    );

    eventually(
        "the server has an event for every group id",
        PATIENCE,
        || {
            let events = server.events();
            names.iter().all(|name| {
                let shown = format!("(escaped) {}", serde_json::to_string(name).unwrap());
                events.iter().any(|e| e["resource"] == shown.as_str())
            })
        },
    );
    for event in server.events() {
        assert_eq!(event["user"], "ANONYMOUS");
        let request = event["request"].as_str().unwrap();
        assert!(
            request.contains(r#"client id (escaped) "\u0001client""#),
            "{request}"
        );
        assert!(!request.chars().any(char::is_control), "{request}");
    }
    assert_eq!(agent.stats().audit_dropped, 0, "no event lost");
    server.clear_fault();
    registry::release(&agent);
}
