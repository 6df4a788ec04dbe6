//! A kept decision does not outlive the validity period that granted it: the grant ends on time,
//! whatever the decision cache's TTL.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{access, temp_dir};
use grantforge_agent::{registry, AgentConfig};
use grantforge_engine::Instant;
use grantforge_kafka::Operation;

#[test]
fn a_cached_grant_ends_with_the_validity_period_that_granted_it() {
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/snapshots/e2e.json"
    ))
    .unwrap();
    // Policy 1, the fixture's first (alice works with orders), ends 1.5 s from now.
    let ends = Instant::now().plus_millis(1500);
    let policies = fixture.replacen(
        "\"validity\":[]",
        &format!("\"validity\":[{{\"until\":\"{ends}\"}}]"),
        1,
    );
    let file = temp_dir("decision-validity").join("policies.json");
    std::fs::write(&file, policies).unwrap();
    let settings: BTreeMap<String, String> = [
        ("grantforge.policy.file", file.display().to_string()),
        ("grantforge.decision.cache.ttl.ms", "60000".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let agent = registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap();
    assert!(access(&agent, "alice", "orders", Operation::Write));
    assert!(access(&agent, "alice", "orders", Operation::Write));
    assert!(
        agent.stats().cache_hits > 0,
        "the grant is answered from the cache"
    );
    let left = ends.unix_millis() - Instant::now().unix_millis();
    std::thread::sleep(Duration::from_millis(u64::try_from(left).unwrap_or(0) + 20));
    assert!(
        !access(&agent, "alice", "orders", Operation::Write),
        "refused from the end of the period on, not a TTL later"
    );
    registry::release(&agent);
}
