//! Revocations that bite (issue 48): GrantForge changes role holders, group members,
//! `serviceEnabled` and a service's name without moving `policyVersion`, so the agent revalidates
//! the snapshot in force on a schedule of its own, against the project's test server over
//! loopback HTTP.

mod common;

use std::time::{Duration, Instant};

use common::*;
use grantforge_agent::registry;
use grantforge_testserver::{FaultMode, RunningServer};
use serde_json::Value;

/// The revalidation interval of these tests.
const REVALIDATE_MS: u64 = 2000;

fn revalidating() -> [(&'static str, String); 1] {
    [(
        "grantforge.revalidate.interval.ms",
        REVALIDATE_MS.to_string(),
    )]
}

/// The fixture's policies with `change` applied to its JSON.
fn fixture_with(change: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut json: Value = serde_json::from_str(&policies(None)).unwrap();
    change(&mut json);
    json.to_string().into_bytes()
}

/// Alice reads `orders-eu` only as a holder of the role `analyst` (policy 2).
fn alice_reads_as_an_analyst(agent: &grantforge_agent::Agent) -> bool {
    may_read(agent, "orders-eu")
}

/// Ends alice's role `analyst` at the server's current policy version, as GrantForge's scheduler
/// does when an access request's grant expires.
fn end_alices_role(server: &RunningServer) {
    let version = server.policy_version();
    let json = fixture_with(|p| p["roles"]["analyst"] = serde_json::json!([]));
    assert_eq!(
        server.set_policies_at_same_version_json(&json).unwrap(),
        version,
        "the version stays"
    );
}

#[test]
fn a_role_ended_at_the_same_policy_version_is_revoked_within_one_revalidation_interval() {
    let server = server("role-ended");
    let extra = revalidating();
    let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let agent = agent(&server, &temp_dir("role-ended-cache"), &extra);
    assert!(agent.await_snapshot(PATIENCE));
    assert!(alice_reads_as_an_analyst(&agent));
    let applied = version(&agent);
    let before = last_seq(&server);
    eventually(
        "a revalidation while nothing changed is a conditional request answered 304",
        PATIENCE,
        || {
            requests_after(&server, before).iter().any(|r| {
                r.endpoint.as_deref() == Some("policies")
                    && r.status == Some(304)
                    && r.headers.contains_key("if-none-match")
            })
        },
    );

    end_alices_role(&server);
    let ended = Instant::now();
    eventually("the ended role is revoked", PATIENCE, || {
        !alice_reads_as_an_analyst(&agent)
    });
    // One revalidation interval, plus the heartbeat round (1 s) that notices it is due, plus
    // room for a slow machine.
    let bound = Duration::from_millis(REVALIDATE_MS) + Duration::from_secs(1 + 2);
    assert!(
        ended.elapsed() <= bound,
        "revoked after {:?}, more than {bound:?}",
        ended.elapsed()
    );
    assert_eq!(version(&agent), applied, "at the same policy version");
    assert!(may_read(&agent, "orders"), "alice's own policy stays");
    assert_eq!(agent.stats().last_error, "");
    let age = agent.stats().memberships_age_seconds;
    assert!(
        (0..=(REVALIDATE_MS / 1000 + 1) as i64).contains(&age),
        "MembershipsAgeSeconds {age}"
    );
    eventually(
        "the heartbeat says how old the memberships in force are",
        PATIENCE,
        || {
            server.heartbeats().iter().any(|beat| {
                beat.body["health"]["membershipsAgeSeconds"]
                    .as_u64()
                    .is_some_and(|age| age <= REVALIDATE_MS / 1000 + 1)
            })
        },
    );
    registry::release(&agent);
}

#[test]
fn a_replayed_body_from_before_the_revocation_is_refused() {
    let server = server("replay");
    let extra = revalidating();
    let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let agent = agent(&server, &temp_dir("replay-cache"), &extra);
    assert!(agent.await_snapshot(PATIENCE));
    end_alices_role(&server);
    eventually("the ended role is revoked", PATIENCE, || {
        !alice_reads_as_an_analyst(&agent)
    });
    let before = last_seq(&server);
    server.set_fault(fault(r#"{"mode":"replay"}"#)).unwrap();
    eventually("the older body is served again", PATIENCE, || {
        served(&server, before, "policies", FaultMode::Replay, 200)
    });
    eventually("the agent refused the replay", PATIENCE, || {
        agent.stats().last_error.contains("a replayed older body")
    });
    assert!(
        !alice_reads_as_an_analyst(&agent),
        "the revoked role stays revoked"
    );
    server.clear_fault();
    eventually(
        "the refusal is over once the server is honest",
        PATIENCE,
        || agent.stats().last_error.is_empty(),
    );
    assert!(!alice_reads_as_an_analyst(&agent));
    registry::release(&agent);
}

#[test]
fn a_renamed_service_is_refused_with_an_error_naming_both_names_and_the_fix() {
    let server = server("renamed");
    let extra = revalidating();
    let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let agent = agent(&server, &temp_dir("renamed-cache"), &extra);
    assert!(agent.await_snapshot(PATIENCE));
    let json = fixture_with(|p| {
        p["service"] = "kafka-prod".into();
        p["roles"]["analyst"] = serde_json::json!([]);
    });
    server.set_policies_at_same_version_json(&json).unwrap();
    eventually("the rename is reported", PATIENCE, || {
        let error = agent.stats().last_error;
        error.contains("`kafka-prod`")
            && error.contains("`kafka-demo`")
            && error.contains("grantforge.service.renamed.to=kafka-prod")
    });
    assert!(
        alice_reads_as_an_analyst(&agent),
        "the policies of the old name stay in force until the operator says"
    );
    registry::release(&agent);
}

#[test]
fn a_rename_the_operator_named_is_followed() {
    let server = server("rename-followed");
    let mut extra: Vec<(&str, &str)> = vec![("grantforge.service.renamed.to", "kafka-prod")];
    let interval = REVALIDATE_MS.to_string();
    extra.push(("grantforge.revalidate.interval.ms", &interval));
    let agent = agent(&server, &temp_dir("rename-followed-cache"), &extra);
    assert!(agent.await_snapshot(PATIENCE));
    let json = fixture_with(|p| {
        p["service"] = "kafka-prod".into();
        p["roles"]["analyst"] = serde_json::json!([]);
    });
    server.set_policies_at_same_version_json(&json).unwrap();
    eventually(
        "the renamed service's snapshot is in force",
        PATIENCE,
        || !alice_reads_as_an_analyst(&agent),
    );
    assert_eq!(agent.policies().unwrap().service, "kafka-prod");
    assert_eq!(agent.stats().last_error, "");
    registry::release(&agent);
}

#[test]
fn a_restart_still_refuses_a_replay_of_a_body_replaced_before() {
    let server = server("replay-restart");
    let cache = temp_dir("replay-restart-cache");
    let extra = revalidating();
    let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let first = agent(&server, &cache, &extra);
    assert!(first.await_snapshot(PATIENCE));
    end_alices_role(&server);
    eventually("the ended role is revoked", PATIENCE, || {
        !alice_reads_as_an_analyst(&first)
    });
    registry::release(&first);

    // The restarted agent starts from the cache (the revoked body) and revalidates at once: the
    // server replays the body from before the revocation.
    server.set_fault(fault(r#"{"mode":"replay"}"#)).unwrap();
    let second = agent(&server, &cache, &extra);
    assert!(!alice_reads_as_an_analyst(&second), "the cache is revoked");
    eventually("the restarted agent refused the replay", PATIENCE, || {
        second.stats().last_error.contains("a replayed older body")
    });
    assert!(!alice_reads_as_an_analyst(&second));
    registry::release(&second);
}

#[test]
fn a_refused_body_is_downloaded_again_once_per_revalidation_interval_not_every_round() {
    let server = server("refused-cadence");
    let extra: Vec<(&str, &str)> = vec![("grantforge.revalidate.interval.ms", "3000")];
    let agent = agent(&server, &temp_dir("refused-cadence-cache"), &extra);
    assert!(agent.await_snapshot(PATIENCE));
    let json = fixture_with(|p| p["service"] = "kafka-prod".into());
    server.set_policies_at_same_version_json(&json).unwrap();
    eventually("the rename is refused", PATIENCE, || {
        agent.stats().last_error.contains("`kafka-prod`")
    });
    let before = last_seq(&server);
    std::thread::sleep(Duration::from_secs(9));
    let requests = requests_after(&server, before);
    let downloads = requests
        .iter()
        .filter(|r| r.endpoint.as_deref() == Some("policies") && r.status == Some(200))
        .count();
    let heartbeats = requests
        .iter()
        .filter(|r| r.endpoint.as_deref() == Some("heartbeat"))
        .count();
    // Rounds of 1 s: about 9 heartbeats, and a download every 3 s (about 3), not one per round.
    assert!(heartbeats >= 6, "{heartbeats} heartbeats");
    assert!(
        (1..=5).contains(&downloads),
        "{downloads} downloads of the refused body in 9 s"
    );
    assert!(
        agent.stats().last_error.contains("`kafka-prod`"),
        "the refusal stands between revalidations"
    );
    registry::release(&agent);
}
