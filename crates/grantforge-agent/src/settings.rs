//! Every `grantforge.*` setting, in one table: its key, its default, its kind (with the range of a
//! number) and one line of doc.
//!
//! This table is the one place a setting is declared. Validation (unknown keys and "did you mean"),
//! the readers of [`crate::config`] (a number's range and default come from here), every message
//! that names a key (`SETTING.key`) and the test that holds `docs/configuration.md` to the code all
//! read it. Kafka's own `super.users` is not here ([`crate::config::SUPER_USERS`]).

/// One `grantforge.*` setting.
#[derive(Debug, PartialEq, Eq)]
pub struct Setting {
    pub key: &'static str,
    pub default: Fallback,
    pub kind: Kind,
    /// The policy source it serves: a key of the other one is ignored, with a WARN.
    pub mode: Mode,
    /// One line for the table of `docs/configuration.md` (which may say more).
    pub doc: &'static str,
}

/// What an unset setting means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// No default: unset, the setting is not used (or is required, as its mode says).
    None,
    /// This value, as an operator would write it.
    Value(&'static str),
    /// Worked out at start (the docs say it in words).
    Derived(&'static str),
}

/// Which policy source a setting serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Both,
    /// Only with `grantforge.server.url`.
    Server,
    /// Only with `grantforge.policy.file`.
    Offline,
}

/// The kind of value a setting takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Whole milliseconds from `min` to [`MILLIS_MAX`].
    Millis { min: u64 },
    /// A whole number from `min` to `max`.
    Number { min: u64, max: u64 },
    /// A file or directory.
    Path,
    /// An `http(s)://` address.
    Url,
    /// A name: 1 to 128 visible ASCII characters without spaces.
    Name,
    /// Read by the Java shim before the native library loads; the agent accepts it and ignores it.
    Shim,
    /// `true` or `false`.
    Switch,
    /// One of the listed words.
    OneOf(&'static [&'static str]),
    /// `;`-separated `Type:name` principals, written as in `super.users`.
    Principals,
    /// `,`-separated beginnings of resource names.
    Prefixes,
    /// `,`-separated sinks of the audit: `grantforge`, `topic`, `log`.
    Sinks,
    /// `;`-separated routing rules of the audit (`crate::audit::routes`).
    Routes,
}

/// The largest number of milliseconds a setting may hold (as nanoseconds it still fits an `i64`).
pub const MILLIS_MAX: u64 = i64::MAX as u64 / 1_000_000;

impl Kind {
    /// The range of a number or a duration in milliseconds; `None` for other kinds.
    pub const fn range(&self) -> Option<(u64, u64)> {
        match *self {
            Kind::Millis { min } => Some((min, MILLIS_MAX)),
            Kind::Number { min, max } => Some((min, max)),
            Kind::Path
            | Kind::Url
            | Kind::Name
            | Kind::Shim
            | Kind::Switch
            | Kind::OneOf(_)
            | Kind::Principals
            | Kind::Prefixes
            | Kind::Sinks
            | Kind::Routes => None,
        }
    }
}

impl Setting {
    /// The value used when the setting is unset, if there is one to write down.
    pub const fn default_value(&self) -> Option<&'static str> {
        match self.default {
            Fallback::Value(value) => Some(value),
            Fallback::None | Fallback::Derived(_) => None,
        }
    }

    /// The default as the docs' table shows it: `` `value` ``, words, or `—` for none.
    pub fn shown_default(&self) -> String {
        match self.default {
            Fallback::None => "—".to_string(),
            Fallback::Value(value) => format!("`{value}`"),
            Fallback::Derived(words) => words.to_string(),
        }
    }

    /// The setting as a row of the docs' table: `` | `key` | default | doc | ``.
    pub fn markdown_row(&self) -> String {
        format!(
            "| `{}` | {} | {} |",
            self.key,
            self.shown_default(),
            self.doc
        )
    }
}

/// The table of every setting, as `docs/configuration.md` lays it out.
pub fn markdown_table() -> String {
    let mut table = String::from("| key | default | meaning / example |\n|---|---|---|\n");
    for setting in SETTINGS {
        table.push_str(&setting.markdown_row());
        table.push('\n');
    }
    table
}

/// The setting of this key, if it is one.
pub fn find(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().copied().find(|setting| setting.key == key)
}

pub const POLICY_FILE: Setting = Setting {
    key: "grantforge.policy.file",
    default: Fallback::None,
    kind: Kind::Path,
    mode: Mode::Offline,
    doc: "offline mode: a GrantForge snapshot file (format 1), reloaded when it changes",
};
pub const POLICY_FILE_POLL_INTERVAL: Setting = Setting {
    key: "grantforge.policy.file.poll.interval.ms",
    default: Fallback::Value("1000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Offline,
    doc: "how often offline mode looks for a changed policy file",
};
pub const SERVER_URL: Setting = Setting {
    key: "grantforge.server.url",
    default: Fallback::None,
    kind: Kind::Url,
    mode: Mode::Server,
    doc: "server mode: the GrantForge server (https://grantforge.example.com)",
};
pub const TOKEN_FILE: Setting = Setting {
    key: "grantforge.token.file",
    default: Fallback::None,
    kind: Kind::Path,
    mode: Mode::Server,
    doc: "server mode, required: the file holding the agent token GrantForge issued",
};
pub const INSTANCE: Setting = Setting {
    key: "grantforge.instance",
    default: Fallback::Derived("host name"),
    kind: Kind::Name,
    mode: Mode::Both,
    doc: "this node's name in GrantForge (broker-1)",
};
pub const CACHE_DIR: Setting = Setting {
    key: "grantforge.cache.dir",
    default: Fallback::None,
    kind: Kind::Path,
    mode: Mode::Both,
    doc: "server mode, and offline mode with a signing key, required: directory for the verified snapshot cache, the pinned key and the highest signed policy version applied",
};
pub const SIGNING_KEY_FILE: Setting = Setting {
    key: "grantforge.signing.key.file",
    default: Fallback::None,
    kind: Kind::Path,
    mode: Mode::Both,
    doc: "the server's Ed25519 signing key to trust (both modes)",
};
pub const SSL_CA_FILE: Setting = Setting {
    key: "grantforge.ssl.ca.file",
    default: Fallback::None,
    kind: Kind::Path,
    mode: Mode::Server,
    doc: "server mode: PEM file with CA certificates trusted in addition to Mozilla's roots",
};
pub const START_TIMEOUT: Setting = Setting {
    key: "grantforge.start.timeout.ms",
    default: Fallback::Value("30000"),
    kind: Kind::Millis { min: 0 },
    mode: Mode::Both,
    doc: "client listeners open when the first snapshot is in force or after this long",
};
pub const REFRESH_INTERVAL: Setting = Setting {
    key: "grantforge.refresh.interval.ms",
    default: Fallback::Value("30000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Server,
    doc: "server mode: heartbeat interval when the server gives none, and the longest backoff",
};
pub const DOWNLOAD_JITTER: Setting = Setting {
    key: "grantforge.download.jitter.ms",
    default: Fallback::Value("5000"),
    kind: Kind::Millis { min: 0 },
    mode: Mode::Server,
    doc: "server mode: a changed policy version is downloaded after a random wait up to this long",
};
pub const REVALIDATE_INTERVAL: Setting = Setting {
    key: "grantforge.revalidate.interval.ms",
    default: Fallback::Value("300000"),
    kind: Kind::Millis { min: 1000 },
    mode: Mode::Server,
    doc: "server mode: how often the snapshot in force is revalidated while its policy version stays, so membership changes arrive",
};
pub const SNAPSHOT_MAX_AGE: Setting = Setting {
    key: "grantforge.snapshot.max.age.ms",
    default: Fallback::Value("0"),
    kind: Kind::Millis { min: 0 },
    mode: Mode::Server,
    doc: "server mode: how long the snapshot in force may go unconfirmed by the server before everything but the super users is refused; 0 turns the limit off",
};
pub const BREAK_GLASS_DIR: Setting = Setting {
    key: "grantforge.break.glass.dir",
    default: Fallback::None,
    kind: Kind::Path,
    mode: Mode::Server,
    doc: "server mode: the directory the JAR's break-glass command hands signed snapshots to a running node through; unset, none is taken",
};
pub const SERVICE_RENAMED_TO: Setting = Setting {
    key: "grantforge.service.renamed.to",
    default: Fallback::None,
    kind: Kind::Name,
    mode: Mode::Server,
    doc: "server mode: the service's new name after it was renamed in GrantForge; its snapshots may then follow those of the old name",
};
pub const CONNECT_TIMEOUT: Setting = Setting {
    key: "grantforge.connect.timeout.ms",
    default: Fallback::Value("5000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Server,
    doc: "server mode: the longest wait to resolve the server's name, and to connect",
};
pub const READ_TIMEOUT: Setting = Setting {
    key: "grantforge.read.timeout.ms",
    default: Fallback::Value("8000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Server,
    doc: "server mode: read timeout (answers, each read, bodies but a snapshot's)",
};
pub const SNAPSHOT_TIMEOUT: Setting = Setting {
    key: "grantforge.snapshot.timeout.ms",
    default: Fallback::Value("120000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Server,
    doc: "server mode: how long a snapshot's body may take to arrive",
};
pub const DECISION_CACHE_MAX_ENTRIES: Setting = Setting {
    key: "grantforge.decision.cache.max.entries",
    default: Fallback::Value("100000"),
    kind: Kind::Number {
        min: 0,
        max: u32::MAX as u64,
    },
    mode: Mode::Both,
    doc: "decisions kept for the snapshot in force; 0 turns the cache off",
};
pub const DECISION_CACHE_TTL: Setting = Setting {
    key: "grantforge.decision.cache.ttl.ms",
    default: Fallback::Value("10000"),
    kind: Kind::Millis { min: 0 },
    mode: Mode::Both,
    doc: "how long a decision is kept; 0 turns the cache off",
};
pub const AUDIT_FOLD_WINDOW: Setting = Setting {
    key: "grantforge.audit.fold.window.ms",
    default: Fallback::Value("10000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Both,
    doc: "identical allowed accesses within this window become one audit event",
};
pub const AUDIT_SUPER_USERS_MUTATIONS: Setting = Setting {
    key: "grantforge.audit.super.users.mutations",
    default: Fallback::Value("false"),
    kind: Kind::Switch,
    mode: Mode::Both,
    doc: "`true`: the mutations of `super.users` principals (create, delete, alter, alter configs; ACL changes are alter on the cluster) are audited as allowed accesses of no policy, still never checked; their other accesses, and the `cluster_action` of nodes among themselves, are not",
};
pub const AUDIT_EXCLUDED_PRINCIPALS: Setting = Setting {
    key: "grantforge.audit.excluded.principals",
    default: Fallback::None,
    kind: Kind::Principals,
    mode: Mode::Both,
    doc: "`;`-separated `Type:name` principals, written as in `super.users` (`User:monitor;User:probe`), whose requests are checked as anyone's but never audited: an operator's noise, such as monitoring users",
};
pub const AUDIT_SINKS: Setting = Setting {
    key: "grantforge.audit.sinks",
    default: Fallback::Derived("`grantforge` in server mode, `log` in offline mode"),
    kind: Kind::Sinks,
    mode: Mode::Both,
    doc: "where the audit goes, `,`-separated, any combination: `grantforge` (the server, server mode only), `topic` (a Kafka topic, `grantforge.audit.topic`), `log` (the log `grantforge.audit`)",
};
pub const AUDIT_ROUTES: Setting = Setting {
    key: "grantforge.audit.routes",
    default: Fallback::None,
    kind: Kind::Routes,
    mode: Mode::Both,
    doc: "`;`-separated rules `kind,outcome,resource=sink+sink` (kind: `produce`, `consume`, `management` or `any`; outcome: `allowed`, `denied` or `any`; resource: `*` or `type:name`, a name ending in `*` a prefix); the first rule an event matches names its sinks, an event no rule matches goes to every sink; unset, every event goes to every sink",
};
pub const AUDIT_LOG_FORMAT: Setting = Setting {
    key: "grantforge.audit.log.format",
    default: Fallback::Value("kafka"),
    kind: Kind::OneOf(&["kafka", "ocsf", "cloudevents"]),
    mode: Mode::Both,
    doc: "how the log `grantforge.audit` writes each access event, one per line: `kafka` (in the style of Kafka's authorizer log), `ocsf` (an OCSF 1.8.0 API Activity record in JSON) or `cloudevents` (a CloudEvents 1.0 record in JSON, the event as GrantForge takes it in `data`)",
};
pub const AUDIT_TOPIC: Setting = Setting {
    key: "grantforge.audit.topic",
    default: Fallback::Value("_grantforge_audit"),
    kind: Kind::Name,
    mode: Mode::Both,
    doc: "the topic sink: the topic the agent's producer writes each access event to, as one record keyed by the event's user; created if missing",
};
pub const AUDIT_TOPIC_FORMAT: Setting = Setting {
    key: "grantforge.audit.topic.format",
    default: Fallback::Value("cloudevents"),
    kind: Kind::OneOf(&["ocsf", "cloudevents"]),
    mode: Mode::Both,
    doc: "the topic sink: each record's value, `cloudevents` (CloudEvents 1.0, structured JSON) or `ocsf` (OCSF 1.8.0 API Activity, JSON)",
};
pub const AUDIT_TOPIC_BOOTSTRAP_SERVERS: Setting = Setting {
    key: "grantforge.audit.topic.bootstrap.servers",
    default: Fallback::None,
    kind: Kind::Name,
    mode: Mode::Both,
    doc: "the topic sink, required: the producer's `bootstrap.servers` (for this cluster, the address of a listener the agent's principal logs in on)",
};
pub const AUDIT_TOPIC_PRODUCER_CONFIG: Setting = Setting {
    key: "grantforge.audit.topic.producer.config",
    default: Fallback::None,
    kind: Kind::Path,
    mode: Mode::Both,
    doc: "the topic sink: a properties file of Kafka client settings for the producer and the admin client that creates the topic (`security.protocol`, `sasl.*`, `ssl.*`: the agent principal's credentials)",
};
pub const AUDIT_TOPIC_PRINCIPAL: Setting = Setting {
    key: "grantforge.audit.topic.principal",
    default: Fallback::None,
    kind: Kind::Principals,
    mode: Mode::Both,
    doc: "the topic sink, required: the `Type:name` principal the producer logs in as; its requests with the sink's client id are never audited",
};
pub const AUDIT_TOPIC_CLIENT_ID: Setting = Setting {
    key: "grantforge.audit.topic.client.id",
    default: Fallback::Value("grantforge-audit"),
    kind: Kind::Name,
    mode: Mode::Both,
    doc: "the topic sink: the client id of its producer and admin client",
};
pub const AUDIT_TOPIC_PARTITIONS: Setting = Setting {
    key: "grantforge.audit.topic.partitions",
    default: Fallback::Value("3"),
    kind: Kind::Number { min: 1, max: 10000 },
    mode: Mode::Both,
    doc: "the topic sink: partitions of the topic when the agent creates it",
};
pub const AUDIT_TOPIC_REPLICATION_FACTOR: Setting = Setting {
    key: "grantforge.audit.topic.replication.factor",
    default: Fallback::Value("3"),
    kind: Kind::Number { min: 1, max: 32767 },
    mode: Mode::Both,
    doc: "the topic sink: replication factor of the topic when the agent creates it",
};
pub const AUDIT_TOPIC_RETENTION: Setting = Setting {
    key: "grantforge.audit.topic.retention.ms",
    default: Fallback::Value("7776000000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Both,
    doc: "the topic sink: `retention.ms` of the topic when the agent creates it (with `cleanup.policy=delete`)",
};
pub const AUDIT_TOPIC_TIMEOUT: Setting = Setting {
    key: "grantforge.audit.topic.timeout.ms",
    default: Fallback::Value("5000"),
    kind: Kind::Millis { min: 100 },
    mode: Mode::Both,
    doc: "the topic sink: how long the agent waits for a batch to be written before it spools the batch, to be sent again",
};
pub const AUDIT_QUEUE_CAPACITY: Setting = Setting {
    key: "grantforge.audit.queue.capacity",
    default: Fallback::Value("10000"),
    kind: Kind::Number {
        min: 1,
        max: u32::MAX as u64,
    },
    mode: Mode::Both,
    doc: "folded audit groups held in memory, shared fairly between outcomes and principals; past a principal's share its accesses are counted in overflow groups",
};
pub const AUDIT_SPOOL_LIMIT_BYTES: Setting = Setting {
    key: "grantforge.audit.spool.limit.bytes",
    default: Fallback::Value("67108864"),
    kind: Kind::Number {
        min: 0,
        max: u64::MAX >> 1,
    },
    mode: Mode::Both,
    doc: "the most each audit spool may hold: the server's while it is away, the topic sink's while its topic cannot be written",
};
pub const AUDIT_BATCH_SIZE: Setting = Setting {
    key: "grantforge.audit.batch.size",
    default: Fallback::Value("500"),
    kind: Kind::Number { min: 1, max: 1000 },
    mode: Mode::Both,
    doc: "access events per request to the server, and per batch the topic sink's producer writes",
};
pub const AUDIT_FLUSH_INTERVAL: Setting = Setting {
    key: "grantforge.audit.flush.interval.ms",
    default: Fallback::Value("5000"),
    kind: Kind::Millis { min: 1 },
    mode: Mode::Both,
    doc: "how often the spools (the server's, the topic sink's) are retried",
};
pub const HYBRID_RESOURCE_PREFIXES: Setting = Setting {
    key: "grantforge.hybrid.resource.prefixes",
    default: Fallback::None,
    kind: Kind::Prefixes,
    mode: Mode::Both,
    doc: "hybrid mode (`GrantForgeHybridAuthorizer`): `,`-separated beginnings of resource names (`payments.,orders.`) whose questions GrantForge's policies decide first, team by team; other resources' questions go to Kafka's ACLs alone. Unset: every resource",
};
pub const NATIVE_LIBRARY_PATH: Setting = Setting {
    key: "grantforge.native.library.path",
    default: Fallback::None,
    kind: Kind::Shim,
    mode: Mode::Both,
    doc: "load the native library from this file instead of the one inside the JAR",
};
pub const SNAPSHOT_MAX_BYTES: Setting = Setting {
    key: "grantforge.snapshot.max.bytes",
    default: Fallback::Value("67108864"),
    kind: Kind::Number {
        min: 1,
        max: u64::MAX >> 1,
    },
    mode: Mode::Both,
    doc: "largest snapshot accepted",
};

/// Every setting, in the order of the docs' table. A `grantforge.*` key not here is refused.
pub const SETTINGS: &[&Setting] = &[
    &POLICY_FILE,
    &POLICY_FILE_POLL_INTERVAL,
    &SERVER_URL,
    &TOKEN_FILE,
    &INSTANCE,
    &CACHE_DIR,
    &SIGNING_KEY_FILE,
    &SSL_CA_FILE,
    &START_TIMEOUT,
    &REFRESH_INTERVAL,
    &DOWNLOAD_JITTER,
    &REVALIDATE_INTERVAL,
    &SNAPSHOT_MAX_AGE,
    &BREAK_GLASS_DIR,
    &SERVICE_RENAMED_TO,
    &CONNECT_TIMEOUT,
    &READ_TIMEOUT,
    &SNAPSHOT_TIMEOUT,
    &DECISION_CACHE_MAX_ENTRIES,
    &DECISION_CACHE_TTL,
    &AUDIT_FOLD_WINDOW,
    &AUDIT_SUPER_USERS_MUTATIONS,
    &AUDIT_EXCLUDED_PRINCIPALS,
    &AUDIT_SINKS,
    &AUDIT_ROUTES,
    &AUDIT_LOG_FORMAT,
    &AUDIT_TOPIC,
    &AUDIT_TOPIC_FORMAT,
    &AUDIT_TOPIC_BOOTSTRAP_SERVERS,
    &AUDIT_TOPIC_PRODUCER_CONFIG,
    &AUDIT_TOPIC_PRINCIPAL,
    &AUDIT_TOPIC_CLIENT_ID,
    &AUDIT_TOPIC_PARTITIONS,
    &AUDIT_TOPIC_REPLICATION_FACTOR,
    &AUDIT_TOPIC_RETENTION,
    &AUDIT_TOPIC_TIMEOUT,
    &AUDIT_QUEUE_CAPACITY,
    &AUDIT_SPOOL_LIMIT_BYTES,
    &AUDIT_BATCH_SIZE,
    &AUDIT_FLUSH_INTERVAL,
    &HYBRID_RESOURCE_PREFIXES,
    &NATIVE_LIBRARY_PATH,
    &SNAPSHOT_MAX_BYTES,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn repo_file(path: &str) -> PathBuf {
        crate::test_support::in_crate("").join("../..").join(path)
    }

    #[test]
    fn keys_are_unique_and_the_table_is_consistent() {
        let mut seen = std::collections::BTreeSet::new();
        for setting in SETTINGS {
            assert!(
                seen.insert(setting.key),
                "{} is in the table twice",
                setting.key
            );
            assert!(setting.key.starts_with("grantforge."), "{}", setting.key);
            assert!(
                !setting.doc.is_empty() && !setting.doc.contains(['\n', '|']),
                "{}: one line of doc",
                setting.key
            );
            assert_eq!(find(setting.key), Some(*setting));
            match (setting.kind.range(), setting.default) {
                (Some((min, max)), Fallback::Value(value)) => {
                    let n: u64 = value
                        .parse()
                        .unwrap_or_else(|e| panic!("{}: default `{value}`: {e}", setting.key));
                    assert!(
                        min <= max && (min..=max).contains(&n),
                        "{}: default {n} outside {min}..={max}",
                        setting.key
                    );
                }
                (Some(_), _) => panic!("{}: a number needs a default", setting.key),
                (None, Fallback::Value(value)) if setting.kind == Kind::Name => {
                    assert!(
                        !value.is_empty() && value.bytes().all(|b| b.is_ascii_graphic()),
                        "{}: default `{value}`",
                        setting.key
                    )
                }
                (None, Fallback::Value(value)) if setting.kind == Kind::Switch => {
                    assert!(
                        value.parse::<bool>().is_ok(),
                        "{}: default `{value}`",
                        setting.key
                    )
                }
                (None, Fallback::Value(value)) if matches!(setting.kind, Kind::OneOf(_)) => {
                    let Kind::OneOf(words) = setting.kind else {
                        unreachable!()
                    };
                    assert!(words.contains(&value), "{}: default `{value}`", setting.key)
                }
                (None, Fallback::Value(_)) => {
                    panic!(
                        "{}: only numbers and switches have a written default",
                        setting.key
                    )
                }
                (None, _) => {}
            }
        }
        assert_eq!(find("grantforge.polcy.file"), None);
    }

    /// The rows of every table in a markdown text whose first cell is a `grantforge.*` key: the
    /// key and its default cell (`None` when the table has no default column).
    fn key_rows(markdown: &str) -> Vec<(String, Option<String>)> {
        let mut rows = Vec::new();
        let mut header: Option<Vec<String>> = None;
        for line in markdown.lines() {
            let line = line.trim();
            if !line.starts_with('|') {
                header = None;
                continue;
            }
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            let Some(columns) = &header else {
                header = Some(cells);
                continue;
            };
            if cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
            {
                continue;
            }
            let key = cells[0].trim_matches('`');
            if key.starts_with("grantforge.") {
                let default = columns
                    .iter()
                    .position(|c| c == "default")
                    .map(|i| cells.get(i).cloned().unwrap_or_default());
                rows.push((key.to_string(), default));
            }
        }
        rows
    }

    /// Where a configuration document disagrees with the table: a setting without a row giving
    /// its default, a default other than the code's, a `grantforge.*` key that is no setting.
    fn disagreements(markdown: &str) -> Vec<String> {
        let rows = key_rows(markdown);
        let mut problems = Vec::new();
        for setting in SETTINGS {
            let defaults: Vec<&String> = rows
                .iter()
                .filter(|(key, _)| key == setting.key)
                .filter_map(|(_, d)| d.as_ref())
                .collect();
            if defaults.is_empty() {
                problems.push(format!("{} has no row with a default", setting.key));
            }
            for shown in defaults {
                if *shown != setting.shown_default() {
                    problems.push(format!(
                        "{}: the docs say default {shown}, the code {}",
                        setting.key,
                        setting.shown_default()
                    ));
                }
            }
        }
        for (key, _) in &rows {
            if find(key).is_none() {
                problems.push(format!("{key} is in the docs but is no setting"));
            }
        }
        problems
    }

    #[test]
    fn docs_configuration_md_agrees_with_the_table() {
        let docs = std::fs::read_to_string(repo_file("docs/configuration.md")).unwrap();
        let problems = disagreements(&docs);
        assert!(
            problems.is_empty(),
            "docs/configuration.md disagrees with crates/grantforge-agent/src/settings.rs:\n  {}\nThe table in the code:\n{}",
            problems.join("\n  "),
            markdown_table()
        );
    }

    #[test]
    fn a_rendered_table_agrees_and_a_wrong_one_is_caught() {
        assert_eq!(disagreements(&markdown_table()), Vec::<String>::new());
        let wrong = markdown_table()
            .replace(
                "| `grantforge.audit.batch.size` | `500` |",
                "| `grantforge.audit.batch.size` | `1000` |",
            )
            .replace(
                "| `grantforge.connect.timeout.ms` |",
                "| `grantforge.conect.timeout.ms` |",
            )
            + "| `grantforge.retired.key` | — | gone |\n";
        assert_eq!(
            disagreements(&wrong),
            [
                "grantforge.connect.timeout.ms has no row with a default",
                "grantforge.audit.batch.size: the docs say default `1000`, the code `500`",
                "grantforge.conect.timeout.ms is in the docs but is no setting",
                "grantforge.retired.key is in the docs but is no setting",
            ]
        );
    }

    #[test]
    fn the_docs_reader_sees_keys_defaults_and_extra_keys() {
        let text = "| key | default | meaning |\n|---|---|---|\n| `grantforge.a` | `1` | x |\n| `other` | — | y |\n\n| key | meaning |\n|---|---|\n| `grantforge.b` | z |\n";
        assert_eq!(
            key_rows(text),
            [
                ("grantforge.a".to_string(), Some("`1`".to_string())),
                ("grantforge.b".to_string(), None)
            ]
        );
        assert!(markdown_table()
            .contains("| `grantforge.start.timeout.ms` | `30000` | client listeners open"));
        assert!(markdown_table().contains("| `grantforge.instance` | host name |"));
    }

    /// The Java shim names no key of its own but the one it must read before the library loads.
    #[test]
    fn the_java_shim_names_only_the_native_library_path() {
        let mut files = vec![repo_file("java-shim/src/main/java")];
        let mut literals = Vec::new();
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else if path.extension().is_some_and(|e| e == "java") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, _) in text.match_indices("\"grantforge.") {
                    let literal = text[i + 1..].split('"').next().unwrap_or_default();
                    literals.push((
                        path.file_name().unwrap().to_string_lossy().into_owned(),
                        literal.to_string(),
                    ));
                }
            }
        }
        for (file, literal) in &literals {
            // "grantforge." is the prefix the shim passes on, not a key.
            assert!(
                literal == "grantforge." || literal == NATIVE_LIBRARY_PATH.key,
                "{file} names \"{literal}\""
            );
        }
        assert!(
            literals
                .iter()
                .any(|(file, literal)| file == "NativeLibraryLoader.java"
                    && literal == NATIVE_LIBRARY_PATH.key),
            "NativeLibraryLoader.PATH_KEY is {}",
            NATIVE_LIBRARY_PATH.key
        );
    }
}
