//! The ACL view of an offline agent follows the clock: the agent's own thread recomputes it when a
//! validity period starts or ends, with the policy file unchanged.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{eventually, temp_dir};
use grantforge_agent::{registry, AgentConfig};
use grantforge_engine::Instant;

/// The fixture with policy 1 (alice's `orders`) starting at `starts` and policy 2 (the analysts'
/// `orders*`) ending at `ends`.
fn timed_policies(starts: Instant, ends: Instant) -> String {
    let text = std::fs::read_to_string(common::in_crate("../../tests/fixtures/snapshots/e2e.json"))
        .unwrap();
    let empty = "\"validity\":[]";
    let periods = [
        format!("\"validity\":[{{\"from\":\"{starts}\"}}]"),
        format!("\"validity\":[{{\"until\":\"{ends}\"}}]"),
    ];
    // Policies 1 and 2 are the fixture's first two.
    let mut out = String::new();
    let mut rest = text.as_str();
    for period in periods {
        let at = rest.find(empty).unwrap();
        out.push_str(&rest[..at]);
        out.push_str(&period);
        rest = &rest[at + empty.len()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_agents_thread_shows_a_policy_when_it_starts_and_hides_one_when_it_ends() {
    let dir = temp_dir("acl-view");
    let file = dir.join("policies.json");
    let now = Instant::now();
    std::fs::write(
        &file,
        timed_policies(now.plus_seconds(2), now.plus_seconds(3)),
    )
    .unwrap();
    let settings: BTreeMap<String, String> = [(
        "grantforge.policy.file".to_string(),
        file.display().to_string(),
    )]
    .into_iter()
    .collect();
    let agent = registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap();
    let policies = agent.policies().unwrap();
    let shows = |principal: &str, name: &str| {
        agent.policies().is_some_and(|p| {
            p.acl_view()
                .rows()
                .any(|r| r.principal == principal && r.name == name)
        })
    };
    assert!(!shows("User:alice", "orders"), "not started yet");
    assert!(shows("Role:analyst", "orders"), "not ended yet");
    // The shim keeps the decoded view while its serial stays: every change of the view bumps it.
    let applied = agent.acl_view_serial();
    assert!(applied > 0, "applying a snapshot bumps the view's serial");
    eventually(
        "alice's policy is listed once it starts",
        Duration::from_secs(20),
        || shows("User:alice", "orders"),
    );
    // bumped just after the new view is swapped in
    eventually(
        "a validity period that starts bumps the serial",
        Duration::from_secs(20),
        || agent.acl_view_serial() > applied,
    );
    let started = agent.acl_view_serial();
    eventually(
        "the analysts' policy is no longer listed once it ends",
        Duration::from_secs(20),
        || !shows("Role:analyst", "orders"),
    );
    // Not `> started`: on a busy machine one tick of the agent's thread may pass both boundaries
    // (a second apart) and swap the view once.
    assert!(agent.acl_view_serial() >= started);
    assert!(
        std::sync::Arc::ptr_eq(&policies, &agent.policies().unwrap()),
        "the same snapshot: the file did not change"
    );
    assert_eq!(policies.next_acl_view_change(), None);
    let open = agent.acl_view_serial();
    registry::release(&agent);
    assert!(agent.acl_view_serial() > open, "closing bumps it");
}
