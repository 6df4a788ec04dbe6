//! What the server-mode tests share: the project's GrantForge test server on loopback HTTP, an
//! agent configured against it (with the server's signing key, as plain HTTP requires), and
//! questions to the agent and the server; and reading the process's log queue.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use grantforge_agent::logging::{self, LogLevel, LogRecord};
use grantforge_agent::{registry, Agent, AgentConfig};
use grantforge_kafka::{Action, KafkaContext, Operation, Principal, RequestContext, ResourceType};
use grantforge_testserver::{Config, Fault, FaultMode, RequestRecord, RunningServer, Server};

/// A fresh directory, removed when the test that made it ends, passed or failed: libtest runs each
/// test on a thread of its own, and the thread's [`Scratch`] is dropped when that thread exits, after
/// the test's own values (the agents and servers using the directory) were dropped, a panic
/// included. `GF_KEEP_TEST_DIRS=1` keeps them, to look at after a failure.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "gf-sync-{name}-{}-{:?}",
        std::process::id(),
        Instant::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    SCRATCH.with(|scratch| scratch.borrow_mut().0.push(dir.clone()));
    dir
}

/// The directories a test thread made, removed on drop.
pub struct Scratch(Vec<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::env::var_os("GF_KEEP_TEST_DIRS").is_some() {
            return;
        }
        for dir in &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = const { std::cell::RefCell::new(Scratch(Vec::new())) };
}

/// The fixture's policies, plus one that lets alice read `marker` when given.
pub fn policies(marker: Option<&str>) -> String {
    let file =
        std::fs::read_to_string(in_crate("../../tests/fixtures/server/policies.json")).unwrap();
    let Some(topic) = marker else { return file };
    let policy = format!(
        r#"{{"id":"900","name":"marker","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"topic":{{"values":["{topic}"],"excludes":false,"recursive":false}}}},"allow":[{{"users":["alice"],"groups":[],"roles":[],"accessTypes":["read"],"conditions":[]}}],"allowExceptions":[],"deny":[],"denyExceptions":[],"validity":[]}}}},"#
    );
    file.replacen("\"policies\": [", &format!("\"policies\": [{policy}"), 1)
}

/// A test server answering heartbeats with `refreshSeconds` 1.
pub fn server(name: &str) -> RunningServer {
    let mut config = Config::new(temp_dir(&format!("{name}-server")));
    config.policies_json = Some(policies(None));
    config.refresh_seconds = 1;
    config.quiet = true;
    Server::start(config).unwrap()
}

/// The file holding the server's signing key (`grantforge.signing.key.file`).
pub fn signing_key_file(server: &RunningServer) -> PathBuf {
    server
        .state_dir()
        .join(grantforge_testserver::files::PUBLIC_KEY)
}

/// The settings of an agent of `server` with this cache directory; `extra` adds or overrides.
pub fn settings(
    server: &RunningServer,
    cache: &Path,
    extra: &[(&str, &str)],
) -> BTreeMap<String, String> {
    let mut settings: BTreeMap<String, String> = [
        ("grantforge.server.url", server.base_url().to_string()),
        (
            "grantforge.token.file",
            server.state_dir().join("token").display().to_string(),
        ),
        ("grantforge.cache.dir", cache.display().to_string()),
        ("grantforge.instance", "test-agent".to_string()),
        ("grantforge.refresh.interval.ms", "1000".to_string()),
        // plain HTTP is no trust anchor: the key is configured, never trusted on first use
        (
            "grantforge.signing.key.file",
            signing_key_file(server).display().to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    settings.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    settings
}

/// `explain` from a disk cache, as an operator asks it offline: may alice read `orders`?
pub fn explain_alice_reads_orders(cache: &Path, key_file: &Path) -> (i32, String) {
    let question: Vec<String> = [
        "--cache-dir",
        cache.to_str().unwrap(),
        "--signing-key",
        key_file.to_str().unwrap(),
        "--principal",
        "User:alice",
        "--operation",
        "READ",
        "--topic",
        "orders",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    grantforge_agent::explain::run(&question, "")
}

pub fn agent(server: &RunningServer, cache: &Path, extra: &[(&str, &str)]) -> Arc<Agent> {
    registry::open(AgentConfig::from_settings(&settings(server, cache, extra)).unwrap()).unwrap()
}

pub const FAST_AUDIT: &[(&str, &str)] = &[
    ("grantforge.audit.fold.window.ms", "500"),
    ("grantforge.audit.flush.interval.ms", "300"),
];

pub fn may_read(agent: &Agent, topic: &str) -> bool {
    let context = RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: "alice".into(),
        },
        conditions: KafkaContext {
            client_address: Some("127.0.0.1".parse().unwrap()),
            ..Default::default()
        },
        request_type: 1,
        request_version: 12,
    };
    let action = Action {
        operation: Some(Operation::Read),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: topic,
        log_if_allowed: false,
        log_if_denied: false,
    };
    let mut allowed = [false];
    agent.authorize(&context, &[action], &mut allowed);
    allowed[0]
}

/// `user`'s Produce request (version 9) from 127.0.0.1 on listener `SASL_PLAINTEXT`, client id `producer-1`.
pub fn producer(user: &str) -> RequestContext {
    RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: user.into(),
        },
        conditions: KafkaContext {
            client_address: Some("127.0.0.1".parse().unwrap()),
            listener: "SASL_PLAINTEXT".into(),
            client_id: "producer-1".into(),
        },
        request_type: 0,
        request_version: 9,
    }
}

/// `operation` on the literal topic, audited whichever way it goes.
pub fn on_topic(topic: &str, operation: Operation) -> Action<'_> {
    Action {
        operation: Some(operation),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: topic,
        log_if_allowed: true,
        log_if_denied: true,
    }
}

/// An audited access of `user` to `topic`.
pub fn access(agent: &Agent, user: &str, topic: &str, operation: Operation) -> bool {
    let mut allowed = [false];
    agent.authorize(&producer(user), &[on_topic(topic, operation)], &mut allowed);
    allowed[0]
}

/// Sum of `count` over the server's events for this user, outcome and resource.
pub fn counted(server: &RunningServer, user: &str, outcome: &str, resource: &str) -> u64 {
    server
        .events()
        .iter()
        .filter(|e| e["user"] == user && e["outcome"] == outcome && e["resource"] == resource)
        .map(|e| e["count"].as_u64().unwrap_or(1))
        .sum()
}

/// The batches waiting in the audit spool of the cache directory `cache`.
pub fn spooled_batches(cache: &Path) -> usize {
    std::fs::read_dir(cache.join("audit-spool"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .count()
        })
        .unwrap_or(0)
}

/// The resources of the server's events that `wanted` picks, in the order it received them.
pub fn resources_received(server: &RunningServer, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    server
        .events()
        .iter()
        .filter_map(|e| e["resource"].as_str().map(str::to_string))
        .filter(|r| wanted(r))
        .collect()
}

/// How long a test waits for an event it expects: long enough that only an event that does not
/// come fails the test, not a busy machine (two cores shared with other builds). Latencies are
/// measured by the benchmarks (`docs/benchmarks.md`), never promised by a test.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub fn eventually(what: &str, timeout: Duration, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "not within {timeout:?}: {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

pub fn fault(json: &str) -> Fault {
    serde_json::from_str(json).unwrap()
}

/// The policy version in force, if any.
pub fn version(agent: &Agent) -> Option<i64> {
    agent.policies().map(|p| p.policy_version)
}

/// The agent API requests the server logged after sequence number `after`.
pub fn requests_after(server: &RunningServer, after: u64) -> Vec<RequestRecord> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.seq > after)
        .collect()
}

/// The sequence number of the last request the server logged (0 before any).
pub fn last_seq(server: &RunningServer) -> u64 {
    server.requests().last().map_or(0, |r| r.seq)
}

/// Whether the server answered `endpoint` with `status` under the fault `mode` after `after`:
/// proof that a fault was served, not only set.
pub fn served(
    server: &RunningServer,
    after: u64,
    endpoint: &str,
    mode: FaultMode,
    status: u16,
) -> bool {
    requests_after(server, after).iter().any(|r| {
        r.endpoint.as_deref() == Some(endpoint) && r.fault == Some(mode) && r.status == Some(status)
    })
}

/// Whether a request after `after` was met by the `down` fault (closed without an answer): the
/// agent had its round, and the server gave it nothing.
pub fn went_unanswered(server: &RunningServer, after: u64) -> bool {
    requests_after(server, after)
        .iter()
        .any(|r| r.fault == Some(FaultMode::Down) && r.status.is_none())
}

/// Drains the process's log queue into `records` until `done` holds for them, or `within` has
/// passed. A test reading the queue runs in a binary of its own: no other test drains it.
pub fn drain_logs_until(
    records: &mut Vec<LogRecord>,
    within: Duration,
    done: impl Fn(&[LogRecord]) -> bool,
) {
    let deadline = Instant::now() + within;
    while !done(records) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        records.extend(logging::drain());
    }
}

/// The messages of `level` among `records` that contain `containing`.
pub fn log_lines(records: &[LogRecord], level: LogLevel, containing: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.level == level && r.message.contains(containing))
        .map(|r| r.message.clone())
        .collect()
}

/// A file of this crate's checkout, found when the test runs (cargo sets `CARGO_MANIFEST_DIR` for
/// it, as for the build): CI reuses a test binary built from the same bytes in another checkout,
/// and it must read this checkout's files (`scripts/content-mtimes`).
pub fn in_crate(relative: &str) -> std::path::PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("run by cargo, which sets CARGO_MANIFEST_DIR");
    std::path::Path::new(&dir).join(relative)
}
