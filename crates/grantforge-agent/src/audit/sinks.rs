//! The audit's sinks: the log writer, and each sink's account per user ([`SinkAccounts`]). The
//! policy source's wrapper `crate::source::routed` hands events to them as their routes say.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::audit::delivery::topic::TopicChannel;
use crate::audit::delivery::DeliveryStats;
use crate::audit::events::AccessEvent;
use crate::audit::ledger::{sinks_report, Ledger};
use crate::audit::standard::{cloud_event, ocsf_api_activity, Producer};
use crate::config::routes::{Routes, Sink};
use crate::config::AuditLogFormat;

/// Writes events to the log `grantforge.audit`, one line each, in `format`.
pub(crate) fn write_log(events: &[AccessEvent], format: AuditLogFormat, instance: &str) {
    let producer = Producer {
        instance,
        version: env!("CARGO_PKG_VERSION"),
    };
    for event in events {
        let line = match format {
            AuditLogFormat::Kafka => event.log_line(),
            AuditLogFormat::Ocsf => ocsf_api_activity(event, &producer).to_string(),
            AuditLogFormat::CloudEvents => cloud_event(event, &producer).to_string(),
        };
        tracing::info!(target: "grantforge.audit", "{line}");
    }
}

/// Each sink's account per user, and what the topic sink delivers and loses.
pub struct SinkAccounts {
    pub routes: Routes,
    /// The server's delivery (its `sink` is the GrantForge sink's account).
    pub grantforge: Arc<DeliveryStats>,
    pub topic: Arc<DeliveryStats>,
    pub log: Arc<Ledger>,
    /// Where the shim's producer takes the topic sink's batches, when it is a sink.
    pub channel: Option<Arc<TopicChannel>>,
}

impl SinkAccounts {
    /// The metric `audit-by-sink`: each sink's users (`rows` of them), tab-separated: sink, user,
    /// accesses routed to it, delivered, dropped.
    pub fn report(&self, rows: usize) -> String {
        let sinks = self.routes.sinks();
        let ledgers: Vec<(&str, &Ledger)> = Sink::ALL
            .into_iter()
            .filter(|sink| sinks.contains(*sink))
            .map(|sink| (sink.name(), self.ledger(sink)))
            .collect();
        sinks_report(&ledgers, rows)
    }

    fn ledger(&self, sink: Sink) -> &Ledger {
        match sink {
            Sink::GrantForge => &self.grantforge.sink,
            Sink::Topic => &self.topic.sink,
            Sink::Log => &self.log,
        }
    }

    /// The events of `events` that go to `sink`, counted in its account as routed to it.
    pub(crate) fn route(&self, events: &[AccessEvent], sink: Sink) -> Vec<AccessEvent> {
        let selected = self.routes.select(events, sink);
        let users: Vec<(String, u64)> = selected.iter().map(|e| (e.user(), e.count)).collect();
        self.ledger(sink)
            .evented(users.iter().map(|(user, n)| (user.as_str(), *n)));
        selected
    }

    /// Accesses the topic sink lost (in `audit-dropped` with the others).
    pub fn topic_dropped(&self) -> u64 {
        self.topic.dropped.load(Ordering::Relaxed)
    }
}

/// Events in the ledgers' words: user and count.
pub(crate) fn as_travelling(events: &[AccessEvent]) -> Vec<Value> {
    events
        .iter()
        .map(|e| json!({"user": e.user(), "count": e.count}))
        .collect()
}
