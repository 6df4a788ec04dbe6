//! The topic sink's payloads, read by `AuditTopicWriter.java` (the shim's producer thread): the
//! sink's settings (`auditTopicSettings`) and one batch of records (`auditTopicTake`).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! settings := (str key  str value)*                   until the end; keys: topic, bootstrap.servers,
//!                                                     producer.config ("" for none), client.id,
//!                                                     partitions, replication.factor, retention.ms,
//!                                                     timeout.ms (numbers in decimal)
//! batch    := u64 id  (str key  str value)*           until the end; the key is the event's user,
//!                                                     the value the record (JSON)
//! ```
//!
//! Golden bytes: `tests/fixtures/jni/audit-topic-settings.bin` and `audit-topic-batch.bin`, which
//! `AuditTopicWriterGoldenTest.java` decodes.

use grantforge_agent::config::TopicSettings;
use grantforge_agent::TopicBatch;

use crate::wire::put_str;

pub(crate) fn encode_settings(settings: &TopicSettings) -> Vec<u8> {
    let producer_config = settings
        .producer_config
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let pairs = [
        ("topic", settings.topic.clone()),
        ("bootstrap.servers", settings.bootstrap_servers.clone()),
        ("producer.config", producer_config),
        ("client.id", settings.client_id.clone()),
        ("partitions", settings.partitions.to_string()),
        (
            "replication.factor",
            settings.replication_factor.to_string(),
        ),
        ("retention.ms", settings.retention.as_millis().to_string()),
        ("timeout.ms", settings.timeout.as_millis().to_string()),
    ];
    let mut out = Vec::new();
    for (key, value) in pairs {
        put_str(&mut out, key);
        put_str(&mut out, &value);
    }
    out
}

pub(crate) fn encode_batch(batch: &TopicBatch) -> Vec<u8> {
    let mut out = batch.id.to_le_bytes().to_vec();
    for (key, value) in &batch.records {
        put_str(&mut out, key);
        put_str(&mut out, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::wire::golden;
    use grantforge_agent::config::AgentConfig;

    #[test]
    fn golden_topic_settings_and_batch_are_the_examples_the_java_test_decodes() {
        let settings: BTreeMap<String, String> = [
            ("grantforge.policy.file", "/x"),
            ("grantforge.cache.dir", "/var/lib/kafka/grantforge-cache"),
            ("grantforge.audit.sinks", "topic"),
            ("grantforge.audit.topic.bootstrap.servers", "localhost:9092"),
            ("grantforge.audit.topic.principal", "User:grantforge-audit"),
            ("grantforge.audit.topic.replication.factor", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let config = AgentConfig::from_settings(&settings).unwrap();
        golden::check(
            "audit-topic-settings.bin",
            &encode_settings(config.audit_topic.as_ref().unwrap()),
        );
        let batch = TopicBatch {
            id: 7,
            records: vec![
                ("alice".into(), r#"{"specversion":"1.0"}"#.into()),
                ("bób".into(), String::new()),
            ],
        };
        golden::check("audit-topic-batch.bin", &encode_batch(&batch));
    }
}
