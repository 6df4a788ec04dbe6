//! A policy source with the audit's sinks around it ([`Routed`]): each access event goes to the
//! sinks its route names (`crate::config::routes`): the source's own (GrantForge in server mode,
//! the log offline), the log, and the topic sink ([`TopicSink`]), whose batches the Java shim's
//! producer writes (`audit/delivery/topic.rs`) and which spools what its topic cannot take, as the
//! server's delivery does. Each sink keeps its own account per user (`crate::audit::sinks`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::audit::delivery::topic::{TopicChannel, Written};
use crate::audit::delivery::{DeliveryStats, Post, Shipper, RESEND_BUDGET};
use crate::audit::events::AccessEvent;
use crate::audit::ledger::{accesses_in, Ledger};
use crate::audit::sinks::{as_travelling, write_log, SinkAccounts};
use crate::audit::standard::{cloud_event, ocsf_api_activity, Producer};
use crate::client::CallError;
use crate::config::routes::Sink;
use crate::config::{AgentConfig, AuditLogFormat, PolicySource, TopicSettings};
use crate::source::server::failures::back_off;
use crate::source::{AuditAtClose, Holder, Source};

/// The topic sink: events as records of its format, delivered through the channel by batches,
/// spooled in its own spool while the topic cannot be written and sent again after a back-off.
pub(crate) struct TopicSink {
    settings: TopicSettings,
    instance: String,
    shipper: Shipper,
    channel: Arc<TopicChannel>,
    failures: u32,
    next_try: Option<Instant>,
    flush_interval: Duration,
}

impl TopicSink {
    fn new(
        settings: TopicSettings,
        instance: &str,
        shipper: Shipper,
        channel: Arc<TopicChannel>,
        flush_interval: Duration,
    ) -> TopicSink {
        TopicSink {
            settings,
            instance: instance.to_string(),
            shipper,
            channel,
            failures: 0,
            next_try: None,
            flush_interval,
        }
    }

    /// An event as it travels and is spooled: its id, user and count (the ledgers' words) and the
    /// record the topic takes.
    fn travelling(&self, event: &AccessEvent) -> Value {
        let producer = Producer {
            instance: &self.instance,
            version: env!("CARGO_PKG_VERSION"),
        };
        let record = match self.settings.format {
            AuditLogFormat::Ocsf => ocsf_api_activity(event, &producer),
            AuditLogFormat::Kafka | AuditLogFormat::CloudEvents => cloud_event(event, &producer),
        };
        json!({"eventId": event.event_id, "user": event.user(), "count": event.count, "record": record})
    }

    /// Hands `events` on (after the spool, unless backing off); `closing`: only spooled, for the
    /// next start, since the producer closes with the agent.
    fn hand_on(&mut self, events: &[AccessEvent], retry: bool, closing: bool) {
        let travelling: Vec<Value> = events.iter().map(|e| self.travelling(e)).collect();
        if closing {
            self.shipper.spool_only(&travelling);
            return;
        }
        if travelling.is_empty() && !retry && !self.shipper.has_backlog() {
            return;
        }
        let backing_off = self.next_try.is_some_and(|at| Instant::now() < at);
        let (channel, timeout) = (&self.channel, self.settings.timeout);
        let post = |body: &Value| post_to(channel, timeout, body);
        let post: Post<'_> = &post;
        let shipper = &mut self.shipper;
        let shipped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shipper.ship_to(
                "the audit topic",
                post,
                &travelling,
                !backing_off,
                RESEND_BUDGET,
            )
        }));
        match shipped {
            Ok(true) => {
                self.failures = self.failures.saturating_add(1);
                let wait = back_off(self.failures, self.flush_interval);
                self.next_try = Some(Instant::now() + wait);
            }
            Ok(false) if !backing_off => {
                self.failures = 0;
                self.next_try = None;
            }
            Ok(false) => {}
            Err(panic) => {
                self.shipper.spool_in_flight();
                std::panic::resume_unwind(panic);
            }
        }
    }
}

/// Offers one body's records to the producer; its word as the server's delivery reads answers:
/// written, not now (spooled), or refused (400: the record it refuses is found and dropped).
fn post_to(channel: &TopicChannel, timeout: Duration, body: &Value) -> Result<Value, CallError> {
    let records = body["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .map(|e| {
                    let key = e["user"].as_str().unwrap_or_default().to_string();
                    (key, e["record"].to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    match channel.offer(records, timeout) {
        Written::All => Ok(Value::Null),
        Written::NotNow(why) => Err(CallError::Unreachable(why)),
        Written::Refused(why) => Err(CallError::Status {
            status: 400,
            detail: why,
        }),
    }
}

/// A policy source with the audit's sinks around it: rounds are the source's, access events go
/// where their routes say.
pub(crate) struct Routed {
    inner: Box<dyn Source>,
    /// The sink the source itself takes: GrantForge (server mode) or the log (offline).
    own: Sink,
    log_format: AuditLogFormat,
    instance: String,
    topic: Option<TopicSink>,
    accounts: Arc<SinkAccounts>,
}

impl Source for Routed {
    fn start(&mut self, agent: &dyn Holder) {
        self.inner.start(agent);
    }

    fn first_round_after(&self) -> Duration {
        self.inner.first_round_after()
    }

    fn round(&mut self, agent: &dyn Holder) -> Duration {
        self.inner.round(agent)
    }

    fn after_a_failed_round(&self) -> Duration {
        self.inner.after_a_failed_round()
    }

    fn hand_on(&mut self, events: &[AccessEvent], retry_spool: bool, closing: bool) {
        let own = self.accounts.route(events, self.own);
        if self.accounts.routes.sinks().contains(self.own) {
            self.inner.hand_on(&own, retry_spool, closing);
        }
        let logged = if self.own == Sink::Log {
            own
        } else {
            let logged = self.accounts.route(events, Sink::Log);
            write_log(&logged, self.log_format, &self.instance);
            logged
        };
        self.accounts.log.delivered(&as_travelling(&logged));
        let to_topic = self.accounts.route(events, Sink::Topic);
        if let Some(topic) = &mut self.topic {
            topic.hand_on(&to_topic, retry_spool, closing);
        }
    }

    fn has_backlog(&self) -> bool {
        self.inner.has_backlog() || self.topic.as_ref().is_some_and(|t| t.shipper.has_backlog())
    }

    /// The source's own way to keep events at close, for the events its route sends it; the
    /// others go to the topic sink's spool (through a writer of its own, as the source's) or the
    /// log.
    fn audit_at_close(&self) -> Option<AuditAtClose> {
        let inner = self.inner.audit_at_close();
        let topic = self.topic.as_ref().map(|t| {
            (
                t.shipper.spool_beside(),
                t.settings.clone(),
                t.instance.clone(),
            )
        });
        if inner.is_none() && topic.is_none() {
            return None;
        }
        let (own, accounts) = (self.own, Arc::clone(&self.accounts));
        let (log_format, instance) = (self.log_format, self.instance.clone());
        Some(Box::new(move |events: &[AccessEvent]| {
            let mut in_flight = 0;
            let mine = accounts.route(events, own);
            let logged = match &inner {
                Some(keep) => {
                    in_flight += keep(&mine);
                    accounts.route(events, Sink::Log)
                }
                None => mine,
            };
            write_log(&logged, log_format, &instance);
            accounts.log.delivered(&as_travelling(&logged));
            if let Some((beside, settings, instance)) = &topic {
                let to_topic = accounts.route(events, Sink::Topic);
                let held = beside.take_in_flight();
                in_flight += accesses_in(&held);
                let mut sink = TopicSink::new(
                    settings.clone(),
                    instance,
                    beside.open(),
                    Arc::default(),
                    Duration::ZERO,
                );
                sink.shipper.spool_only(&held);
                sink.hand_on(&to_topic, false, true);
            }
            in_flight
        }))
    }
}

/// `source` with the audit's sinks around it, as `config` names them, and their accounts; the
/// server's delivery (`delivery`) is the GrantForge sink's, `ledger` the audit's whole account.
pub(crate) fn route_audit(
    source: Box<dyn Source>,
    config: &AgentConfig,
    instance: &str,
    delivery: &Arc<DeliveryStats>,
    ledger: &Arc<Ledger>,
) -> (Box<dyn Source>, Arc<SinkAccounts>) {
    let own = match config.source {
        PolicySource::Server(_) => Sink::GrantForge,
        PolicySource::File(..) => Sink::Log,
    };
    let topic_stats = Arc::new(DeliveryStats {
        ledger: Arc::clone(ledger),
        ..DeliveryStats::default()
    });
    let channel = config
        .audit_topic
        .as_ref()
        .map(|_| Arc::new(TopicChannel::default()));
    let topic = config
        .audit_topic
        .as_ref()
        .zip(channel.as_ref())
        .map(|(settings, channel)| {
            let shipper = Shipper::new(
                instance,
                usize::try_from(config.audit_batch_size).unwrap_or(500),
                settings.spool_dir.clone(),
                config.audit_spool_limit_bytes,
                Arc::clone(&topic_stats),
            );
            TopicSink::new(
                settings.clone(),
                instance,
                shipper,
                Arc::clone(channel),
                config.audit_flush_interval,
            )
        });
    let accounts = Arc::new(SinkAccounts {
        routes: config.audit_routes.clone(),
        grantforge: Arc::clone(delivery),
        topic: topic_stats,
        log: Arc::default(),
        channel,
    });
    let routed = Routed {
        inner: source,
        own,
        log_format: config.audit_log_format,
        instance: instance.to_string(),
        topic,
        accounts: Arc::clone(&accounts),
    };
    (Box::new(routed), accounts)
}

#[cfg(test)]
mod tests {
    use crate::keys::Access;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::audit::events::tests::folded_produce;
    use crate::audit::ledger::Account;

    /// A source that takes nothing of the audit (offline mode's own sink is the log).
    struct NoRounds;

    impl Source for NoRounds {
        fn start(&mut self, _: &dyn Holder) {}
        fn first_round_after(&self) -> Duration {
            Duration::MAX
        }
        fn round(&mut self, _: &dyn Holder) -> Duration {
            Duration::MAX
        }
        fn after_a_failed_round(&self) -> Duration {
            Duration::MAX
        }
        fn hand_on(&mut self, _: &[AccessEvent], _: bool, _: bool) {}
    }

    fn routed(routes: &str) -> (Box<dyn Source>, Arc<SinkAccounts>, std::path::PathBuf) {
        let cache = std::env::temp_dir().join(format!(
            "gf-routed-{}-{:?}",
            std::process::id(),
            std::time::Instant::now()
        ));
        let mut settings: BTreeMap<String, String> = [
            ("grantforge.policy.file", "/x"),
            ("grantforge.audit.sinks", "topic,log"),
            ("grantforge.audit.topic.bootstrap.servers", "localhost:9092"),
            ("grantforge.audit.topic.principal", "User:auditor"),
            ("grantforge.audit.topic.timeout.ms", "100"),
            ("grantforge.audit.flush.interval.ms", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        settings.insert("grantforge.cache.dir".into(), cache.display().to_string());
        if !routes.is_empty() {
            settings.insert("grantforge.audit.routes".into(), routes.into());
        }
        let config = AgentConfig::from_settings(&settings).unwrap();
        let delivery = Arc::new(DeliveryStats::default());
        let (source, accounts) = route_audit(
            Box::new(NoRounds),
            &config,
            "broker-1",
            &delivery,
            &Arc::default(),
        );
        (source, accounts, cache)
    }

    fn events() -> Vec<AccessEvent> {
        let bob = AccessEvent {
            event_id: "e2".into(),
            access: Access {
                principal_name: "bob".into(),
                ..folded_produce().access
            },
            allowed: false,
            count: 1,
            ..folded_produce()
        };
        vec![folded_produce(), bob]
    }

    /// A producer thread that writes every batch it takes, until told to stop.
    fn producer(channel: Arc<TopicChannel>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(batch) = channel.take(Duration::from_millis(10)) {
                    channel.ack(batch.id, Written::All);
                }
            }
        })
    }

    #[test]
    fn what_the_topic_cannot_take_is_spooled_then_delivered_and_each_sink_balances_per_user() {
        let (mut source, accounts, cache) = routed("");
        let alice = folded_produce().count;
        source.hand_on(&events(), false, false);
        let topic = accounts.topic.sink.accounts();
        let spooled = Account {
            accesses: alice,
            delivered: 0,
            dropped: 0,
        };
        assert_eq!(topic["alice"], spooled, "no producer: spooled, not lost");
        let waiting = |stats: &DeliveryStats| {
            let bytes = stats.spooled_bytes.load(Ordering::Relaxed);
            (bytes, stats.spooled_files.load(Ordering::Relaxed))
        };
        let (bytes, files) = waiting(&accounts.topic);
        assert!(
            bytes > 0 && files == 1,
            "the spool's metrics: {bytes} B in {files} files"
        );
        assert_eq!(accounts.log.accounts()["alice"].delivered, alice);
        let stop = Arc::new(AtomicBool::new(false));
        let writer = producer(
            Arc::clone(accounts.channel.as_ref().unwrap()),
            Arc::clone(&stop),
        );
        std::thread::sleep(Duration::from_millis(20)); // past the back-off
        source.hand_on(&[], true, false);
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        let topic = accounts.topic.sink.accounts();
        assert_eq!(topic["alice"].delivered, alice, "resent from the spool");
        assert_eq!(topic["bob"].delivered, 1);
        assert_eq!(waiting(&accounts.topic), (0, 0), "the spool drained");
        assert_eq!(
            accounts.report(10),
            format!("topic\talice\t{alice}\t{alice}\t0\ntopic\tbob\t1\t1\t0\nlog\talice\t{alice}\t{alice}\t0\nlog\tbob\t1\t1\t0")
        );
        std::fs::remove_dir_all(cache).unwrap();
    }

    #[test]
    fn a_route_keeps_events_from_the_sinks_it_does_not_name() {
        let (mut source, accounts, cache) = routed("any,denied,*=log");
        let stop = Arc::new(AtomicBool::new(false));
        let writer = producer(
            Arc::clone(accounts.channel.as_ref().unwrap()),
            Arc::clone(&stop),
        );
        source.hand_on(&events(), false, false);
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        let topic = accounts.topic.sink.accounts();
        assert!(
            !topic.contains_key("bob"),
            "bob's refusal goes to the log only"
        );
        assert_eq!(topic["alice"].delivered, folded_produce().count);
        assert_eq!(accounts.log.accounts()["bob"].delivered, 1);
        std::fs::remove_dir_all(cache).ok();
    }
}
