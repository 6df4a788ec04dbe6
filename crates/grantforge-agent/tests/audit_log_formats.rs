//! Offline mode's audit log in the standard schemas (`grantforge.audit.log.format`): a real
//! agent on the e2e policy file, its own thread writing the log, each record read back from the
//! process's log queue and validated against the published schema (`tests/fixtures/schemas/`). A
//! test binary of its own, so that no other test drains the queue meanwhile.

mod common;

use std::collections::BTreeMap;

use common::*;
use grantforge_agent::logging::{self, LogRecord};
use grantforge_agent::{registry, AgentConfig};
use grantforge_kafka::Operation;
use serde_json::Value;

/// What the published schema `name` (`tests/fixtures/schemas/`) finds wrong with `record`.
fn schema_errors(name: &str, record: &Value) -> Vec<String> {
    let path = common::in_crate("../../tests/fixtures/schemas").join(name);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(record)
        .map(|e| e.to_string())
        .collect()
}

fn audit_records(records: &[LogRecord]) -> Vec<Value> {
    records
        .iter()
        .filter(|r| r.logger == "grantforge.audit")
        .map(|r| serde_json::from_str(&r.message).unwrap_or_else(|e| panic!("{e}: {}", r.message)))
        .collect()
}

/// Bob's refused write, audited at once, as `format` writes it.
fn bobs_refusal_as(format: &str) -> Value {
    let fixture = common::in_crate("../../tests/fixtures/snapshots/e2e.json");
    let fixture = fixture.display().to_string();
    let settings: BTreeMap<String, String> = [
        ("grantforge.policy.file", fixture.as_str()),
        ("grantforge.instance", "broker-7"),
        ("grantforge.audit.log.format", format),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let agent = registry::open(AgentConfig::from_settings(&settings).unwrap()).unwrap();
    assert!(!access(&agent, "bob", "orders", Operation::Write));
    let mut records = Vec::new();
    drain_logs_until(&mut records, PATIENCE, |r| {
        r.iter().any(|r| r.logger == "grantforge.audit")
    });
    registry::release(&agent);
    let audited = audit_records(&records);
    assert_eq!(audited.len(), 1, "{records:?}");
    audited.into_iter().next().unwrap()
}

#[test]
fn the_audit_log_writes_valid_ocsf_and_cloudevents_records() {
    logging::install();

    let ocsf = bobs_refusal_as("ocsf");
    let errors = schema_errors("ocsf-1.8.0-api_activity.json", &ocsf);
    assert_eq!(errors, Vec::<String>::new(), "{ocsf:#}");
    assert_eq!(ocsf["actor"]["user"]["name"], "bob");
    assert_eq!(ocsf["actor"]["authorizations"][0]["decision"], "Denied");
    assert_eq!(ocsf["resources"][0]["name"], "orders");
    assert_eq!(ocsf["metadata"]["log_provider"], "broker-7");

    let cloud = bobs_refusal_as("cloudevents");
    let errors = schema_errors("cloudevents-1.0.json", &cloud);
    assert_eq!(errors, Vec::<String>::new(), "{cloud:#}");
    assert_eq!(cloud["source"], "/grantforge/kafka/broker-7");
    assert_eq!(cloud["data"]["user"], "bob");
    assert_eq!(cloud["data"]["outcome"], "DENIED");
}
