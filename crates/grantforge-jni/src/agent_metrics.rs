//! The metrics payload: the answer of `stats`, read by `AgentMetrics.java`. It describes itself, so
//! the shim publishes whatever it lists (the MBean's attributes, Kafka's plugin metrics) and a new
//! metric is one line of the table in `grantforge_agent::metrics` (`crates/grantforge-agent/src/metrics.rs`).
//!
//! All integers little-endian; a string is a u32 byte length followed by UTF-8 bytes (`wire.rs`).
//!
//! ```text
//! metrics := str instance  u32 count  metric{count}
//! metric  := str name  str attribute  str description  u8 kind  value
//!            (name: Kafka's plugin metric, kebab case; attribute: the MBean attribute, camel case)
//! value   := i64                        kind 0: a number (JMX type long)
//!          | str                        kind 1: a text (JMX type java.lang.String)
//! ```
//!
//! `instance` names the MBean and is no metric. The metrics come in the table's order.
//!
//! Golden bytes: `tests/fixtures/jni/metrics.bin`, which `AgentMetricsGoldenTest.java` decodes.

use grantforge_agent::metrics::{Metric, Stats, Value, METRICS};

use crate::wire::put_str;

const NUMBER: u8 = 0;
const TEXT: u8 = 1;

/// The agent's metrics.
pub(crate) fn encode(stats: &Stats) -> Vec<u8> {
    encode_list(&stats.instance, METRICS, stats)
}

/// Any list of metrics in the same layout (the quota table's too, `NativeQuotas.stats`).
pub(crate) fn encode_list<S>(instance: &str, metrics: &[Metric<S>], stats: &S) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + metrics.len() * 96);
    put_str(&mut out, instance);
    out.extend_from_slice(&(metrics.len() as u32).to_le_bytes());
    for metric in metrics {
        put_str(&mut out, metric.name);
        put_str(&mut out, &metric.attribute());
        put_str(&mut out, metric.description);
        match (metric.value)(stats) {
            Value::Number(n) => {
                out.push(NUMBER);
                out.extend_from_slice(&n.to_le_bytes());
            }
            Value::Text(text) => {
                out.push(TEXT);
                put_str(&mut out, text);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::golden;

    #[test]
    fn golden_metrics_are_the_example_the_java_test_decodes() {
        // Each metric a value of its own, so that the Java test sees which is which; a metric added
        // later is 0 here until it is given one (then regenerate with GF_UPDATE_GOLDEN=1).
        #[allow(clippy::needless_update)]
        let stats = Stats {
            decisions_allowed: 1,
            decisions_denied: 2,
            cache_hits: 3,
            cache_misses: 4,
            cache_size: 5,
            snapshot_version: -1,
            snapshot_age_seconds: 7,
            memberships_age_seconds: 18,
            snapshot_state: 21,
            server_reachable: 19,
            refused_without_snapshot: 20,
            heartbeat_failures: 8,
            audit_accesses: 17,
            audit_queued: 9,
            audit_spooled_bytes: 10,
            audit_topic_spooled_bytes: 26,
            audit_topic_spooled_files: 27,
            audit_sent: 11,
            audit_dropped: 12,
            audit_by_user: "alice\t7\t0".into(),
            audit_by_sink: "topic\talice\t7\t7\t0".into(),
            shadow_agreements: 13,
            shadow_grantforge_refuses: 14,
            shadow_grantforge_allows: 15,
            shadow_not_compared: 16,
            shadow_overflow: 22,
            shadow_untracked: 23,
            shadow_disagreements: "5\tshadow\t…".into(),
            hybrid_acl_decisions: 24,
            hybrid_acl_share_percent: 25,
            last_error: "the server cannot be reached (é)".into(),
            instance: "broker-1".into(),
            ..Stats::default()
        };
        golden::check("metrics.bin", &encode(&stats));
    }
}
