//! Kafka's `AuthorizerBenchmark` ACL set (jmh-benchmarks/.../acl/AuthorizerBenchmark.java), rebuilt
//! as a GrantForge snapshot of the `kafka` service type:
//!
//! * one policy per resource `foo-bar35_resource-<id>`: a `group` if `id % 10 == 0`, else a `topic`;
//!   the value ends in `*` (Kafka's PREFIXED) if `id % 5 == 0`; one allow item for `read` naming
//!   `test-user`, `test-user1`, ... (`aclCount` users);
//! * the prefixed `foo-bar35_resource-` entries from hosts `127.0.0.<i>` (hostPreCount 10, as in
//!   Kafka 4.x) and the `*` entries from hosts `127.0.0<i>` (resourceCount/10 of them, `127.0.0.2`
//!   skipped): one policy each, with an `ip` condition listing the hosts.
//!
//! Measured: `evaluate` of WRITE on topic `foo-bar35_resource-95` by `test-user` from 127.0.0.1
//! (Kafka's deliberate worst case: every candidate grants READ only), `holds_on_some_resource`
//! (Kafka's `authorizeByResourceType(READ, TOPIC)` from 127.0.0.2), and parse + build at 200k.
//!
//! `GF_BENCH_QUICK=1` runs only the 10k sets.

use std::collections::HashSet;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant as Clock};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use grantforge_engine::{
    AccessRequest, CompiledCondition, ConditionEvaluator, Evaluators, Instant, PolicyEngine,
    Snapshot,
};

struct Client {
    address: String,
}

struct IpSet;
struct Addresses(HashSet<String>);

impl ConditionEvaluator<Client> for IpSet {
    fn compile(&self, values: &[String]) -> Result<Box<dyn CompiledCondition<Client>>, String> {
        Ok(Box::new(Addresses(values.iter().cloned().collect())))
    }
}

impl CompiledCondition<Client> for Addresses {
    fn holds(&self, client: &Client) -> Result<bool, String> {
        Ok(self.0.contains(&client.address))
    }
}

fn evaluators() -> Evaluators<Client> {
    let mut evaluators = Evaluators::new();
    evaluators.register("ip-range", Arc::new(IpSet));
    evaluators
}

/// The `kafka` service type, as a server serves it.
const DEFINITION: &str = include_str!("../../grantforge-kafka/kafka-service-type.json");

fn policy(
    out: &mut String,
    id: usize,
    level: &str,
    value: &str,
    users: &[String],
    hosts: &[String],
) {
    let quoted = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    let conditions = if hosts.is_empty() {
        String::new()
    } else {
        format!(r#"{{"type":"ip-range","values":[{}]}}"#, quoted(hosts))
    };
    out.push_str(&format!(
        r#"{{"id":"{id}","name":"acl-{id}","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"{level}":{{"values":["{value}"],"excludes":false,"recursive":false}}}},"allow":[{{"users":[{}],"groups":[],"roles":[],"accessTypes":["read"],"conditions":[{conditions}],"maskType":null,"maskValue":null,"rowFilter":null}}],"allowExceptions":[],"deny":[],"denyExceptions":[],"validity":[]}}}}"#,
        quoted(users)
    ));
}

/// The snapshot bytes of Kafka's benchmark ACL set.
fn snapshot_json(resources: usize, acls: usize) -> String {
    let users: Vec<String> = (0..acls)
        .map(|i| {
            if i == 0 {
                "test-user".to_string()
            } else {
                format!("test-user{i}")
            }
        })
        .collect();
    let mut out = String::with_capacity(resources * (200 + acls * 14));
    out.push_str(r#"{"format":1,"service":"kafka-bench","serviceType":"kafka","typeVersion":1,"serviceEnabled":true,"policyVersion":1,"definition":"#);
    out.push_str(DEFINITION);
    out.push_str(r#","policies":["#);
    for id in 0..resources {
        let level = if id % 10 == 0 { "group" } else { "topic" };
        let value = format!(
            "foo-bar35_resource-{id}{}",
            if id % 5 == 0 { "*" } else { "" }
        );
        policy(&mut out, id + 1, level, &value, &users, &[]);
        out.push(',');
    }
    let prefixed_hosts: Vec<String> = (0..10).map(|i| format!("127.0.0.{i}")).collect();
    policy(
        &mut out,
        resources + 1,
        "topic",
        "foo-bar35_resource-*",
        &users[..1],
        &prefixed_hosts,
    );
    out.push(',');
    let wildcard_hosts: Vec<String> = (0..resources / 10)
        .map(|i| format!("127.0.0{i}"))
        .filter(|h| h != "127.0.0.2")
        .collect();
    policy(
        &mut out,
        resources + 2,
        "topic",
        "*",
        &users[..1],
        &wildcard_hosts,
    );
    out.push_str(r#"],"roles":{},"groups":{}}"#);
    out
}

fn load(json: &str) -> PolicyEngine<Client> {
    let snapshot = Snapshot::parse(json.as_bytes()).expect("the benchmark snapshot parses");
    PolicyEngine::build(&snapshot, &evaluators()).expect("the benchmark snapshot builds")
}

fn sizes() -> Vec<usize> {
    if std::env::var_os("GF_BENCH_QUICK").is_some() {
        vec![10_000]
    } else {
        vec![10_000, 50_000, 200_000]
    }
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn decisions(c: &mut Criterion) {
    let now = Instant::now();
    let mut group = c.benchmark_group("authorizer");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for resources in sizes() {
        for acls in [10, 50] {
            let engine = load(&snapshot_json(resources, acls));
            let client = Client {
                address: "127.0.0.1".to_string(),
            };
            let resource = [("topic", "foo-bar35_resource-95")];
            let request = AccessRequest::new(&resource, "write", "test-user", now, &client);
            assert!(!engine.evaluate(&request).unwrap().is_allowed());
            let id = format!("{resources}/{acls}");
            group.bench_with_input(
                BenchmarkId::new("evaluate_write_topic", &id),
                &request,
                |b, request| b.iter(|| engine.evaluate(black_box(request)).unwrap()),
            );
            let other = Client {
                address: "127.0.0.2".to_string(),
            };
            assert!(engine
                .holds_on_some_resource("topic", "read", "test-user", &[], &[], now, &other)
                .unwrap());
            group.bench_function(
                BenchmarkId::new("holds_on_some_resource_read_topic", &id),
                |b| {
                    b.iter(|| {
                        engine
                            .holds_on_some_resource(
                                black_box("topic"),
                                "read",
                                "test-user",
                                &[],
                                &[],
                                now,
                                &other,
                            )
                            .unwrap()
                    })
                },
            );
        }
    }
    group.finish();
}

fn loading(c: &mut Criterion) {
    let resources = *sizes().last().unwrap_or(&10_000);
    let json = snapshot_json(resources, 10);
    // One measured load with its memory, for the report (criterion measures time only).
    let before = peak_rss_kib();
    let start = Clock::now();
    let snapshot = Snapshot::parse(json.as_bytes()).expect("the benchmark snapshot parses");
    let parsed = start.elapsed();
    let after_parse = peak_rss_kib();
    let engine =
        PolicyEngine::build(&snapshot, &evaluators()).expect("the benchmark snapshot builds");
    let took = start.elapsed();
    let after = peak_rss_kib();
    if let (Some(before), Some(after_parse), Some(after)) = (before, after_parse, after) {
        eprintln!(
            "parse+build of {resources} policies ({} MiB of JSON): parse {parsed:?}, total {took:?}; peak RSS {} MiB, after parse {} MiB, after build {} MiB",
            json.len() >> 20,
            before >> 10,
            after_parse >> 10,
            after >> 10
        );
    }
    drop(engine);
    drop(snapshot);
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(5));
    group.bench_function(BenchmarkId::new("parse_and_build", resources), |b| {
        b.iter(|| load(black_box(&json)))
    });
    group.finish();
}

criterion_group!(benches, loading, decisions);
criterion_main!(benches);
