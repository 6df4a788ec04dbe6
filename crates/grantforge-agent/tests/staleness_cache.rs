//! The staleness contract across a restart (issue 48): a node started from its disk cache while
//! the GrantForge server is away counts the cached snapshot's age from the server's last
//! confirmation, as the cache records it, not from the start: a node restarted during a long
//! outage does not serve an arbitrarily old cache.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use grantforge_agent::{registry, Agent};
use grantforge_kafka::Operation;

const LIMITED: &[(&str, &str)] = &[
    ("grantforge.snapshot.max.age.ms", "3000"),
    ("super.users", "User:admin"),
];

/// The cache directory of an agent whose server confirmed its snapshot, with the server stopped.
fn cache_confirmed_then_server_stopped(name: &str) -> (std::path::PathBuf, Vec<(String, String)>) {
    let server = server(name);
    let cache = temp_dir(&format!("{name}-cache"));
    let first = agent(&server, &cache, &[]);
    assert!(first.await_snapshot(PATIENCE));
    let record = cache.join("snapshot.confirmed-at");
    eventually("a round records its confirmation", PATIENCE, || {
        record.exists()
    });
    registry::release(&first);
    // The settings name the stopped server: every round of the next agent fails.
    let settings = settings(&server, &cache, LIMITED).into_iter().collect();
    server.stop();
    (cache, settings)
}

fn restarted(settings: &[(String, String)]) -> std::sync::Arc<Agent> {
    let settings = settings.iter().cloned().collect();
    registry::open(grantforge_agent::AgentConfig::from_settings(&settings).unwrap()).unwrap()
}

#[test]
fn a_cache_confirmed_lately_serves_until_the_limit_counted_from_that_confirmation() {
    let (_cache, settings) = cache_confirmed_then_server_stopped("age-recent");
    let agent = restarted(&settings);
    assert!(
        agent.await_snapshot(PATIENCE),
        "the verified cached snapshot"
    );
    assert!(may_read(&agent, "orders"), "younger than the limit: served");
    eventually(
        "past the limit the cached snapshot refuses",
        PATIENCE,
        || agent.stats().snapshot_state == 2,
    );
    assert!(!may_read(&agent, "orders"));
    assert!(access(&agent, "admin", "orders", Operation::Read));
    registry::release(&agent);
}

#[test]
fn a_cache_last_confirmed_long_ago_or_at_no_recorded_time_refuses_from_the_first_request() {
    let (cache, settings) = cache_confirmed_then_server_stopped("age-old");
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let millis = an_hour_ago.duration_since(UNIX_EPOCH).unwrap().as_millis();
    std::fs::write(cache.join("snapshot.confirmed-at"), millis.to_string()).unwrap();
    let agent = restarted(&settings);
    assert!(agent.await_snapshot(PATIENCE));
    assert!(
        !may_read(&agent, "orders"),
        "an hour old: refused before any round"
    );
    assert!(access(&agent, "admin", "orders", Operation::Read));
    assert_eq!(agent.stats().snapshot_state, 2);
    assert_eq!(agent.stats().refused_without_snapshot, 1);
    registry::release(&agent);

    std::fs::remove_file(cache.join("snapshot.confirmed-at")).unwrap();
    let agent = restarted(&settings);
    assert!(agent.await_snapshot(PATIENCE));
    assert!(!may_read(&agent, "orders"), "of unknown age: refused");
    registry::release(&agent);

    let mut unlimited = settings.clone();
    unlimited.retain(|(k, _)| k != "grantforge.snapshot.max.age.ms");
    let agent = restarted(&unlimited);
    assert!(agent.await_snapshot(PATIENCE));
    assert!(
        may_read(&agent, "orders"),
        "without the limit the cache serves, however old"
    );
    registry::release(&agent);
}
