//! What a decision reads of a request (the decision cache keys on exactly that) follows the
//! engine's own condition-to-evaluator mapping: the condition's evaluator, not its name.

use grantforge_engine::Instant;
use grantforge_kafka::{ConditionReads, KafkaPolicies};
use serde_json::{json, Value};

const E2E: &str = include_str!("../../../tests/fixtures/snapshots/e2e.json");

/// The e2e snapshot with `conditions` as its definition's conditions and one policy whose allow
/// item uses `used` (a condition name) with `values`.
fn snapshot(conditions: Value, used: &[(&str, &str)]) -> Vec<u8> {
    let mut snapshot: Value = serde_json::from_str(E2E).unwrap();
    snapshot["definition"]["conditions"] = conditions;
    let item_conditions: Vec<Value> = used
        .iter()
        .map(|(name, value)| json!({"type": name, "values": [value]}))
        .collect();
    let policies = snapshot["policies"].as_array_mut().unwrap();
    for policy in policies.iter_mut() {
        for branch in ["allow", "allowExceptions", "deny", "denyExceptions"] {
            for item in policy["document"][branch].as_array_mut().unwrap() {
                item["conditions"] = json!([]);
            }
        }
    }
    policies[0]["document"]["allow"][0]["conditions"] = Value::Array(item_conditions);
    serde_json::to_vec(&snapshot).unwrap()
}

fn reads(conditions: Value, used: &[(&str, &str)]) -> ConditionReads {
    KafkaPolicies::load(&snapshot(conditions, used), Instant::now())
        .unwrap()
        .reads
}

#[test]
fn a_condition_reads_what_its_evaluator_reads_whatever_its_name() {
    let only_address = ConditionReads {
        client_address: true,
        ..Default::default()
    };
    assert_eq!(
        reads(
            json!([{"name": "net", "evaluator": "ip-range"}]),
            &[("net", "10.0.0.0/8")]
        ),
        only_address
    );
    let only_listener = ConditionReads {
        listener: true,
        ..Default::default()
    };
    assert_eq!(
        reads(
            json!([{"name": "ip-range", "evaluator": "listener"}]),
            &[("ip-range", "INTERNAL")]
        ),
        only_listener
    );
    let only_client_id = ConditionReads {
        client_id: true,
        ..Default::default()
    };
    assert_eq!(
        reads(
            json!([{"name": "net", "evaluator": "client-id"}]),
            &[("net", "etl-*")]
        ),
        only_client_id
    );
}

#[test]
fn conditions_no_item_uses_or_no_evaluator_serves_read_nothing() {
    let all = json!([{"name": "ip", "evaluator": "ip-range"}, {"name": "l", "evaluator": "listener"}, {"name": "odd", "evaluator": "geo"}]);
    assert_eq!(
        reads(all.clone(), &[]),
        ConditionReads::default(),
        "defined but unused"
    );
    assert_eq!(
        reads(all.clone(), &[("odd", "x")]),
        ConditionReads::default(),
        "no evaluator: a constant answer"
    );
    let both = ConditionReads {
        client_address: true,
        listener: true,
        ..Default::default()
    };
    assert_eq!(reads(all, &[("ip", "10.0.0.1"), ("l", "EXTERNAL")]), both);
}

#[test]
fn a_condition_name_defined_twice_is_refused_naming_the_field() {
    let twice =
        json!([{"name": "net", "evaluator": "listener"}, {"name": "net", "evaluator": "ip-range"}]);
    let Err(error) =
        KafkaPolicies::load(&snapshot(twice, &[("net", "10.0.0.0/8")]), Instant::now())
    else {
        panic!("a definition naming `net` twice must be refused");
    };
    let text = error.to_string();
    assert!(
        text.contains("definition.conditions[1].name") && text.contains("defined twice"),
        "{text}"
    );
}
