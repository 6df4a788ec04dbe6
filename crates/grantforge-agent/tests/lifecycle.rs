//! An agent's life: one per policy source and JVM however its path is written, refusals while
//! no snapshot is in force, and what a closed agent does.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{access, counted, eventually, fault, server, temp_dir, FAST_AUDIT, PATIENCE};

use grantforge_agent::{registry, AgentConfig};
use grantforge_kafka::Operation;

/// Server mode with a cache directory written as `cache_dir`; nothing is asked of the network
/// before the agent's own thread runs (and no server answers at that address).
fn server_config(home: &std::path::Path, cache_dir: &str) -> AgentConfig {
    let token = home.join("token");
    std::fs::write(&token, "t").unwrap();
    let settings: BTreeMap<String, String> = [
        ("grantforge.server.url", "https://127.0.0.1:9".to_string()),
        ("grantforge.token.file", token.display().to_string()),
        ("grantforge.cache.dir", cache_dir.to_string()),
        ("grantforge.instance", "registry-test".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    AgentConfig::from_settings(&settings).unwrap()
}

#[test]
fn a_cache_dir_created_on_first_boot_through_a_link_or_dots_gives_one_agent() {
    let home = temp_dir("first-boot");
    let real = home.join("data");
    std::fs::create_dir_all(&real).unwrap();
    let link = home.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    // The cache directory does not exist yet: the first authorizer's agent creates it.
    let through_link = link.join("cache").display().to_string();
    let through_dots = home
        .join("data")
        .join("..")
        .join("link")
        .join("cache")
        .display()
        .to_string();
    let first = registry::open(server_config(&home, &through_link)).unwrap();
    let second = registry::open(server_config(&home, &through_link)).unwrap();
    assert!(
        Arc::ptr_eq(&first, &second),
        "the broker's and the controller's authorizer share one agent"
    );
    let same_dir_other_words = registry::open(server_config(&home, &through_dots));
    // Another spelling of the same directory with other settings text is the same agent too:
    // its configuration differs only in how the path is written, which the registry refuses
    // to take as the same configuration.
    assert!(
        same_dir_other_words
            .as_ref()
            .err()
            .is_some_and(|e| e.key() == Some("grantforge.cache.dir")),
        "one directory, two configurations: refused, naming the key"
    );
    registry::release(&second);
    registry::release(&first);
}

#[test]
fn refusals_while_no_snapshot_is_in_force_are_counted_and_audited() {
    let home = temp_dir("no-snapshot");
    let agent = registry::open(server_config(
        &home,
        &home.join("cache").display().to_string(),
    ))
    .unwrap();
    let refused = [
        access(&agent, "alice", "orders", Operation::Write),
        access(&agent, "alice", "payments", Operation::Write),
    ];
    assert_eq!(refused, [false, false], "no snapshot: refused");
    let stats = agent.stats();
    assert_eq!(
        (
            stats.decisions_denied,
            stats.decisions_allowed,
            stats.snapshot_version
        ),
        (2, 0, -1)
    );
    assert_eq!(stats.audit_queued, 2, "each refusal waits to be reported");
    registry::release(&agent);
}

#[test]
fn close_waits_for_the_last_audit_delivery_only_until_its_deadline_and_loses_nothing() {
    let server = server("close-deadline");
    let agent = common::agent(&server, &temp_dir("close-deadline-cache"), FAST_AUDIT);
    assert!(agent.await_snapshot(PATIENCE));
    // The server takes three close deadlines to answer a delivery.
    let delay = grantforge_agent::CLOSE_DEADLINE * 3;
    server
        .set_fault(fault(&format!(
            r#"{{"mode": "slow", "endpoints": ["access-events"], "delayMs": {}}}"#,
            delay.as_millis()
        )))
        .unwrap();
    assert!(!access(&agent, "bob", "orders", Operation::Write));
    // Whether the agent's thread is already delivering the refusal or delivers it as its last
    // delivery on close, the server holds it for three deadlines.
    let closing = std::time::Instant::now();
    registry::release(&agent);
    let waited = closing.elapsed();
    assert_eq!(
        counted(&server, "bob", "DENIED", "orders"),
        0,
        "close() returned before the slow server took the refusal"
    );
    assert!(
        waited < delay,
        "close() waited {waited:?}, as long as the server"
    );
    eventually("the refusal is delivered after all", delay * 2, || {
        counted(&server, "bob", "DENIED", "orders") == 1
    });
}

/// Offline mode tells the operator what keeps the policies from being current, as server mode does:
/// a bad policy file shows in `last-refresh-error` (while the last good version stays in force) until
/// a good one is applied.
#[test]
fn a_bad_policy_file_shows_in_the_last_refresh_error_until_a_good_one_is_applied() {
    let home = temp_dir("bad-policy-file");
    let file = home.join("policies.json");
    let good = std::fs::read_to_string(common::in_crate("../../tests/fixtures/snapshots/e2e.json"))
        .unwrap();
    std::fs::write(&file, &good).unwrap();
    let settings: BTreeMap<String, String> = [
        ("grantforge.policy.file", file.display().to_string()),
        ("grantforge.policy.file.poll.interval.ms", "20".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let agent = registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap();
    assert_eq!(agent.stats().last_error, "");

    std::fs::write(&file, "{not json").unwrap();
    eventually("the bad file is reported", PATIENCE, || {
        !agent.stats().last_error.is_empty()
    });
    let error = agent.stats().last_error;
    assert!(
        error.contains("grantforge.policy.file") && error.contains("policies.json"),
        "{error}"
    );
    assert_eq!(agent.policies().map(|p| p.policy_version), Some(1));

    std::fs::write(
        &file,
        good.replacen("\"policyVersion\":1", "\"policyVersion\":2", 1),
    )
    .unwrap();
    eventually("the good file is applied", PATIENCE, || {
        agent.policies().map(|p| p.policy_version) == Some(2)
    });
    assert_eq!(agent.stats().last_error, "");
    registry::release(&agent);
}
