//! What one policy change costs a GrantForge server in bytes, for a fleet of agents: 1, 10 and 100
//! agents (one process, each its own instance and cache directory, as brokers are) follow one test
//! server serving a snapshot of Kafka's `AuthorizerBenchmark` size (50,000 resources by default);
//! one policy is added, and the server's request log says how many bytes its answers put on the
//! wire until every agent has the new version. Run with the server compressing (the default) and
//! without, side by side.
//!
//! ```text
//! cargo run --release -p grantforge-agent --example fleet_wire_bytes [-- RESOURCES [AGENTS[/GROUP]...]]
//! ```
//!
//! Each agent holds its own compiled snapshot (about 150 MB of this process at 50,000 resources),
//! so `100/10` runs 100 agents as ten groups of ten, one after the other, each following its own
//! change; bytes and downloads are summed, times are the slowest group's.
//!
//! Printed: a Markdown table for `docs/benchmarks.md`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use grantforge_agent::{registry, Agent};
use grantforge_testserver::{Config, RequestRecord, RunningServer, Server};

// The agents are configured as the server-mode tests configure theirs.
#[path = "../tests/common/mod.rs"]
mod common;
use common::temp_dir;

const ROUND_SECONDS: i64 = 2;
const WAIT: Duration = Duration::from_secs(600);

/// One policy per resource `foo-bar35_resource-<id>`, as Kafka's `AuthorizerBenchmark` names
/// them: a group when `id % 10 == 0`, otherwise a topic, prefixed when `id % 5 == 0`; read for five
/// users.
fn policies(resources: usize, extra: bool) -> String {
    let policy = |id: usize, level: &str, value: &str| {
        format!(
            r#"{{"id":"{id}","name":"p{id}","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"{level}":{{"values":["{value}"],"excludes":false,"recursive":false}}}},"allow":[{{"users":["test-user","test-user1","test-user2","test-user3","test-user4"],"groups":[],"roles":[],"accessTypes":["read"],"conditions":[]}}],"allowExceptions":[],"deny":[],"denyExceptions":[],"validity":[]}}}}"#
        )
    };
    let mut all: Vec<String> = (0..resources)
        .map(|id| {
            let level = if id % 10 == 0 { "group" } else { "topic" };
            let star = if id % 5 == 0 { "*" } else { "" };
            policy(id + 1, level, &format!("foo-bar35_resource-{id}{star}"))
        })
        .collect();
    if extra {
        all.push(policy(resources + 1, "topic", "the-change"));
    }
    format!(r#"{{"policies":[{}]}}"#, all.join(","))
}

/// An agent of `server` as a broker of the fleet: its own instance name and cache directory
/// (below `dir`).
fn agent(server: &RunningServer, dir: &Path, n: usize) -> Arc<Agent> {
    let cache = dir.join(format!("agent-{n}"));
    let (instance, round) = (format!("broker-{n}"), (ROUND_SECONDS * 1000).to_string());
    common::agent(
        server,
        &cache,
        &[
            ("grantforge.instance", &instance),
            ("grantforge.refresh.interval.ms", &round),
        ],
    )
}

fn await_version(agents: &[Arc<Agent>], version: i64) {
    let deadline = Instant::now() + WAIT;
    while agents
        .iter()
        .any(|a| a.policies().map(|p| p.policy_version) != Some(version))
    {
        assert!(Instant::now() < deadline, "version {version} not applied");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[derive(Default)]
struct Measured {
    downloads: usize,
    download_bytes: u64,
    /// Time from the first download after the change to the last.
    spread: Duration,
    follow: Duration,
}

fn measure(resources: usize, agents: usize, gzip: bool) -> (usize, Measured) {
    // Removed at the end of each measurement: 22 MB of snapshot per agent at the default size.
    let dir = temp_dir("fleet");
    let mut config = Config::new(dir.join("server"));
    config.policies_json = Some(policies(resources, false));
    config.refresh_seconds = ROUND_SECONDS;
    config.quiet = true;
    config.gzip = gzip;
    let server = Server::start(config).unwrap();
    let fleet: Vec<Arc<Agent>> = (0..agents).map(|n| agent(&server, &dir, n)).collect();
    await_version(&fleet, 1);
    let snapshot_bytes = server.snapshot().body.len();
    let before = server.requests().last().map_or(0, |r| r.seq);
    let changed = Instant::now();
    server
        .set_policies_json(policies(resources, true).as_bytes())
        .unwrap();
    await_version(&fleet, 2);
    let follow = changed.elapsed();
    let downloads: Vec<RequestRecord> = server
        .requests()
        .into_iter()
        .filter(|r| r.seq > before && r.endpoint.as_deref() == Some("policies"))
        .collect();
    assert!(downloads.len() >= agents, "the log kept every download");
    let at = |r: &RequestRecord| r.at.clone();
    let (first, last) = (
        downloads.iter().map(at).min().unwrap(),
        downloads.iter().map(at).max().unwrap(),
    );
    let measured = Measured {
        downloads: downloads.len(),
        download_bytes: downloads.iter().filter_map(|r| r.response_bytes).sum(),
        spread: between(&first, &last),
        follow,
    };
    for agent in &fleet {
        registry::release(agent);
    }
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
    (snapshot_bytes, measured)
}

/// The time between two of the server's ISO-8601 timestamps of one day (`…THH:MM:SS.mmmZ`).
fn between(first: &str, last: &str) -> Duration {
    let millis = |t: &str| -> u64 {
        let time = &t[t.find('T').unwrap() + 1..t.len() - 1];
        let mut parts = time.split([':', '.']);
        let mut next = || parts.next().unwrap_or("0").parse::<u64>().unwrap();
        let (h, m, s, ms) = (next(), next(), next(), next());
        ((h * 60 + m) * 60 + s) * 1000 + ms
    };
    Duration::from_millis(millis(last).saturating_sub(millis(first)))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let resources: usize = args.next().map_or(50_000, |a| a.parse().unwrap());
    let mut fleets: Vec<(usize, usize)> = args
        .map(|a| match a.split_once('/') {
            Some((all, group)) => (all.parse().unwrap(), group.parse().unwrap()),
            None => (a.parse().unwrap(), a.parse().unwrap()),
        })
        .collect();
    if fleets.is_empty() {
        fleets = vec![(1, 1), (10, 10), (100, 10)];
    }
    println!("| agents | server | snapshot | downloads | bytes on the wire | per agent | downloads spread over | all agents on the new version after |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    for (agents, group) in fleets {
        for gzip in [true, false] {
            let (mut snapshot, mut m) = (0, Measured::default());
            for _ in 0..agents.div_ceil(group) {
                let (bytes, one) = measure(resources, group, gzip);
                snapshot = bytes;
                m.downloads += one.downloads;
                m.download_bytes += one.download_bytes;
                m.spread = m.spread.max(one.spread);
                m.follow = m.follow.max(one.follow);
            }
            println!(
                "| {agents} | {} | {:.2} MB | {} | {:.2} MB | {:.1} kB | {:.1} s | {:.1} s |",
                if gzip { "gzip" } else { "uncompressed" },
                snapshot as f64 / 1e6,
                m.downloads,
                m.download_bytes as f64 / 1e6,
                m.download_bytes as f64 / m.downloads as f64 / 1e3,
                m.spread.as_secs_f64(),
                m.follow.as_secs_f64(),
            );
        }
    }
}
