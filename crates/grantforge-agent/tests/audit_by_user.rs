//! The audit's account per user (metric `audit-by-user`) adds up with what the server received:
//! for each user, the server's event counts plus the dropped equal the accesses the agent counted,
//! also when the fold tables have no room and accesses are dropped.

mod common;

use std::collections::BTreeMap;

use common::*;
use grantforge_agent::registry;
use grantforge_kafka::Operation;

/// The agent's account: user → (accesses, dropped).
fn account(agent: &grantforge_agent::Agent) -> BTreeMap<String, (u64, u64)> {
    agent
        .stats()
        .audit_by_user
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 3, "user, accesses, dropped: {line:?}");
            (
                fields[0].to_string(),
                (fields[1].parse().unwrap(), fields[2].parse().unwrap()),
            )
        })
        .collect()
}

/// The server's event counts per user.
fn received(server: &grantforge_testserver::RunningServer) -> BTreeMap<String, u64> {
    let mut users = BTreeMap::new();
    for event in server.events() {
        *users
            .entry(event["user"].as_str().unwrap().to_string())
            .or_default() += event["count"].as_u64().unwrap_or(1);
    }
    users
}

#[test]
fn per_user_the_server_received_what_the_agent_counted_less_the_dropped() {
    let server = server("by-user");
    let cache = temp_dir("by-user-cache");
    // Two groups of room: one of a principal's own and one overflow group per outcome, so most of
    // these accesses find no room and are dropped.
    let agent = agent(
        &server,
        &cache,
        &[FAST_AUDIT, &[("grantforge.audit.queue.capacity", "2")]].concat(),
    );
    assert!(agent.await_snapshot(PATIENCE));
    for i in 0..30 {
        access(&agent, "bob", &format!("t-{}", i % 3), Operation::Write);
        access(&agent, "carol", &format!("t-{}", i % 5), Operation::Write);
    }
    for _ in 0..7 {
        access(&agent, "alice", "orders", Operation::Write);
    }
    let audited = agent.stats().audit_accesses;
    eventually(
        "every user's account adds up with the server's",
        PATIENCE,
        || {
            let account = account(&agent);
            let received = received(&server);
            let total: u64 = account.values().map(|(accesses, _)| accesses).sum();
            total == audited
                && account.iter().all(|(user, (accesses, dropped))| {
                    received.get(user).copied().unwrap_or(0) + dropped == *accesses
                })
        },
    );
    let account = account(&agent);
    assert_eq!(
        account.keys().collect::<Vec<_>>(),
        ["alice", "bob", "carol"]
    );
    assert_eq!(account["bob"].0, 30);
    assert_eq!(account["carol"].0, 30);
    assert_eq!(account["alice"].0, 7);
    assert!(
        account.values().any(|(_, dropped)| *dropped > 0),
        "the room of two groups dropped some: {account:?}"
    );
    assert_eq!(
        agent.stats().audit_dropped,
        account.values().map(|(_, dropped)| dropped).sum::<u64>(),
        "the dropped in all are the users' dropped"
    );
    registry::release(&agent);
}
