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
    let ends = Instant::now().plus_millis(1500);
    let agent = alice_with_a_period("until", ends);
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

/// Asked without a pause across the end of the period, the cache never answers with the grant
/// once the end has come: a kept decision expires on the coarse clock of the request path, which
/// lags the real time by up to a tick, so it must expire that much early, and a decision made in
/// the last moments before the end (by the engine's precise clock) must not be kept past it.
#[test]
fn no_access_is_allowed_from_the_instant_the_period_ends() {
    let (wrong, asked) = answers_across_a_boundary("until", false);
    assert_eq!(
        wrong, 0,
        "{wrong} of {asked} accesses asked at or after the end of the period were allowed"
    );
}

/// The same across the start of a period: no refusal is kept past it.
#[test]
fn no_access_is_refused_from_the_instant_the_period_starts() {
    let (wrong, asked) = answers_across_a_boundary("from", true);
    assert_eq!(
        wrong, 0,
        "{wrong} of {asked} accesses asked at or after the start of the period were refused"
    );
}

/// alice's write to orders asked in a loop from before to 30 ms after a boundary of the period of
/// her policy (`from` or `until`, 1.5 s ahead): how many answers asked at or after it were not
/// `allowed_after`, of how many.
fn answers_across_a_boundary(bound: &str, allowed_after: bool) -> (usize, usize) {
    let boundary = Instant::from_unix_millis(Instant::now().unix_millis() + 1500);
    let agent = alice_with_a_period(bound, boundary);
    assert_eq!(
        access(&agent, "alice", "orders", Operation::Write),
        !allowed_after
    );
    let (mut wrong, mut asked_after) = (0, 0);
    loop {
        let asked = Instant::now();
        let allowed = access(&agent, "alice", "orders", Operation::Write);
        if asked >= boundary {
            asked_after += 1;
            wrong += usize::from(allowed != allowed_after);
        }
        if asked.unix_millis() > boundary.unix_millis() + 30 {
            break;
        }
    }
    registry::release(&agent);
    assert!(asked_after > 0);
    (wrong, asked_after)
}

/// An offline agent on the e2e fixture whose first policy (alice works with orders) has one
/// validity period, bounded by `bound` (`from` or `until`) at `at`; decisions kept for a minute.
fn alice_with_a_period(bound: &str, at: Instant) -> std::sync::Arc<grantforge_agent::Agent> {
    let fixture =
        std::fs::read_to_string(common::in_crate("../../tests/fixtures/snapshots/e2e.json"))
            .unwrap();
    let policies = fixture.replacen(
        "\"validity\":[]",
        &format!("\"validity\":[{{\"{bound}\":\"{at}\"}}]"),
        1,
    );
    let file = temp_dir(&format!("decision-validity-{bound}")).join("policies.json");
    std::fs::write(&file, policies).unwrap();
    let settings: BTreeMap<String, String> = [
        ("grantforge.policy.file", file.display().to_string()),
        ("grantforge.decision.cache.ttl.ms", "60000".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap()
}
