//! The staleness contract (`grantforge.snapshot.max.age.ms`, issue 48): with the project's test
//! server stopped, the snapshot in force goes current → degraded → refusing, and back to current
//! once the server returns; read from the metrics, the heartbeat and the process's log queue (a
//! test binary of its own, so that no other test drains the queue or logs into it meanwhile).

mod common;

use std::time::{Duration, Instant};

use common::*;
use grantforge_agent::logging::{self, LogLevel};
use grantforge_agent::{registry, Agent};
use grantforge_kafka::Operation;
use grantforge_testserver::{Config, RunningServer, Server};

/// The limit of these tests: three rounds of the tests' refresh interval (1 s), the least allowed.
const MAX_AGE: Duration = Duration::from_secs(3);

const LIMITED: &[(&str, &str)] = &[
    ("grantforge.snapshot.max.age.ms", "3000"),
    ("super.users", "User:admin"),
];

/// What the metric `snapshot-state` shows for each state.
const CURRENT: i64 = 0;
const DEGRADED: i64 = 1;
const REFUSING: i64 = 2;

fn state(agent: &Agent) -> i64 {
    agent.stats().snapshot_state
}

/// The server of `stopped` started again on its address, with its token and signing key.
fn restart(stopped: &Stopped) -> RunningServer {
    let mut config = Config::new(&stopped.state_dir);
    config.listen = stopped.addr.to_string();
    config.policies_json = Some(policies(None));
    config.refresh_seconds = 1;
    config.quiet = true;
    Server::start(config).unwrap()
}

struct Stopped {
    addr: std::net::SocketAddr,
    state_dir: std::path::PathBuf,
}

fn stop(server: RunningServer) -> Stopped {
    let stopped = Stopped {
        addr: server.addr(),
        state_dir: server.state_dir().to_path_buf(),
    };
    server.stop();
    stopped
}

#[test]
fn with_the_server_stopped_the_snapshot_degrades_then_refuses_past_the_limit_and_is_current_again_when_it_returns(
) {
    logging::install();
    let server = server("staleness");
    let agent = agent(&server, &temp_dir("staleness-cache"), LIMITED);
    assert!(agent.await_snapshot(PATIENCE));
    eventually("the first round confirms the snapshot", PATIENCE, || {
        state(&agent) == CURRENT && agent.stats().server_reachable == 1
    });
    assert!(may_read(&agent, "orders"));
    let applied = version(&agent).unwrap();
    let mut records = Vec::new();

    let stopped = stop(server);
    let down = Instant::now();
    eventually("a failed round degrades the snapshot", PATIENCE, || {
        state(&agent) == DEGRADED
    });
    assert_eq!(agent.stats().server_reachable, 0);
    assert!(
        may_read(&agent, "orders"),
        "a degraded snapshot still decides"
    );
    assert_eq!(agent.stats().refused_without_snapshot, 0);

    eventually("past the limit the snapshot refuses", PATIENCE, || {
        state(&agent) == REFUSING
    });
    // The last confirmation came at most a round (1 s) before the stop; the refusal within a
    // tick of the limit, with room for a slow machine.
    let refused_after = down.elapsed();
    assert!(
        refused_after >= MAX_AGE - Duration::from_secs(1)
            && refused_after <= MAX_AGE + Duration::from_secs(3),
        "refusing {refused_after:?} after the stop, the limit is {MAX_AGE:?}"
    );
    assert!(!may_read(&agent, "orders"));
    assert!(
        access(&agent, "admin", "orders", Operation::Write),
        "a super user is still served"
    );
    assert_eq!(agent.stats().refused_without_snapshot, 1);
    assert_eq!(version(&agent), Some(applied), "kept, not used");

    let server = restart(&stopped);
    eventually("the next good round makes it current", PATIENCE, || {
        state(&agent) == CURRENT
    });
    assert!(may_read(&agent, "orders"));
    assert_eq!(agent.stats().server_reachable, 1);
    let beat = server
        .heartbeats()
        .into_iter()
        .find(|b| b.body["health"]["state"] == "refusing")
        .expect("a heartbeat sent while refusing");
    assert_eq!(
        (
            beat.body["health"]["state"].as_str(),
            beat.body["health"]["serverReachable"].as_i64(),
            beat.body["health"]["refusedWithoutSnapshot"].as_u64(),
        ),
        (Some("refusing"), Some(0), Some(1)),
        "the first heartbeat after the outage tells what the node went through: {}",
        beat.body
    );
    eventually("a later heartbeat says current", PATIENCE, || {
        server
            .heartbeats()
            .iter()
            .any(|b| b.body["health"]["state"] == "current")
    });

    drain_logs_until(&mut records, PATIENCE, |r| {
        !log_lines(r, LogLevel::Info, "again: current").is_empty()
    });
    let degraded = log_lines(&records, LogLevel::Warn, ": degraded;");
    let refusing = log_lines(
        &records,
        LogLevel::Error,
        "grantforge.snapshot.max.age.ms=3000",
    );
    let current = log_lines(
        &records,
        LogLevel::Info,
        "again: current, no longer refusing",
    );
    assert_eq!(
        (degraded.len(), refusing.len(), current.len()),
        (1, 1, 1),
        "one line per change of state: {records:?}"
    );
    assert!(
        refusing[0].contains(&format!("policy version {applied}")),
        "{}",
        refusing[0]
    );
    registry::release(&agent);
}
