//! An upgrade: what an earlier build of the agent left in a node's cache directory is read by this
//! one. The files in `tests/fixtures/upgrade/` were written by that build's own code (its README
//! says how): the verified disk cache of policy version 1, the server's key pinned on first use
//! over HTTPS, and three refusals spooled while the server was away. This build decides from the
//! cache (its signature checked against the pin), delivers the spool once, oldest first, and
//! refuses a server whose key is not the pinned one.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use grantforge_agent::{registry, Agent, AgentConfig};
use grantforge_kafka::Operation;
use grantforge_testserver::{files, Config, Presented, RunningServer, Server, Tls, TLS_CA_FILE};

/// The build the fixtures come from, by commit.
fn previous() -> PathBuf {
    common::in_crate("../../tests/fixtures/upgrade/cecd9bc")
}
/// The refusals the previous build spooled, oldest first.
const SPOOLED: [&str; 3] = ["upgrade-0", "upgrade-1", "upgrade-2"];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A copy of the cache directory the previous build left (the agent writes into it).
fn previous_cache(name: &str) -> PathBuf {
    let cache = temp_dir(&format!("{name}-cache"));
    copy_dir(&previous().join("cache"), &cache);
    cache
}

/// An HTTPS test server holding the previous build's agent token, and its signing key when
/// `same_key` (otherwise a key of its own), with a test CA of its own.
fn https_server(name: &str, same_key: bool) -> RunningServer {
    let state = temp_dir(&format!("{name}-server"));
    let previous = previous().join("server");
    let mut kept = vec![files::TOKEN];
    if same_key {
        kept.extend([files::PRIVATE_KEY, files::PUBLIC_KEY]);
    }
    for file in kept {
        std::fs::copy(previous.join(file), state.join(file)).unwrap();
    }
    let mut config = Config::new(&state);
    config.policies_json = Some(policies(None));
    config.refresh_seconds = 1;
    config.quiet = true;
    config.tls = Some(Tls {
        dir: state.join("tls"),
        presents: Presented::Valid,
    });
    Server::start(config).unwrap()
}

/// This build on `cache`, as the previous one was set up: no configured key, so the key it
/// trusts is the one pinned in the cache.
fn upgraded_agent(server: &RunningServer, cache: &Path) -> Arc<Agent> {
    upgraded_agent_with(server, cache, FAST_AUDIT)
}

fn upgraded_agent_with(server: &RunningServer, cache: &Path, extra: &[(&str, &str)]) -> Arc<Agent> {
    let ca = server.state_dir().join("tls").join(TLS_CA_FILE);
    let mut settings = settings(server, cache, extra);
    settings.remove("grantforge.signing.key.file");
    settings.insert("grantforge.ssl.ca.file".into(), ca.display().to_string());
    registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap()
}

#[test]
fn the_previous_builds_disk_cache_decides_checked_against_its_pinned_key() {
    let server = https_server("upgrade-cache", true);
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    let cache = previous_cache("upgrade-cache");
    let agent = upgraded_agent(&server, &cache);
    assert!(
        agent.await_snapshot(PATIENCE),
        "the cache decides while the server is away: {}",
        agent.stats().last_error
    );
    assert_eq!(version(&agent), Some(1));
    assert!(may_read(&agent, "orders") && !may_read(&agent, "reports"));
    registry::release(&agent);

    // One byte of the cached snapshot changed: its signature no longer holds under the pin.
    let tampered = previous_cache("upgrade-tampered");
    let snapshot = tampered.join("snapshot.json");
    let bytes = std::fs::read_to_string(&snapshot).unwrap();
    assert!(bytes.contains("orders"));
    std::fs::write(&snapshot, bytes.replacen("orders", "ordert", 1)).unwrap();
    let agent = upgraded_agent(&server, &tampered);
    assert!(
        !agent.await_snapshot(Duration::from_secs(2)),
        "a tampered cache is no snapshot"
    );
    assert!(!may_read(&agent, "orders"));
    let moved_aside = std::fs::read_dir(&tampered)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with("rejected-"));
    assert!(moved_aside, "the tampered cache is moved aside");
    registry::release(&agent);
}

/// The previous build recorded no `snapshot.confirmed-at`: under a staleness limit its cache is of
/// unknown age, so this build refuses (fail closed) until the server confirms a snapshot.
#[test]
fn under_a_staleness_limit_the_previous_builds_cache_is_of_unknown_age_and_refused() {
    let server = https_server("upgrade-unknown-age", true);
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    let cache = previous_cache("upgrade-unknown-age");
    let agent = upgraded_agent_with(
        &server,
        &cache,
        &[("grantforge.snapshot.max.age.ms", "30000")],
    );
    assert!(
        agent.await_snapshot(PATIENCE),
        "{}",
        agent.stats().last_error
    );
    assert!(
        !may_read(&agent, "orders"),
        "refused: the cache's age is unknown"
    );
    server.clear_fault();
    eventually(
        "the server confirms it, and alice reads again",
        PATIENCE,
        || may_read(&agent, "orders"),
    );
    registry::release(&agent);
}

#[test]
fn the_previous_builds_spool_is_delivered_once_oldest_first() {
    let server = https_server("upgrade-spool", true);
    let cache = previous_cache("upgrade-spool");
    assert_eq!(spooled_batches(&cache), SPOOLED.len());
    let agent = upgraded_agent(&server, &cache);
    assert!(
        agent.await_snapshot(PATIENCE),
        "{}",
        agent.stats().last_error
    );
    // This build's own event goes after the spool: once it arrives, the spool has been sent.
    assert!(!access(&agent, "bob", "after-upgrade", Operation::Write));
    let received = || {
        resources_received(&server, |r| {
            r.starts_with("upgrade-") || r == "after-upgrade"
        })
    };
    eventually("the spool and the new event arrive", PATIENCE, || {
        received().contains(&"after-upgrade".to_string())
    });
    let expected: Vec<String> = SPOOLED
        .iter()
        .map(|r| r.to_string())
        .chain(["after-upgrade".to_string()])
        .collect();
    assert_eq!(received(), expected, "each once, oldest first");
    for resource in SPOOLED {
        assert_eq!(counted(&server, "bob", "DENIED", resource), 1);
    }
    eventually("the spool is empty", PATIENCE, || {
        spooled_batches(&cache) == 0
    });
    registry::release(&agent);
}

#[test]
fn the_previous_builds_pinned_key_refuses_a_server_with_another_key() {
    let server = https_server("upgrade-other-key", false);
    server
        .set_policies_json(policies(Some("signed-elsewhere")).as_bytes())
        .unwrap();
    let cache = previous_cache("upgrade-other-key");
    let agent = upgraded_agent(&server, &cache);
    eventually("the other key is refused, naming the pin", PATIENCE, || {
        agent
            .stats()
            .last_error
            .contains("was pinned on first use in")
    });
    assert_eq!(version(&agent), Some(1), "the cache's version stays");
    assert!(may_read(&agent, "orders") && !may_read(&agent, "signed-elsewhere"));
    registry::release(&agent);
}
