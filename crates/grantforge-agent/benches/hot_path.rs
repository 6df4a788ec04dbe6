//! The agent's request-path costs without JNI: a decision from the cache, and audit folding.
//!
//! Targets (docs/benchmarks.md): folding sustains ≥ 2 million allowed accesses a second on one
//! core into a bounded number of groups; a flood of distinct refusals stays within the group bound.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use grantforge_agent::audit::Auditor;
use grantforge_engine::{Instant, Outcome};
use grantforge_kafka::{Action, Decided, KafkaContext, Operation, Principal, RequestContext, ResourceType};

fn context(user: &str) -> RequestContext {
    RequestContext {
        principal: Principal { principal_type: "User".into(), name: user.into() },
        conditions: KafkaContext { client_address: Some("10.1.2.3".parse().unwrap()), listener: "SASL_PLAINTEXT".into(), client_id: "producer-1".into() },
        request_type: 0,
        request_version: 9,
    }
}

fn write(topic: &str) -> Action<'_> {
    Action { operation: Some(Operation::Write), resource_type: Some(ResourceType::Topic), literal: true, name: topic, log_if_allowed: true, log_if_denied: true }
}

const ALLOWED: Decided = Decided { allowed: true, outcome: Outcome::Allowed, policy_id: Some(1), unchecked: false, cacheable: true };
const DENIED: Decided = Decided { allowed: false, outcome: Outcome::Denied, policy_id: Some(5), unchecked: false, cacheable: true };

fn folding(c: &mut Criterion) {
    let mut group = c.benchmark_group("audit_fold");
    group.throughput(Throughput::Elements(1));
    let auditor = Auditor::new(10_000);
    let (ctx, action, now) = (context("alice"), write("orders"), Instant::now());
    group.bench_function("identical_allowed_access", |b| b.iter(|| auditor.record(&ctx, &action, &ALLOWED, 1, now)));
    let topics: Vec<String> = (0..1000).map(|i| format!("orders-{i}")).collect();
    let mut i = 0;
    group.bench_function("allowed_access_1000_groups", |b| {
        b.iter(|| {
            i = (i + 1) % topics.len();
            auditor.record(&ctx, &write(&topics[i]), &ALLOWED, 1, now)
        })
    });
    group.finish();

    // A flood of distinct refusals: the tables never hold more than the capacity.
    let mut flood = c.benchmark_group("refusal_flood");
    let names: Vec<String> = (0..1_000_000).map(|i| format!("t{i}")).collect();
    flood.throughput(Throughput::Elements(names.len() as u64));
    flood.sample_size(10);
    flood.bench_function("1M_distinct_refusals_into_10k_groups", |b| {
        b.iter_batched(
            || Auditor::new(10_000),
            |auditor| {
                let mallory = context("mallory");
                for name in &names {
                    auditor.record(&mallory, &write(name), &DENIED, 1, now);
                }
                assert_eq!(auditor.queued(), 10_000);
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
    targets = folding
}
criterion_main!(benches);
