//! Break-glass (issue 48): a snapshot signed with the pinned key, handed to a running agent
//! through `grantforge.break.glass.dir` as the JAR's `break-glass` command does, applied and
//! audited, lifted by the server's next version; and refused, with the reason, when signed by
//! another key, expired, without an end, of another service or type, or not newer than the version
//! in force. Against the project's test server over loopback HTTP.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use common::*;
use grantforge_agent::registry;
use grantforge_testserver::RunningServer;
use ring::signature::Ed25519KeyPair;
use serde_json::{json, Value};

/// An RFC 3339 instant `secs` from now (negative: in the past).
fn from_now(secs: i64) -> Value {
    json!(grantforge_engine::Instant::now()
        .plus_seconds(secs)
        .to_string())
}

/// The server's snapshot turned into a break-glass file: `version`, and one policy letting alice
/// read `topic` until `until` (`null`: no validity at all).
fn break_glass_snapshot(server: &RunningServer, version: i64, topic: &str, until: Value) -> Value {
    let validity = if until.is_null() {
        json!([])
    } else {
        json!([{"from": null, "until": until}])
    };
    let mut snapshot: Value = serde_json::from_slice(&server.snapshot().body).unwrap();
    snapshot["policyVersion"] = json!(version);
    snapshot["policies"] = json!([{
        "id": "7000000000000000001", "name": "break-glass", "type": "ACCESS", "priority": "NORMAL",
        "document": {
            "resources": {"topic": {"values": [topic], "excludes": false, "recursive": false}},
            "allow": [{"users": ["alice"], "groups": [], "roles": [], "accessTypes": ["read"], "conditions": []}],
            "allowExceptions": [], "deny": [], "denyExceptions": [],
            "validity": validity
        }
    }]);
    snapshot
}

fn server_key(server: &RunningServer) -> Ed25519KeyPair {
    let der = std::fs::read(
        server
            .state_dir()
            .join(grantforge_testserver::files::PRIVATE_KEY),
    )
    .unwrap();
    Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der).unwrap()
}

/// Hands `snapshot`, signed with `key`, to the agent as the command does; returns the request id.
fn hand_in(dir: &Path, id: &str, snapshot: &Value, key: &Ed25519KeyPair) -> String {
    let body = snapshot.to_string().into_bytes();
    std::fs::write(dir.join(format!("{id}.json")), &body).unwrap();
    std::fs::write(
        dir.join(format!("{id}.json.sig")),
        STANDARD.encode(key.sign(&body).as_ref()),
    )
    .unwrap();
    let request = json!({"file": format!("/srv/incident/{id}.json"), "by": "oncall@ops-1"});
    std::fs::write(dir.join(format!("{id}.request")), request.to_string()).unwrap();
    id.to_string()
}

/// The agent's answer to a request: applied, and its message.
fn answer(dir: &Path, id: &str) -> (bool, String) {
    let result = dir.join(format!("{id}.result"));
    eventually("the agent answers the request", PATIENCE, || {
        result.exists()
    });
    let answer = std::fs::read_to_string(result).unwrap();
    let (outcome, message) = answer.split_once('\n').unwrap();
    (outcome == "applied", message.trim_end().to_string())
}

fn agent_with_break_glass(
    server: &RunningServer,
    name: &str,
) -> (std::sync::Arc<grantforge_agent::Agent>, PathBuf) {
    let dir = temp_dir(&format!("{name}-break-glass"));
    let agent = agent(
        server,
        &temp_dir(&format!("{name}-cache")),
        &[("grantforge.break.glass.dir", dir.to_str().unwrap())],
    );
    assert!(agent.await_snapshot(PATIENCE));
    (agent, dir)
}

#[test]
fn a_break_glass_file_is_applied_to_the_running_node_audited_and_lifted_by_the_servers_next_version(
) {
    let server = server("glass-apply");
    let (agent, dir) = agent_with_break_glass(&server, "glass-apply");
    let before = version(&agent).unwrap();
    let glass = break_glass_snapshot(&server, before + 1, "glass", from_now(3600));
    let id = hand_in(&dir, "1-apply", &glass, &server_key(&server));

    let (applied, message) = answer(&dir, &id);
    assert!(applied, "{message}");
    assert!(
        message.contains("/srv/incident/1-apply.json")
            && message.contains(&format!("policy version {}", before + 1))
            && message.contains("oncall@ops-1"),
        "{message}"
    );
    assert_eq!(version(&agent), Some(before + 1));
    assert!(may_read(&agent, "glass") && !may_read(&agent, "orders"));
    eventually("the server receives the audit event", PATIENCE, || {
        counted(
            &server,
            "oncall@ops-1",
            "ALLOWED",
            "break-glass:/srv/incident/1-apply.json",
        ) == 1
    });
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, ["1-apply.result"], "only the answer stays");

    // The server still serves the older version: refused as a rollback, the break-glass stays.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        may_read(&agent, "glass"),
        "the server's older version does not lift it"
    );

    server
        .set_policies_json(policies(Some("after")).as_bytes())
        .unwrap();
    server
        .set_policies_json(policies(Some("after")).as_bytes())
        .unwrap();
    assert!(server.policy_version() > before + 1);
    eventually("the server's newer version lifts it", PATIENCE, || {
        may_read(&agent, "after") && !may_read(&agent, "glass")
    });
    registry::release(&agent);
}

#[test]
fn a_break_glass_file_is_refused_naming_why_and_nothing_changes() {
    let server = server("glass-refused");
    server
        .set_policies_json(policies(Some("v2")).as_bytes())
        .unwrap();
    let (agent, dir) = agent_with_break_glass(&server, "glass-refused");
    eventually("the second version", PATIENCE, || may_read(&agent, "v2"));
    let in_force = version(&agent).unwrap();
    let key = server_key(&server);
    let other_key = {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).unwrap();
        Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap()
    };
    let good = || break_glass_snapshot(&server, in_force + 1, "glass", from_now(3600));
    let with = |change: &dyn Fn(&mut Value)| {
        let mut snapshot = good();
        change(&mut snapshot);
        snapshot
    };
    let cases: Vec<(&str, Value, &Ed25519KeyPair, String)> = vec![
        (
            "other-key",
            good(),
            &other_key,
            "does not verify under the pinned signing key".into(),
        ),
        (
            "expired",
            break_glass_snapshot(&server, in_force + 1, "glass", from_now(-60)),
            &key,
            "it has expired: every validity period in it has ended".into(),
        ),
        (
            "no-end",
            break_glass_snapshot(&server, in_force + 1, "glass", Value::Null),
            &key,
            "policy 7000000000000000001 has no validity that ends".into(),
        ),
        (
            "other-service",
            with(&|s| s["service"] = json!("kafka-other")),
            &key,
            "it is of service `kafka-other`, but this agent serves `kafka-demo`".into(),
        ),
        (
            "other-type",
            with(&|s| s["serviceType"] = json!("hdfs")),
            &key,
            "it is of service type `hdfs`, not kafka".into(),
        ),
        (
            "older",
            with(&|s| s["policyVersion"] = json!(in_force - 1)),
            &key,
            format!(
                "its policy version {} is older than the applied {in_force}",
                in_force - 1
            ),
        ),
        (
            "same",
            with(&|s| s["policyVersion"] = json!(in_force)),
            &key,
            format!("its policy version {in_force} is the one in force"),
        ),
    ];
    for (i, (name, snapshot, key, reason)) in cases.iter().enumerate() {
        let id = hand_in(&dir, &format!("{i}-{name}"), snapshot, key);
        let (applied, message) = answer(&dir, &id);
        assert!(!applied, "{name}: {message}");
        assert!(message.contains(reason.as_str()), "{name}: {message}");
        assert!(
            message.contains(&format!("/srv/incident/{id}.json")),
            "{message}"
        );
        assert_eq!(version(&agent), Some(in_force), "{name}: nothing applied");
        assert!(
            may_read(&agent, "v2") && !may_read(&agent, "glass"),
            "{name}"
        );
    }
    eventually("each refusal is audited", PATIENCE, || {
        server
            .events()
            .iter()
            .filter(|e| e["user"] == "oncall@ops-1" && e["outcome"] == "DENIED")
            .count()
            == cases.len()
    });
    registry::release(&agent);
}

#[test]
fn a_break_glass_file_waiting_when_the_agent_starts_is_refused_not_applied() {
    let server = server("glass-start");
    let dir = temp_dir("glass-start-break-glass");
    let glass = break_glass_snapshot(
        &server,
        server.policy_version() + 1,
        "glass",
        from_now(3600),
    );
    let id = hand_in(&dir, "1-early", &glass, &server_key(&server));
    let agent = agent(
        &server,
        &temp_dir("glass-start-cache"),
        &[("grantforge.break.glass.dir", dir.to_str().unwrap())],
    );
    let (applied, message) = answer(&dir, &id);
    assert!(!applied);
    assert!(
        message.contains("waiting when the agent started"),
        "{message}"
    );
    assert!(agent.await_snapshot(PATIENCE));
    assert_eq!(version(&agent), Some(server.policy_version()));
    assert!(!may_read(&agent, "glass"));
    registry::release(&agent);
}
