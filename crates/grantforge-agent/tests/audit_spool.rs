//! The audit spool outlives the agent: events spooled while the server is away are delivered by
//! the next agent on the same cache directory, oldest batch first, each exactly once; and a long
//! outage's spool drains without holding up the policies.

mod common;

use std::time::{Duration, Instant};

use common::*;
use grantforge_agent::registry;
use grantforge_kafka::Operation;

/// The server's events of the test's topics, in the order it received them.
fn received(server: &grantforge_testserver::RunningServer) -> Vec<String> {
    resources_received(server, |r| r.starts_with("round-") || r == "after-restart")
}

#[test]
fn the_audit_spool_survives_a_restart_and_is_delivered_oldest_first() {
    let server = server("spool-restart");
    let cache = temp_dir("spool-restart-cache");
    let first = agent(&server, &cache, FAST_AUDIT);
    assert!(first.await_snapshot(PATIENCE));
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    let spooled = || spooled_batches(&cache);
    // Five rounds, one refusal each on its own topic, each waiting until it is a batch of its own.
    for round in 0..5 {
        let batches = spooled();
        assert!(!access(
            &first,
            "bob",
            &format!("round-{round}"),
            Operation::Write
        ));
        eventually(
            &format!("round {round}'s event waits in the spool"),
            PATIENCE,
            || spooled() > batches,
        );
    }
    registry::release(&first);
    assert!(
        received(&server).is_empty(),
        "nothing reached the server while it was away"
    );
    let batches = spooled();
    assert!(
        batches >= 5,
        "the spool outlives the agent: {batches} batches"
    );

    let cleared = last_seq(&server);
    server.clear_fault();
    let second = agent(&server, &cache, FAST_AUDIT);
    assert!(second.await_snapshot(PATIENCE));
    // An event of the new agent: it is shipped after the spool, so once it arrives the spool is
    // delivered, and anything delivered twice would be in the log already.
    assert!(!access(&second, "bob", "after-restart", Operation::Write));
    eventually("the spool and the new event arrive", PATIENCE, || {
        received(&server).contains(&"after-restart".to_string())
    });
    let expected: Vec<String> = (0..5)
        .map(|round| format!("round-{round}"))
        .chain(["after-restart".to_string()])
        .collect();
    assert_eq!(
        received(&server),
        expected,
        "the spooled events arrive oldest first, each once, before the new agent's own"
    );
    for round in 0..5 {
        assert_eq!(
            counted(&server, "bob", "DENIED", &format!("round-{round}")),
            1
        );
    }
    // The server drops a resent event id as a duplicate, so its event log alone cannot show a batch
    // sent twice: its request log can. The five spooled batches, merged into one, and the new event.
    let deliveries = requests_after(&server, cleared)
        .iter()
        .filter(|r| r.endpoint.as_deref() == Some("access-events") && r.status == Some(200))
        .count();
    assert_eq!(
        deliveries, 2,
        "the spooled batches are sent once, merged, then the new event"
    );
    eventually("the delivered batches leave the spool", PATIENCE, || {
        spooled() == 0
    });
    registry::release(&second);
}

/// Writes `files` spooled batches of one refusal each, as a long outage leaves them.
fn spool_of_an_outage(cache: &std::path::Path, files: usize) {
    let dir = cache.join("audit-spool");
    std::fs::create_dir_all(&dir).unwrap();
    let now = grantforge_engine::Instant::now().to_string();
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    for i in 0..files {
        let event = serde_json::json!([{
            "eventId": format!("outage-{i}"), "occurredAt": now, "user": "bob",
            "clientIp": "10.0.0.1", "resource": format!("outage-{i}"), "resourceType": "topic",
            "accessType": "write", "action": "PRODUCE", "outcome": "DENIED", "policyId": null,
            "policyVersion": 1, "enforcer": "GRANTFORGE", "request": "PRODUCE v9", "count": 1,
            "lastOccurredAt": now,
        }]);
        let name = format!("{millis:019}-{:06}-1.json", i % 1_000_000);
        std::fs::write(dir.join(name), event.to_string()).unwrap();
    }
}

#[test]
fn a_long_outages_spool_drains_without_holding_up_a_revocation() {
    const FILES: usize = 20_000;
    let server = server("spool-drain");
    server
        .set_policies_json(policies(Some("reports")).as_bytes())
        .unwrap();
    let cache = temp_dir("spool-drain-cache");
    spool_of_an_outage(&cache, FILES);
    let started = Instant::now();
    let agent = agent(
        &server,
        &cache,
        &[
            ("grantforge.download.jitter.ms", "0"),
            ("grantforge.audit.flush.interval.ms", "300"),
        ],
    );
    assert!(agent.await_snapshot(PATIENCE));
    eventually("alice may read reports", PATIENCE, || {
        may_read(&agent, "reports")
    });
    let outage_events = || {
        server
            .events()
            .iter()
            .filter(|e| {
                e["resource"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("outage-"))
            })
            .count()
    };
    assert!(
        outage_events() < FILES,
        "the revocation must come while the spool is still being resent"
    );
    // The revocation: the refresh interval is 1 s (and the server's refreshSeconds 1).
    server.set_policies_json(policies(None).as_bytes()).unwrap();
    let revoked = Instant::now();
    eventually("the revocation is in force", PATIENCE, || {
        !may_read(&agent, "reports")
    });
    let in_force = revoked.elapsed();
    println!("revocation in force after {in_force:?} while the spool drained");
    assert!(
        in_force <= Duration::from_secs(2),
        "within two refresh intervals: {in_force:?}"
    );
    eventually("the spool drains", Duration::from_secs(300), || {
        outage_events() == FILES
    });
    println!(
        "{FILES} spooled batches of one event delivered {:?} after the start",
        started.elapsed()
    );
    eventually("the spool is empty", PATIENCE, || {
        std::fs::read_dir(cache.join("audit-spool"))
            .map(|d| d.count() == 0)
            .unwrap_or(true)
    });
    registry::release(&agent);
}
