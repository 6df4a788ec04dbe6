//! The agent's settings, read from the map Kafka hands `Authorizer.configure`.
//!
//! Every `grantforge.*` key is validated here, at configure time, so a typo or a bad value stops
//! the broker at start with one message that names the key and the fix, instead of passing
//! silently. Keys of later features are validated already, so a configuration written for them
//! fails loudly rather than half-working. The keys, their defaults and ranges are the table of
//! [`crate::settings`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::lockout::{self, InterNodeListeners};
use crate::rules::SuperUsers;
use crate::settings::{self, Kind, Mode, Setting, SETTINGS};
use crate::trust::SigningKey;

pub mod routes;
mod sinks;

pub use sinks::TopicSettings;

/// Kafka's own key naming the principals that are never checked.
pub const SUPER_USERS: &str = "super.users";

/// Every key of Kafka's the agent reads (beside its own `grantforge.*` and each listener's
/// `listener.name.<listener>.ssl.client.auth`): the Java shim hands `configure` only these, so
/// none of Kafka's secrets reaches the agent.
pub const KAFKA_KEYS: [&str; 8] = [
    SUPER_USERS,
    lockout::INTER_BROKER_LISTENER_NAME,
    lockout::SECURITY_INTER_BROKER_PROTOCOL,
    lockout::CONTROLLER_LISTENER_NAMES,
    ALLOW_EVERYONE_IF_NO_ACL_FOUND,
    lockout::LISTENERS,
    lockout::LISTENER_SECURITY_PROTOCOL_MAP,
    lockout::SSL_CLIENT_AUTH,
];

/// The running Kafka's version (Kafka's `AppInfoParser.getVersion()`), which the Java shim adds
/// to the settings it hands over; a key of that name in the node's own settings never arrives.
pub const RUNNING_KAFKA_VERSION: &str = "kafka.version";

/// The longest `agentVersion` GrantForge takes in a heartbeat (`HeartbeatRequest`,
/// `@Size(max = 64)`).
const AGENT_VERSION_MAX: usize = 64;

/// The agent's version as its heartbeats say it, as GrantForge's own agents say theirs (the HDFS
/// agent's `HdfsAgentCompatibility.agentVersion`: `<version>-hadoop-<Hadoop's version>`):
/// `<version>-kafka-<running Kafka's version>`, cut to what the server takes (the agent's version
/// is kept whole, never half a character). Without Kafka's version (a test, a tool), the agent's.
pub fn agent_version(kafka: Option<&str>) -> String {
    let ours = env!("CARGO_PKG_VERSION");
    match kafka.map(str::trim).filter(|k| !k.is_empty()) {
        Some(kafka) => {
            let label = format!("{ours}-kafka-{kafka}");
            crate::utf16::clamp(&label, AGENT_VERSION_MAX).to_string()
        }
        None => ours.to_string(),
    }
}

/// `StandardAuthorizer`'s key to allow what no ACL names: read only to say it means nothing here.
pub const ALLOW_EVERYONE_IF_NO_ACL_FOUND: &str = "allow.everyone.if.no.acl.found";

/// A setting that cannot be used, with the key it concerns and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            key: key.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Where the policies come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicySource {
    /// Offline mode: a local GrantForge snapshot file, reloaded when it changes; with a signing key
    /// configured, the file must come with its signature (`<file>.sig`) and is verified.
    File(PathBuf, Option<SigningKey>),
    /// A GrantForge server, with a disk cache.
    Server(ServerSettings),
}

/// How to reach and trust a GrantForge server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSettings {
    /// Base URL ending in `/`; endpoint paths resolve relative to it (a path prefix is kept).
    pub url: String,
    pub token: Token,
    pub token_file: PathBuf,
    pub instance: String,
    pub host: String,
    pub cache_dir: PathBuf,
    /// The pinned signing key ([`settings::SIGNING_KEY_FILE`]); without it, trust on first use.
    pub signing_key: Option<SigningKey>,
    /// Extra CA certificates ([`settings::SSL_CA_FILE`]), PEM.
    pub ca_pem: Option<Vec<u8>>,
    /// The service's new name after a rename in GrantForge ([`settings::SERVICE_RENAMED_TO`]):
    /// a snapshot of it may follow one of another name.
    pub renamed_to: Option<String>,
    /// What heartbeats say the agent is ([`agent_version`]).
    pub agent_version: String,
}

/// The agent token: read once from its file, never logged, never in an error message.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
impl Token {
    pub(crate) fn for_tests(token: &str) -> Token {
        Token(token.to_string())
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<secret>)")
    }
}

/// The validated settings of one agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentConfig {
    pub source: PolicySource,
    /// `Type:name` strings from `super.users`, compared exactly as Kafka compares them.
    pub super_users: SuperUsers,
    /// The listeners brokers and controllers use among themselves, by Kafka's settings.
    pub inter_node_listeners: InterNodeListeners,
    pub instance: Option<String>,
    pub cache_dir: Option<PathBuf>,
    /// Where the JAR's `break-glass` command hands snapshots to the running node; `None`: nowhere.
    pub break_glass_dir: Option<PathBuf>,
    pub start_timeout: Duration,
    pub refresh_interval: Duration,
    /// The longest random wait before downloading a changed policy version.
    pub download_jitter: Duration,
    /// How often the snapshot in force is fetched again (conditionally) while the server's
    /// policy version stays: role and group changes do not move the version.
    pub revalidate_interval: Duration,
    /// How long the snapshot in force may go unconfirmed by the server before everything but the
    /// super users is refused (`staleness`); `None`: no limit.
    pub snapshot_max_age: Option<Duration>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    /// The longest a snapshot's whole body may take; each read of it still has `read_timeout`.
    pub snapshot_timeout: Duration,
    pub decision_cache_max_entries: u64,
    pub decision_cache_ttl: Duration,
    pub audit_fold_window: Duration,
    /// Whether super users' mutations are audited (they are never checked).
    pub audit_super_users_mutations: bool,
    /// How the audit log writes each event.
    pub audit_log_format: AuditLogFormat,
    /// The audit's sinks and the rules that route events among them.
    pub audit_routes: routes::Routes,
    /// The topic sink's settings, when it is one of the sinks.
    pub audit_topic: Option<TopicSettings>,
    /// Principals whose requests are decided but never audited, parsed as `super.users` is.
    pub audit_excluded_principals: SuperUsers,
    /// Hybrid mode: the resources whose questions the policies decide first.
    pub hybrid_scope: HybridScope,
    pub audit_queue_capacity: u64,
    pub audit_spool_limit_bytes: u64,
    pub audit_batch_size: u64,
    pub audit_flush_interval: Duration,
    pub snapshot_max_bytes: u64,
    /// How often offline mode looks at the policy file for changes.
    pub policy_file_poll_interval: Duration,
    /// Keys that are set but mean nothing with this configuration, and settings that make a
    /// footgun (`User:ANONYMOUS` a super user beside a PLAINTEXT listener): one line each for a
    /// WARN at start.
    pub ignored_settings: Vec<String>,
}

impl AgentConfig {
    /// Validates the settings Kafka handed `configure` (only `grantforge.*` keys and
    /// [`KAFKA_KEYS`] are read; Kafka's other keys are Kafka's business).
    pub fn from_settings(settings: &BTreeMap<String, String>) -> Result<AgentConfig, ConfigError> {
        // One rule for blank values: a key set to nothing is a mistake (a template that rendered
        // empty, say), never taken for its default; the message says how to get the default.
        for (key, value) in settings
            .iter()
            .filter(|(k, _)| k.starts_with("grantforge."))
        {
            let setting = settings::find(key).ok_or_else(|| unknown_key(key))?;
            if value.trim().is_empty() {
                return Err(blank(setting));
            }
        }
        let reader = Reader { settings };
        let source = reader.policy_source()?;
        let mut ignored_settings = ignored_settings(settings, &source);
        ignored_settings.extend(lockout::anonymous_super_user_warning(
            settings.get(SUPER_USERS).map(String::as_str).unwrap_or(""),
            |key| settings.get(key).map(String::as_str),
        ));
        // A key of server mode: offline, it is ignored with the others, not validated.
        let (audit_routes, audit_topic) = sinks::read(&reader, &source)?;
        let snapshot_max_age = match &source {
            PolicySource::Server(_) => reader.snapshot_max_age()?,
            PolicySource::File(..) => None,
        };
        Ok(AgentConfig {
            source,
            super_users: SuperUsers::parse(
                settings.get(SUPER_USERS).map(String::as_str).unwrap_or(""),
            )
            .map_err(|e| ConfigError::new(SUPER_USERS, e))?,
            inter_node_listeners: InterNodeListeners::from_kafka(
                settings
                    .get(lockout::INTER_BROKER_LISTENER_NAME)
                    .map(String::as_str),
                settings
                    .get(lockout::SECURITY_INTER_BROKER_PROTOCOL)
                    .map(String::as_str),
                settings
                    .get(lockout::CONTROLLER_LISTENER_NAMES)
                    .map(String::as_str),
            ),
            instance: reader.instance()?,
            cache_dir: reader.text(&settings::CACHE_DIR).map(PathBuf::from),
            break_glass_dir: reader.text(&settings::BREAK_GLASS_DIR).map(PathBuf::from),
            // parsed here only: the Java shim gets it from `open`'s answer
            start_timeout: reader.get(&settings::START_TIMEOUT)?,
            refresh_interval: reader.get(&settings::REFRESH_INTERVAL)?,
            download_jitter: reader.get(&settings::DOWNLOAD_JITTER)?,
            revalidate_interval: reader.get(&settings::REVALIDATE_INTERVAL)?,
            snapshot_max_age,
            connect_timeout: reader.get(&settings::CONNECT_TIMEOUT)?,
            read_timeout: reader.get(&settings::READ_TIMEOUT)?,
            snapshot_timeout: reader.get(&settings::SNAPSHOT_TIMEOUT)?,
            decision_cache_max_entries: reader.get(&settings::DECISION_CACHE_MAX_ENTRIES)?,
            decision_cache_ttl: reader.get(&settings::DECISION_CACHE_TTL)?,
            audit_fold_window: reader.get(&settings::AUDIT_FOLD_WINDOW)?,
            audit_super_users_mutations: reader.get(&settings::AUDIT_SUPER_USERS_MUTATIONS)?,
            audit_log_format: reader.get(&settings::AUDIT_LOG_FORMAT)?,
            audit_routes,
            audit_topic,
            audit_excluded_principals: reader.get(&settings::AUDIT_EXCLUDED_PRINCIPALS)?,
            hybrid_scope: reader.get(&settings::HYBRID_RESOURCE_PREFIXES)?,
            audit_queue_capacity: reader.get(&settings::AUDIT_QUEUE_CAPACITY)?,
            audit_spool_limit_bytes: reader.get(&settings::AUDIT_SPOOL_LIMIT_BYTES)?,
            audit_batch_size: reader.get(&settings::AUDIT_BATCH_SIZE)?,
            audit_flush_interval: reader.get(&settings::AUDIT_FLUSH_INTERVAL)?,
            snapshot_max_bytes: reader.get(&settings::SNAPSHOT_MAX_BYTES)?,
            policy_file_poll_interval: reader.get(&settings::POLICY_FILE_POLL_INTERVAL)?,
            ignored_settings,
        })
    }
}

/// Why a file cannot be read, in the same words for every file an operator names: "does not
/// exist", "is not readable by this account", or the system's own error.
pub(crate) fn unreadable(file: &dyn fmt::Display, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{file} does not exist"),
        std::io::ErrorKind::PermissionDenied => format!("{file} is not readable by this account"),
        _ => format!("cannot read {file}: {e}"),
    }
}

fn blank(setting: &Setting) -> ConfigError {
    let fix = match setting.default {
        settings::Fallback::Value(default) | settings::Fallback::Derived(default) => {
            format!("give it a value, or remove the line for the default ({default})")
        }
        settings::Fallback::None => "give it a value, or remove the line".to_string(),
    };
    ConfigError::new(setting.key, format!("is set but blank; {fix}"))
}

/// The keys that are set but mean nothing with this policy source, each with the line that says
/// what the agent does instead: the other mode's settings, and `StandardAuthorizer`'s
/// [`ALLOW_EVERYONE_IF_NO_ACL_FOUND`].
fn ignored_settings(settings: &BTreeMap<String, String>, source: &PolicySource) -> Vec<String> {
    let (mode, running) = match source {
        PolicySource::File(..) => (Mode::Offline, "offline mode (grantforge.policy.file)"),
        PolicySource::Server(_) => (Mode::Server, "server mode (grantforge.server.url)"),
    };
    let mut ignored: Vec<String> = settings
        .keys()
        .filter_map(|key| settings::find(key))
        .filter(|setting| setting.mode != Mode::Both && setting.mode != mode)
        .map(|setting| format!("{} is ignored: it is a setting of the other policy source, and this node runs in {running}", setting.key))
        .collect();
    if settings.contains_key(ALLOW_EVERYONE_IF_NO_ACL_FOUND) {
        ignored.push(format!("{ALLOW_EVERYONE_IF_NO_ACL_FOUND} is StandardAuthorizer's and is ignored: the agent refuses whatever no policy allows; to open a resource to everyone, allow the public group in a policy"));
    }
    ignored
}

struct Reader<'a> {
    settings: &'a BTreeMap<String, String>,
}

/// A value read as its setting's [`Kind`] says: a number (`u64`) or milliseconds (`Duration`).
trait FromSetting: Sized {
    fn read(reader: &Reader<'_>, setting: &Setting) -> Result<Self, ConfigError>;
}

impl FromSetting for u64 {
    fn read(reader: &Reader<'_>, setting: &Setting) -> Result<u64, ConfigError> {
        assert!(
            matches!(setting.kind, Kind::Number { .. }),
            "{} is not a number setting",
            setting.key
        );
        reader.number(setting)
    }
}

impl FromSetting for Duration {
    fn read(reader: &Reader<'_>, setting: &Setting) -> Result<Duration, ConfigError> {
        assert!(
            matches!(setting.kind, Kind::Millis { .. }),
            "{} is not a milliseconds setting",
            setting.key
        );
        reader.number(setting).map(Duration::from_millis)
    }
}

/// How the audit log (`grantforge.audit.log.format`) or the topic sink
/// (`grantforge.audit.topic.format`, which has no `kafka`) writes an access event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditLogFormat {
    /// A line in the style of Kafka's authorizer log.
    Kafka,
    /// An OCSF API Activity record.
    Ocsf,
    /// A CloudEvents 1.0 record.
    CloudEvents,
}

impl FromSetting for AuditLogFormat {
    fn read(reader: &Reader<'_>, setting: &Setting) -> Result<AuditLogFormat, ConfigError> {
        let Kind::OneOf(words) = setting.kind else {
            panic!("{} is not a choice", setting.key)
        };
        let text = reader
            .text(setting)
            .unwrap_or_else(|| Reader::default_of(setting).to_string());
        let refused = || {
            ConfigError::new(
                setting.key,
                format!(
                    "`{text}` is not one of {}; set it to one (default {})",
                    words.join(", "),
                    Reader::default_of(setting)
                ),
            )
        };
        match text.as_str() {
            word if !words.contains(&word) => Err(refused()),
            "kafka" => Ok(AuditLogFormat::Kafka),
            "ocsf" => Ok(AuditLogFormat::Ocsf),
            "cloudevents" => Ok(AuditLogFormat::CloudEvents),
            _ => Err(refused()),
        }
    }
}

/// A setting read as a type its kind is not is a mistake in this file, never an operator's.
fn expect_kind(setting: &Setting, is: bool, kind: &str) {
    assert!(is, "{} is not {kind}", setting.key);
}

impl FromSetting for SuperUsers {
    fn read(reader: &Reader<'_>, setting: &Setting) -> Result<SuperUsers, ConfigError> {
        expect_kind(
            setting,
            matches!(setting.kind, Kind::Principals),
            "a list of principals",
        );
        SuperUsers::parse(&reader.text(setting).unwrap_or_default())
            .map_err(|e| ConfigError::new(setting.key, e))
    }
}

/// Hybrid mode's resources whose questions GrantForge's policies decide first
/// (`grantforge.hybrid.resource.prefixes`): those whose names begin with one of the prefixes, or
/// every resource when none is given. The others' questions go to Kafka's ACLs alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HybridScope {
    prefixes: Vec<String>,
}

impl HybridScope {
    /// Whether the policies are asked about a resource of this name first.
    pub fn covers(&self, resource: &str) -> bool {
        self.prefixes.is_empty()
            || self
                .prefixes
                .iter()
                .any(|p| resource.starts_with(p.as_str()))
    }
}

impl FromSetting for HybridScope {
    fn read(reader: &Reader<'_>, setting: &Setting) -> Result<HybridScope, ConfigError> {
        expect_kind(
            setting,
            matches!(setting.kind, Kind::Prefixes),
            "a list of prefixes",
        );
        let text = reader.text(setting).unwrap_or_default();
        let prefixes: Vec<String> = text
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        if prefixes.is_empty() && !text.trim().is_empty() {
            return Err(ConfigError::new(
                setting.key,
                "names no prefix; give `,`-separated beginnings of resource names, or leave it unset for every resource".to_string(),
            ));
        }
        Ok(HybridScope { prefixes })
    }
}

impl FromSetting for bool {
    fn read(reader: &Reader<'_>, setting: &Setting) -> Result<bool, ConfigError> {
        expect_kind(setting, matches!(setting.kind, Kind::Switch), "a switch");
        let text = reader
            .text(setting)
            .unwrap_or_else(|| Reader::default_of(setting).to_string());
        text.parse().map_err(|_| {
            ConfigError::new(
                setting.key,
                format!(
                    "`{text}` is neither true nor false; set it to one (default {})",
                    Reader::default_of(setting)
                ),
            )
        })
    }
}

impl Reader<'_> {
    fn text(&self, setting: &Setting) -> Option<String> {
        self.settings
            .get(setting.key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    }

    fn get<T: FromSetting>(&self, setting: &Setting) -> Result<T, ConfigError> {
        T::read(self, setting)
    }

    fn default_of(setting: &Setting) -> &'static str {
        setting.default_value().expect("a setting with a default")
    }

    /// A whole number in the range of the setting's kind; its default when unset.
    fn number(&self, setting: &Setting) -> Result<u64, ConfigError> {
        let (min, max) = setting.kind.range().expect("a number setting");
        let text = self
            .text(setting)
            .unwrap_or_else(|| Self::default_of(setting).to_string());
        text.parse::<u64>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| {
            ConfigError::new(
                setting.key,
                format!("`{text}` is not a whole number from {min} to {max}; set it to one (default {})", Self::default_of(setting)),
            )
        })
    }

    /// The staleness limit, `None` when off. A limit shorter than three refresh intervals is
    /// refused: a round, the random wait before a download and a retry must fit in it, or a node
    /// whose server answers would refuse.
    fn snapshot_max_age(&self) -> Result<Option<Duration>, ConfigError> {
        let limit: Duration = self.get(&settings::SNAPSHOT_MAX_AGE)?;
        if limit.is_zero() {
            return Ok(None);
        }
        let refresh: Duration = self.get(&settings::REFRESH_INTERVAL)?;
        let shortest = refresh.saturating_mul(3);
        if limit < shortest {
            return Err(ConfigError::new(
                settings::SNAPSHOT_MAX_AGE.key,
                format!(
                    "`{}` is shorter than three rounds of {} ({} ms): a node whose server answers would refuse between two rounds; set it to at least {} (or 0 to turn the limit off)",
                    limit.as_millis(),
                    settings::REFRESH_INTERVAL.key,
                    refresh.as_millis(),
                    shortest.as_millis()
                ),
            ));
        }
        Ok(Some(limit))
    }

    fn policy_source(&self) -> Result<PolicySource, ConfigError> {
        let (policy_file, server_url) = (settings::POLICY_FILE.key, settings::SERVER_URL.key);
        match (self.text(&settings::POLICY_FILE), self.text(&settings::SERVER_URL)) {
            (Some(_), Some(_)) => Err(ConfigError::new(
                policy_file,
                format!("both {policy_file} (offline mode) and {server_url} are set; keep only one"),
            )),
            (Some(file), None) => {
                let key = self.signing_key()?;
                if key.is_some() && self.text(&settings::CACHE_DIR).is_none() {
                    return Err(ConfigError::new(
                        settings::CACHE_DIR.key,
                        format!("is required with {} in offline mode: the agent records there the highest signed policy version applied, so that an older signed file cannot roll the policies back across a restart; name a directory Kafka's account can write, such as /var/lib/kafka/grantforge-cache", settings::SIGNING_KEY_FILE.key),
                    ));
                }
                Ok(PolicySource::File(PathBuf::from(file), key))
            }
            (None, Some(url)) => self.server_settings(&url).map(PolicySource::Server),
            (None, None) => Err(ConfigError::new(
                policy_file,
                format!("no policy source is configured; set {policy_file} to a GrantForge snapshot file (format 1)"),
            )),
        }
    }

    fn server_settings(&self, url: &str) -> Result<ServerSettings, ConfigError> {
        let url = server_url(url)?;
        let server_url = settings::SERVER_URL.key;
        let token_file = PathBuf::from(self.text(&settings::TOKEN_FILE).ok_or_else(|| {
            ConfigError::new(
                settings::TOKEN_FILE.key,
                format!("is required with {server_url}; name the file holding the agent token GrantForge issued"),
            )
        })?);
        let token = read_token(&token_file)?;
        let cache_dir = PathBuf::from(self.text(&settings::CACHE_DIR).ok_or_else(|| {
            ConfigError::new(
                settings::CACHE_DIR.key,
                format!("is required with {server_url}; name a directory Kafka's account can write, such as /var/lib/kafka/grantforge-cache"),
            )
        })?);
        let signing_key = self.signing_key()?;
        plain_http_needs_a_signing_key(&url, signing_key.is_some())?;
        let ca_pem = match self.text(&settings::SSL_CA_FILE) {
            None => None,
            Some(file) => Some(std::fs::read(&file).map_err(|e| {
                ConfigError::new(
                    settings::SSL_CA_FILE.key,
                    format!(
                        "{}; give a PEM file with the CA certificate(s) of the server",
                        unreadable(&file, &e)
                    ),
                )
            })?),
        };
        Ok(ServerSettings {
            url,
            token,
            token_file,
            instance: self.instance()?.unwrap_or_else(host_name),
            host: host_name(),
            cache_dir,
            signing_key,
            ca_pem,
            renamed_to: self.text(&settings::SERVICE_RENAMED_TO),
            agent_version: agent_version(
                self.settings.get(RUNNING_KAFKA_VERSION).map(String::as_str),
            ),
        })
    }

    /// The pinned signing key ([`settings::SIGNING_KEY_FILE`]), if configured.
    fn signing_key(&self) -> Result<Option<SigningKey>, ConfigError> {
        let key = settings::SIGNING_KEY_FILE.key;
        let Some(file) = self.text(&settings::SIGNING_KEY_FILE) else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(&file).map_err(|e| {
            ConfigError::new(
                key,
                format!(
                    "{}; save the publicKey of GET /api/v1/agent/signing-key there",
                    unreadable(&file, &e)
                ),
            )
        })?;
        SigningKey::from_base64(&text).map(Some).map_err(|e| {
            ConfigError::new(
                key,
                format!("{file} is {e}; save the publicKey of GET /api/v1/agent/signing-key there"),
            )
        })
    }

    /// 1–128 visible ASCII characters with no space, as the server's heartbeat validation demands.
    fn instance(&self) -> Result<Option<String>, ConfigError> {
        let Some(instance) = self.text(&settings::INSTANCE) else {
            return Ok(None);
        };
        let visible = instance.bytes().all(|b| b.is_ascii_graphic());
        if instance.len() > 128 || !visible {
            return Err(ConfigError::new(
                settings::INSTANCE.key,
                format!("`{instance}` must be 1 to 128 visible ASCII characters without spaces, such as broker-1"),
            ));
        }
        Ok(Some(instance))
    }
}

/// `http(s)://host[:port][/prefix]`, normalised to end in `/`.
fn server_url(url: &str) -> Result<String, ConfigError> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or(""));
    match host {
        Some(host) if !host.is_empty() && !url.contains(char::is_whitespace) => {
            Ok(if url.ends_with('/') { url.to_string() } else { format!("{url}/") })
        }
        _ => Err(ConfigError::new(
            settings::SERVER_URL.key,
            format!("`{url}` is not an http or https address with a host, such as https://grantforge.example.com"),
        )),
    }
}

/// Whether the server URL is plain HTTP (no TLS: the token travels in clear, and anyone on the
/// path can answer in the server's place).
pub(crate) fn is_plain_http(url: &str) -> bool {
    url.get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

/// Plain HTTP is no trust anchor: over it, the signing key fetched on first use could be anyone's,
/// so [`settings::SIGNING_KEY_FILE`] is required.
pub(crate) fn plain_http_needs_a_signing_key(
    url: &str,
    key_configured: bool,
) -> Result<(), ConfigError> {
    if is_plain_http(url) && !key_configured {
        return Err(ConfigError::new(
            settings::SIGNING_KEY_FILE.key,
            format!(
                "is required because {server_url} {url} is plain HTTP: a signing key fetched over it on first use could come from anyone on the way, so trust on first use is refused; save the publicKey of GET /api/v1/agent/signing-key (obtained over a channel you trust) in a file and name it here, or use an https URL",
                server_url = settings::SERVER_URL.key,
            ),
        ));
    }
    Ok(())
}

/// The token file is read once, here; its content never appears in a message.
fn read_token(file: &std::path::Path) -> Result<Token, ConfigError> {
    let key = settings::TOKEN_FILE.key;
    let text = std::fs::read_to_string(file).map_err(|e| {
        ConfigError::new(
            key,
            format!(
                "{}; store the agent token there, readable by Kafka's account only",
                unreadable(&file.display(), &e)
            ),
        )
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ConfigError::new(
            key,
            format!(
                "{} is empty; store the agent token GrantForge issued there",
                file.display()
            ),
        ));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ConfigError::new(
            key,
            format!(
                "{} holds more than one token; keep only the agent token",
                file.display()
            ),
        ));
    }
    Ok(Token(token.to_string()))
}

/// The host name, as the heartbeat reports it and as the default instance name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()) && h.len() <= 128)
        .unwrap_or_else(|| "unknown".to_string())
}

/// `super.users` as Kafka reads it: `;`-separated `Type:name` entries, trimmed.
fn unknown_key(key: &str) -> ConfigError {
    let nearest = likely_keys(key);
    let nearest = if nearest.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", nearest.join(" or "))
    };
    ConfigError::new(
        key,
        format!("is not a setting of the GrantForge agent{nearest}; fix or remove it (docs/configuration.md lists every key)"),
    )
}

/// The keys an unknown `key` was likely meant to be: those it is the beginning of
/// (`grantforge.token` for `grantforge.token.file`, a key cut short), else the one nearest in
/// spelling (a typo).
fn likely_keys(key: &str) -> Vec<&'static str> {
    let longer: Vec<&'static str> = SETTINGS
        .iter()
        .map(|known| known.key)
        .filter(|known| {
            known
                .strip_prefix(key)
                .is_some_and(|rest| rest.starts_with('.'))
        })
        .collect();
    if !longer.is_empty() {
        return longer;
    }
    SETTINGS
        .iter()
        .map(|known| (edit_distance(key, known.key), known.key))
        .min()
        .filter(|(distance, _)| *distance <= 3)
        .map(|(_, known)| known)
        .into_iter()
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Java shim hands over `grantforge.*` and its own list of Kafka's keys: the list must be
    /// this one, or a key the agent reads never arrives (or one it does not read does).
    #[test]
    fn the_shim_hands_over_exactly_the_kafka_keys_the_agent_reads() {
        let shim = std::fs::read_to_string(crate::test_support::in_crate(
            "../../java-shim/src/main/java/org/devlive/grantforge/kafka/agent/OpenedAgent.java",
        ))
        .unwrap();
        let list = shim
            .split("KAFKA_KEYS = ")
            .nth(1)
            .and_then(|rest| rest.split(';').next())
            .expect("OpenedAgent defines KAFKA_KEYS");
        let mut keys: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
        keys.sort_unstable();
        let mut ours = KAFKA_KEYS.to_vec();
        ours.sort_unstable();
        assert_eq!(keys, ours);
        let per_listener = format!(
            "key.startsWith(\"{}\") && key.endsWith(\".{}\")",
            lockout::LISTENER_KEY_PREFIX,
            lockout::SSL_CLIENT_AUTH
        );
        assert!(
            shim.contains(&per_listener),
            "OpenedAgent hands over each listener's {}: {per_listener}",
            lockout::SSL_CLIENT_AUTH
        );
    }

    /// The Java shim adds the running Kafka's version under [`RUNNING_KAFKA_VERSION`].
    #[test]
    fn the_shim_hands_over_the_running_kafkas_version() {
        let shim = std::fs::read_to_string(crate::test_support::in_crate(
            "../../java-shim/src/main/java/org/devlive/grantforge/kafka/agent/OpenedAgent.java",
        ))
        .unwrap();
        let put = format!("settings.put(\"{RUNNING_KAFKA_VERSION}\", runningKafkaVersion())");
        assert!(shim.contains(&put), "OpenedAgent lacks {put}");
    }

    #[test]
    fn the_agent_version_names_the_running_kafka_and_fits_the_heartbeat() {
        let ours = env!("CARGO_PKG_VERSION");
        assert_eq!(agent_version(Some("4.3.1")), format!("{ours}-kafka-4.3.1"));
        assert_eq!(agent_version(None), ours);
        assert_eq!(agent_version(Some("  ")), ours);
        let long = agent_version(Some(&"é".repeat(100)));
        assert_eq!(long.encode_utf16().count(), AGENT_VERSION_MAX);
        assert!(long.starts_with(&format!("{ours}-kafka-é")), "{long}");
    }

    #[test]
    fn server_mode_reads_the_token_once_and_never_shows_it() {
        let dir = std::env::temp_dir().join(format!("gf-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let token_file = dir.join("token");
        std::fs::write(&token_file, "  gfa_secret-token-value \n").unwrap();
        let key_file = dir.join("key.pub");
        std::fs::write(&key_file, crate::trust::tests::server_key().1).unwrap();
        let config = AgentConfig::from_settings(&settings(&[
            ("grantforge.server.url", "http://127.0.0.1:8080/gf"),
            ("grantforge.token.file", token_file.to_str().unwrap()),
            ("grantforge.cache.dir", dir.join("cache").to_str().unwrap()),
            ("grantforge.instance", "broker-1"),
            ("grantforge.signing.key.file", key_file.to_str().unwrap()),
        ]))
        .unwrap();
        let PolicySource::Server(server) = &config.source else {
            panic!("server mode")
        };
        assert_eq!(server.url, "http://127.0.0.1:8080/gf/");
        assert_eq!(server.token.expose(), "gfa_secret-token-value");
        assert_eq!(server.instance, "broker-1");
        assert!(
            !format!("{config:?}").contains("secret-token"),
            "the token never shows in Debug output"
        );

        std::fs::write(&token_file, "").unwrap();
        let err = AgentConfig::from_settings(&settings(&[
            ("grantforge.server.url", "https://gf"),
            ("grantforge.token.file", token_file.to_str().unwrap()),
            ("grantforge.cache.dir", "/tmp"),
        ]))
        .unwrap_err();
        assert_eq!(err.key, "grantforge.token.file");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_staleness_limit_shorter_than_three_rounds_is_refused_naming_the_key_and_the_least() {
        let dir = std::env::temp_dir().join(format!("gf-config-age-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let token_file = dir.join("token");
        std::fs::write(&token_file, "gfa_token").unwrap();
        let token = token_file.to_str().unwrap();
        let with = |limit: &str| {
            AgentConfig::from_settings(&settings(&[
                ("grantforge.server.url", "https://gf"),
                ("grantforge.token.file", token),
                ("grantforge.cache.dir", "/tmp"),
                ("grantforge.refresh.interval.ms", "10000"),
                ("grantforge.snapshot.max.age.ms", limit),
            ]))
        };
        let err = with("29999").unwrap_err();
        assert_eq!(err.key, "grantforge.snapshot.max.age.ms");
        assert!(err.to_string().contains("at least 30000"), "{err}");
        assert_eq!(
            with("30000").unwrap().snapshot_max_age,
            Some(Duration::from_secs(30))
        );
        assert_eq!(with("0").unwrap().snapshot_max_age, None, "0 is off");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_operations_guide_quotes_a_missing_policy_file_as_the_broker_logs_it() {
        let path = std::path::Path::new("/etc/kafka/grantforge/policies.json");
        let err = crate::source::file::read_policy_file(path, 1024, "grantforge.policy.file")
            .unwrap_err();
        let guide =
            std::fs::read_to_string(crate::test_support::in_crate("../../docs/operations.md"))
                .unwrap();
        // What the shim logs when `configure` fails (OpenedAgent.java).
        let logged = format!("GrantForge agent cannot start: {err}");
        assert!(
            guide.contains(&logged),
            "docs/operations.md quotes: {logged}"
        );
    }

    #[test]
    fn every_missing_file_is_said_alike() {
        let missing = std::env::temp_dir()
            .join(format!("gf-config-never-created-{}", std::process::id()))
            .join("file");
        let shown = missing.display().to_string();
        for (key, settings) in [
            (
                "grantforge.token.file",
                vec![
                    ("grantforge.server.url", "https://gf"),
                    ("grantforge.token.file", shown.as_str()),
                    ("grantforge.cache.dir", "/tmp"),
                ],
            ),
            (
                "grantforge.signing.key.file",
                vec![
                    ("grantforge.policy.file", "/x"),
                    ("grantforge.signing.key.file", shown.as_str()),
                    ("grantforge.cache.dir", "/tmp"),
                ],
            ),
        ] {
            let err = AgentConfig::from_settings(&super::tests::settings(&settings)).unwrap_err();
            assert_eq!(err.key, key);
            assert!(
                err.message
                    .starts_with(&format!("{shown} does not exist; ")),
                "{err}"
            );
            assert!(!err.message.contains("entity not found"), "{err}");
        }
    }

    fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn plain_http_without_a_signing_key_file_names_that_key() {
        let dir = std::env::temp_dir().join(format!("gf-config-http-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let token_file = dir.join("token");
        std::fs::write(&token_file, "gfa_token").unwrap();
        let token = token_file.to_str().unwrap();
        let cache = dir.join("cache");
        let cache = cache.to_str().unwrap();
        for url in ["http://127.0.0.1:8080", "http://gf.example.com/gf"] {
            let err = AgentConfig::from_settings(&settings(&[
                ("grantforge.server.url", url),
                ("grantforge.token.file", token),
                ("grantforge.cache.dir", cache),
            ]))
            .unwrap_err();
            assert_eq!(err.key, "grantforge.signing.key.file", "{err}");
            assert!(
                err.message.contains("plain HTTP")
                    && err.message.contains("trust on first use is refused"),
                "{err}"
            );
        }
        let https = AgentConfig::from_settings(&settings(&[
            ("grantforge.server.url", "https://gf.example.com"),
            ("grantforge.token.file", token),
            ("grantforge.cache.dir", cache),
        ]));
        assert!(
            https.is_ok(),
            "over https the key may still be trusted on first use: {https:?}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn offline_mode_with_defaults() {
        let config = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/etc/kafka/policies.json"),
            ("super.users", " User:admin ; User:kafka"),
            ("broker.id", "ignored"),
        ]))
        .unwrap();
        assert_eq!(
            config.source,
            PolicySource::File("/etc/kafka/policies.json".into(), None)
        );
        assert_eq!(config.super_users.entries(), ["User:admin", "User:kafka"]);
        assert_eq!(config.start_timeout, Duration::from_secs(30));
        assert_eq!(config.decision_cache_max_entries, 100_000);
        assert_eq!(config.audit_batch_size, 500);
    }

    #[test]
    fn a_typo_is_an_error_that_names_the_key_and_the_likely_one() {
        let err =
            AgentConfig::from_settings(&settings(&[("grantforge.polcy.file", "/x")])).unwrap_err();
        assert_eq!(err.key, "grantforge.polcy.file");
        assert!(
            err.message.contains("did you mean grantforge.policy.file?"),
            "{err}"
        );
    }

    #[test]
    fn a_key_cut_short_suggests_the_keys_it_begins() {
        let err =
            AgentConfig::from_settings(&settings(&[("grantforge.token", "s3cret")])).unwrap_err();
        assert_eq!(err.key, "grantforge.token");
        assert!(
            err.message.contains("did you mean grantforge.token.file?"),
            "{err}"
        );
        assert!(
            !err.to_string().contains("s3cret"),
            "the value is a secret: {err}"
        );
    }

    #[test]
    fn principals_joined_by_commas_in_super_users_stop_the_agent_naming_the_key() {
        let err = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/x"),
            ("super.users", "User:admin,User:kafka"),
        ]))
        .unwrap_err();
        assert_eq!(err.key, "super.users");
        assert!(
            err.message.contains("super.users=User:admin;User:kafka"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        let base = [("grantforge.policy.file", "/x")];
        for (key, value) in [
            ("grantforge.start.timeout.ms", "soon"),
            ("grantforge.audit.batch.size", "1001"),
            ("grantforge.audit.batch.size", "0"),
            ("grantforge.instance", "has space"),
            ("grantforge.decision.cache.ttl.ms", "-1"),
            ("grantforge.audit.super.users.mutations", "yes"),
            ("grantforge.audit.log.format", "json"),
            ("grantforge.audit.excluded.principals", "monitor"),
        ] {
            let mut s = settings(&base);
            s.insert(key.to_string(), value.to_string());
            let err = AgentConfig::from_settings(&s).unwrap_err();
            assert_eq!(err.key, key, "{err}");
        }
        let err = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/x"),
            ("super.users", "admin"),
        ]))
        .unwrap_err();
        assert_eq!(err.key, "super.users");
    }

    #[test]
    fn every_setting_set_blank_is_refused_naming_its_key_and_how_to_get_the_default() {
        for setting in SETTINGS {
            for blank in ["", "   "] {
                let err = AgentConfig::from_settings(&settings(&[
                    ("grantforge.policy.file", "/x"),
                    (setting.key, blank),
                ]))
                .unwrap_err();
                assert_eq!(err.key, setting.key, "{err}");
                assert!(
                    err.message
                        .starts_with("is set but blank; give it a value, or remove the line"),
                    "{err}"
                );
                if let Some(default) = setting.default_value() {
                    assert!(err.message.contains(&format!("({default})")), "{err}");
                }
            }
        }
        let set = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/x"),
            ("grantforge.start.timeout.ms", " 4500 "),
        ]))
        .unwrap();
        assert_eq!(set.start_timeout, Duration::from_millis(4500));
    }

    #[test]
    fn keys_of_the_other_policy_source_and_kafkas_acl_default_are_ignored_with_a_line_each() {
        let offline = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/x"),
            ("grantforge.download.jitter.ms", "100"),
            ("grantforge.read.timeout.ms", "1000"),
            ("grantforge.decision.cache.ttl.ms", "1000"),
            (ALLOW_EVERYONE_IF_NO_ACL_FOUND, "true"),
        ]))
        .unwrap();
        assert_eq!(
            offline.ignored_settings.len(),
            3,
            "{:?}",
            offline.ignored_settings
        );
        assert!(offline.ignored_settings[0].starts_with("grantforge.download.jitter.ms is ignored: it is a setting of the other policy source, and this node runs in offline mode"));
        assert!(offline.ignored_settings[1].starts_with("grantforge.read.timeout.ms is ignored"));
        assert!(offline.ignored_settings[2].contains("allow the public group in a policy"));
        let both = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/x"),
            ("grantforge.policy.file.poll.interval.ms", "500"),
            ("grantforge.cache.dir", "/tmp"),
        ]))
        .unwrap();
        assert_eq!(both.ignored_settings, Vec::<String>::new());
    }

    #[test]
    fn anonymous_as_a_super_user_beside_a_plaintext_listener_gets_one_warning_at_start() {
        let config = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/x"),
            (SUPER_USERS, "User:admin;User:ANONYMOUS"),
            (lockout::LISTENERS, "PLAINTEXT://:9092,SASL_SSL://:9093"),
        ]))
        .unwrap();
        assert_eq!(
            config.ignored_settings.len(),
            1,
            "{:?}",
            config.ignored_settings
        );
        assert!(config.ignored_settings[0].contains("listener PLAINTEXT speaks PLAINTEXT"));
        let sasl_only = AgentConfig::from_settings(&settings(&[
            ("grantforge.policy.file", "/x"),
            (SUPER_USERS, "User:ANONYMOUS"),
            (lockout::LISTENERS, "SASL_SSL://:9093"),
        ]))
        .unwrap();
        assert_eq!(sasl_only.ignored_settings, Vec::<String>::new());
    }

    #[test]
    fn anonymous_as_a_super_user_beside_an_ssl_listener_without_required_certificates_is_warned() {
        let ssl = |client_auth: &'static str| {
            AgentConfig::from_settings(&settings(&[
                ("grantforge.policy.file", "/x"),
                (SUPER_USERS, "User:ANONYMOUS"),
                (lockout::LISTENERS, "SASL_SSL://:9093,EXTERNAL://:9094"),
                (
                    lockout::LISTENER_SECURITY_PROTOCOL_MAP,
                    "SASL_SSL:SASL_SSL,EXTERNAL:SSL",
                ),
                (lockout::SSL_CLIENT_AUTH, "required"),
                ("listener.name.external.ssl.client.auth", client_auth),
            ]))
            .unwrap()
            .ignored_settings
        };
        let warned = ssl("requested");
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(
            warned[0].contains("listener EXTERNAL speaks SSL"),
            "{warned:?}"
        );
        assert_eq!(ssl("required"), Vec::<String>::new());
    }

    #[test]
    fn a_policy_source_is_required_and_exactly_one() {
        assert_eq!(
            AgentConfig::from_settings(&settings(&[])).unwrap_err().key,
            "grantforge.policy.file"
        );
        let both = settings(&[
            ("grantforge.policy.file", "/x"),
            ("grantforge.server.url", "https://gf"),
        ]);
        assert_eq!(
            AgentConfig::from_settings(&both).unwrap_err().key,
            "grantforge.policy.file"
        );
        let server = settings(&[("grantforge.server.url", "https://gf")]);
        assert_eq!(
            AgentConfig::from_settings(&server).unwrap_err().key,
            "grantforge.token.file"
        );
        let bad_url = settings(&[("grantforge.server.url", "ftp://gf")]);
        assert_eq!(
            AgentConfig::from_settings(&bad_url).unwrap_err().key,
            "grantforge.server.url"
        );
    }
}
