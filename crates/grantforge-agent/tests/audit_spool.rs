//! The audit spool outlives the agent: events spooled while the server is away are delivered by
//! the next agent on the same cache directory, oldest batch first, each exactly once.

mod common;

use common::*;
use grantforge_agent::registry;
use grantforge_kafka::Operation;

/// The server's events for `resource`, in the order it received them.
fn resources_received(server: &grantforge_testserver::RunningServer) -> Vec<String> {
    server
        .events()
        .iter()
        .filter_map(|e| e["resource"].as_str().map(str::to_string))
        .filter(|r| r.starts_with("round-") || r == "after-restart")
        .collect()
}

#[test]
fn the_audit_spool_survives_a_restart_and_is_delivered_oldest_first() {
    let server = server("spool-restart");
    let cache = temp_dir("spool-restart-cache");
    let first = agent(&server, &cache, FAST_AUDIT);
    assert!(first.await_snapshot(PATIENCE));
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    let spooled = || {
        std::fs::read_dir(cache.join("audit-spool"))
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                    .count()
            })
            .unwrap_or(0)
    };
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
        resources_received(&server).is_empty(),
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
        resources_received(&server).contains(&"after-restart".to_string())
    });
    let expected: Vec<String> = (0..5)
        .map(|round| format!("round-{round}"))
        .chain(["after-restart".to_string()])
        .collect();
    assert_eq!(
        resources_received(&server),
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
    // sent twice: its request log can. Five spooled batches and the new one, each sent once.
    let deliveries = requests_after(&server, cleared)
        .iter()
        .filter(|r| r.endpoint.as_deref() == Some("access-events") && r.status == Some(200))
        .count();
    assert_eq!(deliveries, 6, "each spooled batch is sent once");
    eventually("the delivered batches leave the spool", PATIENCE, || {
        spooled() == 0
    });
    registry::release(&second);
}
