//! The agent identifies itself as GrantForge's own agents do (issue 48): the heartbeat's
//! `agentVersion` is `<agent version>-kafka-<running Kafka version>`, as the HDFS agent's is
//! `<version>-hadoop-<Hadoop's version>`, the Kafka version being what the Java shim hands over.

mod common;

use common::*;
use grantforge_agent::registry;

#[test]
fn the_heartbeat_names_the_agents_version_and_the_running_kafkas() {
    let server = server("identity");
    let agent = agent(
        &server,
        &temp_dir("identity-cache"),
        &[("kafka.version", "4.3.1")],
    );
    assert!(agent.await_snapshot(PATIENCE));
    let expected = format!("{}-kafka-4.3.1", env!("CARGO_PKG_VERSION"));
    eventually("a heartbeat naming Kafka's version", PATIENCE, || {
        server
            .heartbeats()
            .iter()
            .any(|beat| beat.body["agentVersion"] == expected.as_str())
    });
    assert!(
        server
            .heartbeats()
            .iter()
            .all(|beat| beat.body["agentVersion"] == expected.as_str()),
        "every heartbeat says so"
    );
    registry::release(&agent);
}
