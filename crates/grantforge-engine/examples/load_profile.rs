//! Loads a synthetic 200,000-policy snapshot (Kafka's benchmark ACL set) and reports the time and
//! peak memory of parsing and of building: `cargo run --release --example load_profile [policies] [users]`.

use std::time::Instant as Clock;

use grantforge_engine::{Evaluators, PolicyEngine, Snapshot};

fn snapshot_json(resources: usize, acls: usize) -> String {
    let users: Vec<String> = (0..acls)
        .map(|i| {
            if i == 0 {
                "\"test-user\"".into()
            } else {
                format!("\"test-user{i}\"")
            }
        })
        .collect();
    let mut out = String::from(
        r#"{"format":1,"service":"bench","serviceType":"kafka","typeVersion":1,"serviceEnabled":true,"policyVersion":1,"definition":{"resources":[{"name":"topic","parent":null,"matcher":"WILDCARD","caseSensitive":true},{"name":"group","parent":null,"matcher":"WILDCARD","caseSensitive":true}],"accessTypes":[{"name":"read","impliedGrants":["describe"]},{"name":"describe","impliedGrants":[]}],"conditions":[],"maskTypes":[]},"policies":["#,
    );
    for id in 0..resources {
        let level = if id % 10 == 0 { "group" } else { "topic" };
        let star = if id % 5 == 0 { "*" } else { "" };
        if id > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            r#"{{"id":"{}","name":"acl-{id}","type":"ACCESS","priority":"NORMAL","document":{{"resources":{{"{level}":{{"values":["foo-bar35_resource-{id}{star}"],"excludes":false,"recursive":false}}}},"allow":[{{"users":[{}],"groups":[],"roles":[],"accessTypes":["read"],"conditions":[],"maskType":null,"maskValue":null,"rowFilter":null}}],"allowExceptions":[],"deny":[],"denyExceptions":[],"validity":[]}}}}"#,
            id + 1,
            users.join(",")
        ));
    }
    out.push_str(r#"],"roles":{},"groups":{}}"#);
    out
}

fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or("VmHWM: 0 kB");
    line.split_whitespace()
        .nth(1)
        .and_then(|k| k.parse::<u64>().ok())
        .unwrap_or(0)
        >> 10
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (resources, acls) = (
        args.first().copied().unwrap_or(200_000),
        args.get(1).copied().unwrap_or(10),
    );
    let json = snapshot_json(resources, acls);
    let before = peak_rss_mib();
    let start = Clock::now();
    let snapshot = Snapshot::parse(json.as_bytes()).unwrap();
    let parsed = start.elapsed();
    let after_parse = peak_rss_mib();
    let engine = PolicyEngine::<()>::build(&snapshot, &Evaluators::new()).unwrap();
    let built = start.elapsed() - parsed;
    let after_build = peak_rss_mib();
    drop(snapshot);
    println!(
        "{resources} policies x {acls} users, {} MiB of JSON: parse {parsed:?} (+{} MiB), build {built:?} (+{} MiB), total +{} MiB peak; {} policies",
        json.len() >> 20,
        after_parse - before,
        after_build - after_parse,
        after_build - before,
        engine.policy_count()
    );
}
