//! Server mode against the project's GrantForge test server over loopback HTTP: what is verified
//! is applied, what is not is never applied, and the disk cache carries a restart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use grantforge_agent::{registry, Agent, AgentConfig};
use grantforge_kafka::{Action, KafkaContext, Operation, Principal, RequestContext, ResourceType};
use grantforge_testserver::{Config, Fault, RunningServer, Server};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gf-sync-{name}-{}-{:?}", std::process::id(), Instant::now()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn policies(marker: Option<&str>) -> String {
    let file = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/server/policies.json")).unwrap();
    let Some(topic) = marker else { return file };
    let policy = format!(
        r#"{{"id":"900","name":"marker","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"topic":{{"values":["{topic}"],"excludes":false,"recursive":false}}}},"allow":[{{"users":["alice"],"groups":[],"roles":[],"accessTypes":["read"],"conditions":[]}}],"allowExceptions":[],"deny":[],"denyExceptions":[],"validity":[]}}}},"#
    );
    file.replacen("\"policies\": [", &format!("\"policies\": [{policy}"), 1)
}

fn server(name: &str) -> RunningServer {
    let mut config = Config::new(temp_dir(&format!("{name}-server")));
    config.policies_json = Some(policies(None));
    config.refresh_seconds = 1;
    config.quiet = true;
    Server::start(config).unwrap()
}

fn agent(server: &RunningServer, cache: &Path, extra: &[(&str, &str)]) -> Arc<Agent> {
    let mut settings: BTreeMap<String, String> = [
        ("grantforge.server.url", server.base_url().to_string()),
        ("grantforge.token.file", server.state_dir().join("token").display().to_string()),
        ("grantforge.cache.dir", cache.display().to_string()),
        ("grantforge.instance", "test-agent".to_string()),
        ("grantforge.refresh.interval.ms", "1000".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    settings.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap()
}

fn may_read(agent: &Agent, topic: &str) -> bool {
    let context = RequestContext {
        principal: Principal { principal_type: "User".into(), name: "alice".into() },
        conditions: KafkaContext { client_address: Some("127.0.0.1".parse().unwrap()), ..Default::default() },
        request_type: 1,
        request_version: 12,
    };
    let action = Action { operation: Some(Operation::Read), resource_type: Some(ResourceType::Topic), literal: true, name: topic, log_if_allowed: false, log_if_denied: false };
    let mut allowed = [false];
    agent.authorize(&context, &[action], &mut allowed);
    allowed[0]
}

fn eventually(what: &str, timeout: Duration, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "not within {timeout:?}: {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn fault(json: &str) -> Fault {
    serde_json::from_str(json).unwrap()
}

#[test]
fn applies_verified_snapshots_and_follows_policy_changes() {
    let server = server("changes");
    let cache = temp_dir("changes-cache");
    let agent = agent(&server, &cache, &[]);
    assert!(agent.await_snapshot(Duration::from_secs(10)));
    assert!(may_read(&agent, "orders") && !may_read(&agent, "reports"));
    server.set_policies_json(policies(Some("reports")).as_bytes()).unwrap();
    eventually("the change reaches the agent", Duration::from_secs(5), || may_read(&agent, "reports"));
    assert!(cache.join("snapshot.json").exists() && cache.join("signing-key.pin").exists());
    registry::release(&agent);
}

#[test]
fn never_applies_what_it_cannot_verify_or_use() {
    let server = server("faults");
    let agent = agent(&server, &temp_dir("faults-cache"), &[]);
    assert!(agent.await_snapshot(Duration::from_secs(10)));
    let version = |a: &Agent| a.policies().map(|p| p.policy_version);
    for (i, mode) in ["wrong-signature", "other-key", "old-version", "other-service", "truncated"].iter().enumerate() {
        let applied = version(&agent);
        server.set_fault(fault(&format!(r#"{{"mode":"{mode}"}}"#))).unwrap();
        server.set_policies_json(policies(Some(&format!("t{i}"))).as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        assert_eq!(version(&agent), applied, "{mode}: the applied snapshot stays in force");
        assert!(!may_read(&agent, &format!("t{i}")), "{mode}");
        server.clear_fault();
        eventually(mode, Duration::from_secs(10), || may_read(&agent, &format!("t{i}")));
    }
    registry::release(&agent);
}

#[test]
fn a_snapshot_of_another_service_type_refuses_everything() {
    let server = server("type");
    let agent = agent(&server, &temp_dir("type-cache"), &[]);
    assert!(agent.await_snapshot(Duration::from_secs(10)));
    assert!(may_read(&agent, "orders"));
    server.set_fault(fault(r#"{"mode":"other-type"}"#)).unwrap();
    server.set_policies_json(policies(Some("x")).as_bytes()).unwrap();
    eventually("everything refused", Duration::from_secs(5), || !may_read(&agent, "orders"));
    server.clear_fault();
    eventually("a kafka snapshot decides again", Duration::from_secs(10), || may_read(&agent, "x"));
    registry::release(&agent);
}

#[test]
fn starts_from_the_verified_disk_cache_when_the_server_is_away_and_refuses_a_tampered_one() {
    let server = server("cache");
    let cache = temp_dir("cache-cache");
    let first = agent(&server, &cache, &[]);
    assert!(first.await_snapshot(Duration::from_secs(10)));
    registry::release(&first);
    let question: Vec<String> = ["--cache-dir", cache.to_str().unwrap(), "--principal", "User:alice", "--operation", "READ", "--topic", "orders"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (code, answer) = grantforge_agent::explain::run(&question, "");
    assert_eq!(code, 0, "{answer}");
    assert!(answer.contains("decision: ALLOWED by policy 1"), "explain reads the verified cache: {answer}");
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();

    let started = Instant::now();
    let second = agent(&server, &cache, &[]);
    assert!(second.await_snapshot(Duration::from_millis(100)), "the cache is applied at configure time");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(may_read(&second, "orders"));
    registry::release(&second);

    let snapshot = cache.join("snapshot.json");
    let tampered = std::fs::read_to_string(&snapshot).unwrap().replace("\"alice\"", "\"mallory\"");
    std::fs::write(&snapshot, tampered).unwrap();
    let (code, answer) = grantforge_agent::explain::run(&question, "");
    assert_eq!(code, 1, "explain refuses a cache that does not verify: {answer}");
    assert!(answer.contains("does not verify"), "{answer}");
    let third = agent(&server, &cache, &[]);
    assert!(!third.await_snapshot(Duration::from_millis(300)), "a tampered cache is never used");
    assert!(!may_read(&third, "orders"));
    let moved_aside = std::fs::read_dir(&cache).unwrap().filter_map(Result::ok).any(|e| e.file_name().to_string_lossy().starts_with("rejected-"));
    assert!(moved_aside, "the tampered cache is kept aside for inspection");
    registry::release(&third);
}

#[test]
fn a_pinned_key_refuses_snapshots_signed_by_another() {
    let server = server("pinned");
    let key_file = temp_dir("pinned-key").join("key.pub");
    std::fs::write(&key_file, server.other_public_key_base64()).unwrap();
    let agent = agent(&server, &temp_dir("pinned-cache"), &[("grantforge.signing.key.file", key_file.to_str().unwrap())]);
    assert!(!agent.await_snapshot(Duration::from_secs(3)), "signed by a key other than the pinned one");
    assert!(!may_read(&agent, "orders"));
    registry::release(&agent);
}

fn access(agent: &Agent, user: &str, topic: &str, operation: Operation) -> bool {
    let context = RequestContext {
        principal: Principal { principal_type: "User".into(), name: user.into() },
        conditions: KafkaContext { client_address: Some("127.0.0.1".parse().unwrap()), listener: "SASL_PLAINTEXT".into(), client_id: "producer-1".into() },
        request_type: 0,
        request_version: 9,
    };
    let action = Action { operation: Some(operation), resource_type: Some(ResourceType::Topic), literal: true, name: topic, log_if_allowed: true, log_if_denied: true };
    let mut allowed = [false];
    agent.authorize(&context, &[action], &mut allowed);
    allowed[0]
}

/// Sum of `count` over the server's events for this user, outcome and resource.
fn counted(server: &RunningServer, user: &str, outcome: &str, resource: &str) -> u64 {
    server
        .events()
        .iter()
        .filter(|e| e["user"] == user && e["outcome"] == outcome && e["resource"] == resource)
        .map(|e| e["count"].as_u64().unwrap_or(1))
        .sum()
}

const FAST_AUDIT: &[(&str, &str)] = &[("grantforge.audit.fold.window.ms", "500"), ("grantforge.audit.flush.interval.ms", "300")];

#[test]
fn folded_accesses_and_refusals_reach_the_server_and_counts_add_up() {
    let server = server("audit");
    let agent = agent(&server, &temp_dir("audit-cache"), FAST_AUDIT);
    assert!(agent.await_snapshot(Duration::from_secs(10)));
    for _ in 0..10_000 {
        assert!(access(&agent, "alice", "orders", Operation::Write));
    }
    let refused_at = Instant::now();
    assert!(!access(&agent, "bob", "orders", Operation::Write));
    eventually("bob's refusal reaches the server", Duration::from_secs(1), || counted(&server, "bob", "DENIED", "orders") == 1);
    println!("refusal to server: {:?}", refused_at.elapsed());
    eventually("alice's accesses are folded and delivered", Duration::from_secs(5), || counted(&server, "alice", "ALLOWED", "orders") == 10_000);
    let events = server.events().iter().filter(|e| e["user"] == "alice").count();
    assert!(events <= 3, "10,000 accesses become one event per fold window, not {events}");
    registry::release(&agent);
}

#[test]
fn nothing_is_lost_while_the_server_is_away() {
    let server = server("outage");
    let cache = temp_dir("outage-cache");
    let agent = agent(&server, &cache, FAST_AUDIT);
    assert!(agent.await_snapshot(Duration::from_secs(10)));
    server.set_fault(fault(r#"{"mode":"down"}"#)).unwrap();
    for round in 0..5 {
        for _ in 0..100 {
            access(&agent, "alice", "orders", Operation::Read);
        }
        access(&agent, "bob", "orders", Operation::Write);
        std::thread::sleep(Duration::from_millis(600 + round * 10));
    }
    let spooled = std::fs::read_dir(cache.join("audit-spool")).map(|d| d.count()).unwrap_or(0);
    assert!(spooled > 0, "events wait in the spool while the server is away");
    assert_eq!(counted(&server, "alice", "ALLOWED", "orders"), 0);
    server.clear_fault();
    eventually("the spool is delivered", Duration::from_secs(15), || counted(&server, "alice", "ALLOWED", "orders") == 500);
    eventually("every refusal too", Duration::from_secs(5), || counted(&server, "bob", "DENIED", "orders") == 5);
    registry::release(&agent);
}

#[test]
fn a_refused_batch_is_split_and_the_rest_delivered() {
    let server = server("split");
    let agent = agent(&server, &temp_dir("split-cache"), FAST_AUDIT);
    assert!(agent.await_snapshot(Duration::from_secs(10)));
    server.set_fault(fault(r#"{"mode":"fail-events-400","times":1}"#)).unwrap();
    for topic in ["orders", "orders-eu", "orders-us", "orders-asia"] {
        access(&agent, "alice", topic, Operation::Read);
    }
    eventually("all four delivered after the split", Duration::from_secs(5), || {
        ["orders", "orders-eu", "orders-us", "orders-asia"].iter().all(|t| counted(&server, "alice", "ALLOWED", t) == 1)
    });
    registry::release(&agent);
}
