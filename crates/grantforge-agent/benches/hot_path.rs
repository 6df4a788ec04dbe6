//! The agent's request-path costs without JNI: a decision from the cache with its access folded
//! into the audit (the agent's whole path, through a request thread's lane), and the shared fold
//! tables the lanes hand their groups to.
//!
//! Targets (docs/benchmarks.md): folding sustains ≥ 2 million allowed accesses a second on one
//! core into a bounded number of groups; a flood of distinct refusals stays within a principal's
//! share, or the refused half of the room when many principals flood at once.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use grantforge_agent::internals::Auditor;
use grantforge_agent::{registry, AgentConfig};
use grantforge_engine::Instant;
use grantforge_kafka::{
    Action, KafkaContext, Operation, Principal, Reason, RequestContext, ResourceType,
};

fn context(user: &str) -> RequestContext {
    RequestContext {
        principal: Principal {
            principal_type: "User".into(),
            name: user.into(),
        },
        conditions: KafkaContext {
            client_address: Some("10.1.2.3".parse().unwrap()),
            listener: "SASL_PLAINTEXT".into(),
            client_id: "producer-1".into(),
        },
        request_type: 0,
        request_version: 9,
    }
}

fn write(topic: &str) -> Action<'_> {
    Action {
        operation: Some(Operation::Write),
        resource_type: Some(ResourceType::Topic),
        literal: true,
        name: topic,
        log_if_allowed: true,
        log_if_denied: true,
    }
}

const ALLOWED: Reason = Reason::Policy {
    id: 1,
    allowed: true,
};
const DENIED: Reason = Reason::Policy {
    id: 5,
    allowed: false,
};

/// `Agent::authorize` of one audited action, answered from the cache: the decision, the fold of the
/// access into the thread's lane, and the counts. Every access is audited (Kafka's logIfAllowed).
fn agent_path(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("gf-hot-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policies = dir.join("e2e.json");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/snapshots/e2e.json"
        ),
        &policies,
    )
    .unwrap();
    let settings: std::collections::BTreeMap<String, String> = [(
        "grantforge.policy.file".to_string(),
        policies.display().to_string(),
    )]
    .into_iter()
    .collect();
    let agent = registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap();
    let mut group = c.benchmark_group("agent_authorize");
    group.throughput(Throughput::Elements(1));
    let (alice, orders) = (context("alice"), [write("orders")]);
    let mut allowed = [false];
    // The second call is answered from the cache (checked here, not after the benchmarks: a run
    // filtered to other benchmarks must not fail).
    agent.authorize(&alice, &orders, &mut allowed);
    agent.authorize(&alice, &orders, &mut allowed);
    assert!(allowed[0] && agent.stats().cache_hits > 0);
    group.bench_function("cache_hit_audited_allowed", |b| {
        b.iter(|| {
            agent.authorize(&alice, &orders, &mut allowed);
            allowed[0]
        })
    });
    // alice reads orders-0 … orders-999 (policy 2, through her role): 1,000 allowed groups.
    let topics: Vec<String> = (0..1000).map(|i| format!("orders-{i}")).collect();
    let mut i = 0;
    group.bench_function("cache_hit_audited_allowed_1000_groups", |b| {
        b.iter(|| {
            i = (i + 1) % topics.len();
            agent.authorize(
                &alice,
                &[Action {
                    operation: Some(Operation::Read),
                    ..write(&topics[i])
                }],
                &mut allowed,
            );
            assert!(allowed[0]);
        })
    });
    // The same question where three principals, none of them alice, are excluded from audit (an
    // agent of its own: one policy file, one configuration per JVM).
    let excluding_policies = dir.join("e2e-excluding.json");
    std::fs::copy(&policies, &excluding_policies).unwrap();
    let mut excluding = settings.clone();
    excluding.insert(
        "grantforge.policy.file".to_string(),
        excluding_policies.display().to_string(),
    );
    excluding.insert(
        "grantforge.audit.excluded.principals".to_string(),
        "User:monitor;User:probe;User:ops".to_string(),
    );
    let other = registry::open(AgentConfig::from_settings(&excluding).unwrap()).unwrap();
    other.authorize(&alice, &orders, &mut allowed);
    group.bench_function("cache_hit_audited_allowed_3_principals_excluded", |b| {
        b.iter(|| {
            other.authorize(&alice, &orders, &mut allowed);
            allowed[0]
        })
    });
    group.finish();
    registry::release(&other);
    registry::release(&agent);
    std::fs::remove_dir_all(&dir).ok();
}

fn folding(c: &mut Criterion) {
    let mut group = c.benchmark_group("audit_fold");
    group.throughput(Throughput::Elements(1));
    let auditor = Auditor::new(10_000);
    let (ctx, action, now) = (context("alice"), write("orders"), Instant::now());
    // The shared tables, recorded into directly (the path with the decision cache turned off).
    group.bench_function("identical_allowed_access", |b| {
        b.iter(|| auditor.record(&ctx, &action, &ALLOWED, 1, now))
    });
    let topics: Vec<String> = (0..1000).map(|i| format!("orders-{i}")).collect();
    let mut i = 0;
    group.bench_function("allowed_access_1000_groups", |b| {
        b.iter(|| {
            i = (i + 1) % topics.len();
            auditor.record(&ctx, &write(&topics[i]), &ALLOWED, 1, now)
        })
    });
    group.finish();

    // A flood of distinct refusals: one principal holds half the room and one overflow group; a
    // thousand principals at once fill the refused half and no more.
    let mut flood = c.benchmark_group("refusal_flood");
    let names: Vec<String> = (0..1_000_000).map(|i| format!("t{i}")).collect();
    flood.throughput(Throughput::Elements(names.len() as u64));
    flood.sample_size(10);
    flood.bench_function("1M_distinct_refusals_of_one_principal", |b| {
        b.iter_batched(
            || Auditor::new(10_000),
            |auditor| {
                let mallory = context("mallory");
                for name in &names {
                    auditor.record(&mallory, &write(name), &DENIED, 1, now);
                }
                assert_eq!(
                    auditor.queued(),
                    2_251,
                    "half the room of their own, one overflow group"
                );
                auditor
            },
            BatchSize::PerIteration,
        )
    });
    let flooders: Vec<_> = (0..1000).map(|i| context(&format!("m{i}"))).collect();
    flood.bench_function("1M_distinct_refusals_of_1000_principals", |b| {
        b.iter_batched(
            || Auditor::new(10_000),
            |auditor| {
                for (i, name) in names.iter().enumerate() {
                    auditor.record(&flooders[i % 1000], &write(name), &DENIED, 1, now);
                }
                assert_eq!(
                    auditor.queued(),
                    5_000,
                    "the refused half, full, and no more"
                );
                auditor
            },
            BatchSize::PerIteration,
        )
    });
    flood.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = agent_path, folding
}
criterion_main!(benches);
