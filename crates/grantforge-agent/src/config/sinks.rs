//! The audit's sinks and routes, and the topic sink's settings, read and checked together: a sink
//! that cannot work with the rest of the settings stops the broker at start, naming the key.

use std::path::PathBuf;
use std::time::Duration;

use grantforge_kafka::RequestContext;

use super::routes::{Routes, Sink, Sinks};
use super::{unreadable, AuditLogFormat, ConfigError, PolicySource, Reader};
use crate::rules::SuperUsers;
use crate::settings;

/// The topic sink's settings (`grantforge.audit.topic*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicSettings {
    pub topic: String,
    /// How each record's value is written: OCSF or CloudEvents.
    pub format: AuditLogFormat,
    pub bootstrap_servers: String,
    /// Kafka client settings (credentials) for the producer and the admin client.
    pub producer_config: Option<PathBuf>,
    /// The principal the producer logs in as, parsed as `super.users` is.
    pub principal: SuperUsers,
    pub client_id: String,
    pub partitions: u64,
    pub replication_factor: u64,
    pub retention: Duration,
    /// How long a batch may take to be written before it is spooled.
    pub timeout: Duration,
    /// Where batches wait while the topic cannot be written.
    pub spool_dir: PathBuf,
}

impl TopicSettings {
    /// Whether a request is the sink's own (its principal and client id): never audited, or the
    /// audit of each write would be written again, without end.
    pub fn is_own_request(&self, context: &RequestContext) -> bool {
        context.conditions.client_id == self.client_id
            && self.principal.contains(&context.principal)
    }
}

/// Where the audit goes: the routes among its sinks, and the topic sink's settings when it is one.
pub(super) fn read(
    reader: &Reader<'_>,
    source: &PolicySource,
) -> Result<(Routes, Option<TopicSettings>), ConfigError> {
    let sinks_key = settings::AUDIT_SINKS.key;
    let sinks = match reader.text(&settings::AUDIT_SINKS) {
        Some(text) => Sinks::parse(&text, ',').map_err(|e| {
            ConfigError::new(
                sinks_key,
                format!("{e}; name one or more of grantforge, topic, log"),
            )
        })?,
        None => match source {
            PolicySource::Server(_) => Sinks::of(&[Sink::GrantForge]),
            PolicySource::File(..) => Sinks::of(&[Sink::Log]),
        },
    };
    if sinks.contains(Sink::GrantForge) && matches!(source, PolicySource::File(..)) {
        return Err(ConfigError::new(
            sinks_key,
            format!(
                "`grantforge` is the server's audit, and this node runs in offline mode ({}); use topic or log",
                settings::POLICY_FILE.key
            ),
        ));
    }
    let routes = Routes::parse(
        sinks,
        &reader.text(&settings::AUDIT_ROUTES).unwrap_or_default(),
    )
    .map_err(|e| ConfigError::new(settings::AUDIT_ROUTES.key, e))?;
    let topic = if sinks.contains(Sink::Topic) {
        Some(topic_settings(reader, source)?)
    } else {
        None
    };
    Ok((routes, topic))
}

fn topic_settings(
    reader: &Reader<'_>,
    source: &PolicySource,
) -> Result<TopicSettings, ConfigError> {
    let required = |setting: &settings::Setting, what: &str| {
        reader.text(setting).ok_or_else(|| {
            ConfigError::new(
                setting.key,
                format!(
                    "is required with the topic sink ({}); {what}",
                    settings::AUDIT_SINKS.key
                ),
            )
        })
    };
    let bootstrap_servers = required(
        &settings::AUDIT_TOPIC_BOOTSTRAP_SERVERS,
        "name the address of a listener the agent's principal logs in on, such as localhost:9092",
    )?;
    let principal_text = required(
        &settings::AUDIT_TOPIC_PRINCIPAL,
        "name the principal the producer logs in as, such as User:grantforge-audit",
    )?;
    let principal: SuperUsers = reader.get(&settings::AUDIT_TOPIC_PRINCIPAL)?;
    if principal_text.contains(';') {
        return Err(ConfigError::new(
            settings::AUDIT_TOPIC_PRINCIPAL.key,
            "names more than one principal; name the one the producer logs in as",
        ));
    }
    let cache_dir = match source {
        PolicySource::Server(server) => Some(server.cache_dir.clone()),
        PolicySource::File(..) => reader.text(&settings::CACHE_DIR).map(PathBuf::from),
    };
    let cache_dir = cache_dir.ok_or_else(|| {
        ConfigError::new(
            settings::CACHE_DIR.key,
            "is required with the topic sink: its spool keeps there what the topic cannot take yet; name a directory Kafka's account can write",
        )
    })?;
    let producer_config = reader
        .text(&settings::AUDIT_TOPIC_PRODUCER_CONFIG)
        .map(PathBuf::from);
    if let Some(file) = &producer_config {
        std::fs::read(file).map_err(|e| {
            ConfigError::new(
                settings::AUDIT_TOPIC_PRODUCER_CONFIG.key,
                format!(
                    "{}; give a properties file of Kafka client settings",
                    unreadable(&file.display(), &e)
                ),
            )
        })?;
    }
    let format: AuditLogFormat = reader.get(&settings::AUDIT_TOPIC_FORMAT)?;
    Ok(TopicSettings {
        topic: reader
            .text(&settings::AUDIT_TOPIC)
            .unwrap_or_else(|| Reader::default_of(&settings::AUDIT_TOPIC).to_string()),
        format,
        bootstrap_servers,
        producer_config,
        principal,
        client_id: reader
            .text(&settings::AUDIT_TOPIC_CLIENT_ID)
            .unwrap_or_else(|| Reader::default_of(&settings::AUDIT_TOPIC_CLIENT_ID).to_string()),
        partitions: reader.get(&settings::AUDIT_TOPIC_PARTITIONS)?,
        replication_factor: reader.get(&settings::AUDIT_TOPIC_REPLICATION_FACTOR)?,
        retention: reader.get(&settings::AUDIT_TOPIC_RETENTION)?,
        timeout: reader.get(&settings::AUDIT_TOPIC_TIMEOUT)?,
        spool_dir: cache_dir.join("audit-spool-topic"),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::config::AgentConfig;

    fn config(pairs: &[(&str, &str)]) -> Result<AgentConfig, ConfigError> {
        let mut settings: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        settings.insert("grantforge.policy.file".into(), "/x".into());
        AgentConfig::from_settings(&settings)
    }

    const TOPIC: [(&str, &str); 4] = [
        ("grantforge.audit.sinks", "topic,log"),
        ("grantforge.audit.topic.bootstrap.servers", "localhost:9092"),
        ("grantforge.audit.topic.principal", "User:auditor"),
        ("grantforge.cache.dir", "/tmp"),
    ];

    #[test]
    fn offline_mode_audits_to_the_log_by_default_and_the_topic_sink_reads_its_settings() {
        let plain = config(&[]).unwrap();
        assert_eq!(plain.audit_routes, Routes::to_all(Sinks::of(&[Sink::Log])));
        assert_eq!(plain.audit_topic, None);
        let topic = config(&TOPIC).unwrap().audit_topic.unwrap();
        assert_eq!(topic.topic, "_grantforge_audit");
        assert_eq!(topic.format, AuditLogFormat::CloudEvents);
        assert_eq!(topic.client_id, "grantforge-audit");
        assert_eq!((topic.partitions, topic.replication_factor), (3, 3));
        assert_eq!(topic.spool_dir, PathBuf::from("/tmp/audit-spool-topic"));
    }

    #[test]
    fn a_sink_that_cannot_work_stops_the_agent_naming_the_key() {
        let key_of = |pairs: &[(&str, &str)]| config(pairs).unwrap_err().key;
        assert_eq!(
            key_of(&[("grantforge.audit.sinks", "grantforge")]),
            "grantforge.audit.sinks"
        );
        assert_eq!(
            key_of(&[("grantforge.audit.sinks", "disk")]),
            "grantforge.audit.sinks"
        );
        assert_eq!(
            key_of(&TOPIC[..1]),
            "grantforge.audit.topic.bootstrap.servers"
        );
        assert_eq!(key_of(&TOPIC[..2]), "grantforge.audit.topic.principal");
        assert_eq!(key_of(&TOPIC[..3]), "grantforge.cache.dir");
        let mut two = TOPIC.to_vec();
        two.push(("grantforge.audit.topic.principal", "User:a;User:b"));
        two.swap_remove(2);
        assert_eq!(key_of(&two), "grantforge.audit.topic.principal");
        let mut kafka_format = TOPIC.to_vec();
        kafka_format.push(("grantforge.audit.topic.format", "kafka"));
        assert_eq!(key_of(&kafka_format), "grantforge.audit.topic.format");
        let mut routed = TOPIC.to_vec();
        routed.push(("grantforge.audit.routes", "any,any,*=grantforge"));
        assert_eq!(key_of(&routed), "grantforge.audit.routes");
    }
}
