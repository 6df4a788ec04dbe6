//! Starting from the verified disk cache while the GrantForge server is away: from `open` (the
//! broker's `configure`) to the cached snapshot in force, signature checked. The test
//! `starts_from_the_verified_disk_cache_when_the_server_is_away_and_refuses_a_tampered_one` shows
//! that the cache is in force when `open` returns; how long that takes is measured here, not
//! promised by a test (docs/benchmarks.md).

use std::collections::BTreeMap;

use criterion::{criterion_group, criterion_main, Criterion};
use grantforge_agent::{registry, AgentConfig};
use grantforge_testserver::{Config, Fault, FaultMode, Server};

fn start_from_disk_cache(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("gf-bench-start-{}", std::process::id()));
    let mut config = Config::new(dir.join("server"));
    config.quiet = true;
    let server = Server::start(config).unwrap();
    let cache = dir.join("cache");
    let settings: BTreeMap<String, String> = [
        ("grantforge.server.url", server.base_url().to_string()),
        (
            "grantforge.token.file",
            server.state_dir().join("token").display().to_string(),
        ),
        ("grantforge.cache.dir", cache.display().to_string()),
        ("grantforge.instance", "bench-agent".to_string()),
        (
            "grantforge.signing.key.file",
            server
                .state_dir()
                .join(grantforge_testserver::files::PUBLIC_KEY)
                .display()
                .to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let config = AgentConfig::from_settings(&settings).unwrap();
    // A first start fills the cache from the server; then the server goes away.
    let first = registry::open(config.clone()).unwrap();
    assert!(first.await_snapshot(std::time::Duration::from_secs(60)));
    registry::release(&first);
    server.set_fault(Fault::new(FaultMode::Down)).unwrap();

    let mut group = c.benchmark_group("agent_start");
    group.sample_size(20);
    group.bench_function("open_from_verified_disk_cache_server_away", |b| {
        // Only `open` is timed: closing (one agent per cache directory) is not part of a start.
        b.iter_custom(|iterations| {
            let mut opening = std::time::Duration::ZERO;
            for _ in 0..iterations {
                let started = std::time::Instant::now();
                let agent = registry::open(config.clone()).unwrap();
                assert!(agent.policies().is_some(), "the cache is in force");
                opening += started.elapsed();
                registry::release(&agent);
            }
            opening
        })
    });
    group.finish();
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, start_from_disk_cache);
criterion_main!(benches);
