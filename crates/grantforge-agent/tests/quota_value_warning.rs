//! What the quota table logs of an operator's value too small for Kafka to enforce: a test binary
//! of its own, so that no other test drains the process's log queue meanwhile.

use std::time::{Duration, Instant};

use grantforge_agent::logging::{self, LogLevel, LogRecord};
use grantforge_agent::quotas::{self, Entity, Part, QuotaType};

fn warnings_naming(records: &[LogRecord], name: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.level == LogLevel::Warn && r.message.contains(name))
        .map(|r| r.message.clone())
        .collect()
}

fn drain_for(duration: Duration) -> Vec<LogRecord> {
    let mut records = Vec::new();
    let deadline = Instant::now() + duration;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        records.extend(logging::drain());
    }
    records
}

#[test]
fn an_operators_value_too_small_for_kafka_is_used_as_set_with_one_warn_naming_its_entity() {
    logging::install();
    let quotas = quotas::shared();
    let (produce, mutation) = (QuotaType::Produce, QuotaType::ControllerMutation);
    let tiny = Entity::user("tiny-user");
    // Delivered twice, as a combined node's two callback instances deliver every entity.
    assert!(quotas.update(&tiny, produce, 10.0));
    assert!(!quotas.update(&tiny, produce, 10.0));
    // A name that tries to start a log line of its own.
    let forged = "forger\nINFO grantforge: all is well";
    quotas.update(&Entity::user(forged), produce, 1.0);
    // Values Kafka enforces: no WARN.
    quotas.update(&Entity::user("fine-user"), mutation, 0.2);
    quotas.update(&Entity::of(Some(Part::Default), None), produce, 512.0);

    let records = drain_for(Duration::from_millis(800));
    let warned = warnings_naming(&records, "tiny-user");
    assert_eq!(warned.len(), 1, "{records:?}");
    assert!(
        warned[0].starts_with("the producer_byte_rate of <user tiny-user> is 10, below the 49")
            && warned[0].contains("(socket.request.max.bytes)")
            && warned[0].contains("used as set"),
        "{}",
        warned[0]
    );
    let forged_lines = warnings_naming(&records, "forger");
    assert_eq!(forged_lines.len(), 1, "{records:?}");
    assert!(
        !forged_lines[0].contains('\n') && forged_lines[0].contains(r"forger\nINFO"),
        "the name's line break is written escaped: {}",
        forged_lines[0]
    );
    assert!(
        warnings_naming(&records, "fine-user").is_empty(),
        "{records:?}"
    );
    assert!(
        warnings_naming(&records, "default user").is_empty(),
        "{records:?}"
    );
    assert_eq!(
        quotas.resolve(produce, "tiny-user", "any").limit,
        Some(10.0),
        "used as set"
    );
    assert_eq!(
        quotas.resolve(mutation, "fine-user", "any").limit,
        Some(0.2)
    );
    assert_eq!(quotas.resolve(produce, "someone", "any").limit, Some(512.0));
}
