//! Where each access event goes: the audit's sinks (`grantforge.audit.sinks`) and the rules that
//! route events among them by kind of request, outcome and resource (`grantforge.audit.routes`).
//! The audit's events are [`Routable`] (`audit/routes.rs`).
//!
//! A rule is `kind,outcome,resource=sink+sink`; rules are `;`-separated and the first that matches
//! an event names its sinks. An event no rule matches goes to every sink, so a rule narrows where
//! some events go and never loses one: every event reaches at least one sink.

use std::fmt;

use grantforge_kafka::ResourceType;

/// What a rule reads of an event.
pub trait Routable: Clone {
    /// Kafka's request type (`ApiKeys.id`).
    fn request_type(&self) -> i16;
    fn allowed(&self) -> bool;
    fn resource_type(&self) -> Option<ResourceType>;
    fn resource(&self) -> &str;
}

/// One place the audit goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// GrantForge's audit, through the server (server mode).
    GrantForge,
    /// A Kafka topic, written by the Java shim's producer.
    Topic,
    /// The log `grantforge.audit`.
    Log,
}

impl Sink {
    pub const ALL: [Sink; 3] = [Sink::GrantForge, Sink::Topic, Sink::Log];

    /// The sink's name in the settings and the metrics.
    pub fn name(self) -> &'static str {
        match self {
            Sink::GrantForge => "grantforge",
            Sink::Topic => "topic",
            Sink::Log => "log",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }

    fn parse(word: &str) -> Result<Sink, String> {
        Sink::ALL
            .into_iter()
            .find(|sink| sink.name() == word)
            .ok_or_else(|| format!("`{word}` is no sink; the sinks are grantforge, topic and log"))
    }
}

/// A set of sinks.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Sinks(u8);

impl Sinks {
    pub fn of(sinks: &[Sink]) -> Sinks {
        Sinks(sinks.iter().fold(0, |bits, sink| bits | sink.bit()))
    }

    pub fn contains(self, sink: Sink) -> bool {
        self.0 & sink.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn is_within(self, other: Sinks) -> bool {
        self.0 & !other.0 == 0
    }

    /// `sink+sink` (rules) or `sink,sink` (`grantforge.audit.sinks`), each once.
    pub fn parse(text: &str, separator: char) -> Result<Sinks, String> {
        let mut sinks = Sinks::default();
        for word in text.split(separator).map(str::trim) {
            let sink = Sink::parse(word)?;
            if sinks.contains(sink) {
                return Err(format!("sink `{word}` is named twice"));
            }
            sinks.0 |= sink.bit();
        }
        Ok(sinks)
    }
}

impl fmt::Debug for Sinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Sink::ALL
            .into_iter()
            .filter(|s| self.contains(*s))
            .map(Sink::name)
            .collect();
        write!(f, "{}", names.join("+"))
    }
}

/// The kind of request an event stands for, by Kafka's request type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Writes: `PRODUCE`, and the transactional producer's `INIT_PRODUCER_ID`,
    /// `ADD_PARTITIONS_TO_TXN`, `ADD_OFFSETS_TO_TXN`, `END_TXN` and `TXN_OFFSET_COMMIT`.
    Produce,
    /// Reads: `FETCH`, `LIST_OFFSETS`, `OFFSET_FOR_LEADER_EPOCH`, and the groups' requests
    /// (`OFFSET_COMMIT`, `OFFSET_FETCH`, `FIND_COORDINATOR`, `JOIN_GROUP`, `HEARTBEAT`,
    /// `LEAVE_GROUP`, `SYNC_GROUP`, `CONSUMER_GROUP_HEARTBEAT`, `SHARE_GROUP_HEARTBEAT`,
    /// `SHARE_FETCH`, `SHARE_ACKNOWLEDGE`, `STREAMS_GROUP_HEARTBEAT`).
    Consume,
    /// Every other request: metadata, creating, deleting, describing and altering topics, groups,
    /// configs, ACLs, quotas, the cluster.
    Management,
}

/// Kafka's request types of [`Kind::Produce`].
const PRODUCE_REQUESTS: [i16; 6] = [0, 22, 24, 25, 26, 28];
/// Kafka's request types of [`Kind::Consume`].
const CONSUME_REQUESTS: [i16; 15] = [1, 2, 8, 9, 10, 11, 12, 13, 14, 23, 68, 76, 78, 79, 88];

impl Kind {
    pub fn of_request(request_type: i16) -> Kind {
        if PRODUCE_REQUESTS.contains(&request_type) {
            Kind::Produce
        } else if CONSUME_REQUESTS.contains(&request_type) {
            Kind::Consume
        } else {
            Kind::Management
        }
    }
}

/// Which resources a rule matches: any, or those of one type whose name is `name` (or begins
/// with it, written `name*`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Resources {
    Any,
    Named {
        resource_type: ResourceType,
        name: String,
        prefix: bool,
    },
}

impl Resources {
    fn parse(text: &str) -> Result<Resources, String> {
        if text == "*" {
            return Ok(Resources::Any);
        }
        let (level, name) = text.split_once(':').ok_or_else(|| {
            format!("resource `{text}` is neither `*` nor `type:name` (topic:orders, group:app-*)")
        })?;
        let resource_type = ResourceType::from_level(level).ok_or_else(|| {
            let levels: Vec<&str> = ResourceType::ALL.iter().map(|t| t.level()).collect();
            format!(
                "`{level}` is no resource type; one of {}",
                levels.join(", ")
            )
        })?;
        let (name, prefix) = match name.strip_suffix('*') {
            Some(start) => (start, true),
            None => (name, false),
        };
        Ok(Resources::Named {
            resource_type,
            name: name.to_string(),
            prefix,
        })
    }

    fn matches(&self, event: &impl Routable) -> bool {
        match self {
            Resources::Any => true,
            Resources::Named {
                resource_type,
                name,
                prefix,
            } => {
                event.resource_type() == Some(*resource_type)
                    && if *prefix {
                        event.resource().starts_with(name.as_str())
                    } else {
                        event.resource() == name
                    }
            }
        }
    }
}

/// One rule: the events it matches (`None`: any kind, any outcome) and where they go.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Route {
    kind: Option<Kind>,
    allowed: Option<bool>,
    resources: Resources,
    sinks: Sinks,
}

impl Route {
    fn parse(text: &str) -> Result<Route, String> {
        let (what, sinks) = text
            .split_once('=')
            .ok_or_else(|| format!("rule `{text}` has no `=sink`"))?;
        let fields: Vec<&str> = what.split(',').map(str::trim).collect();
        let [kind, outcome, resources] = fields[..] else {
            return Err(format!(
                "rule `{text}` needs three fields before `=`: kind,outcome,resource"
            ));
        };
        let kind = match kind {
            "any" => None,
            "produce" => Some(Kind::Produce),
            "consume" => Some(Kind::Consume),
            "management" => Some(Kind::Management),
            other => {
                return Err(format!(
                    "`{other}` is no kind of request; one of any, produce, consume, management"
                ))
            }
        };
        let allowed = match outcome {
            "any" => None,
            "allowed" => Some(true),
            "denied" => Some(false),
            other => {
                return Err(format!(
                    "`{other}` is no outcome; one of any, allowed, denied"
                ))
            }
        };
        Ok(Route {
            kind,
            allowed,
            resources: Resources::parse(resources)?,
            sinks: Sinks::parse(sinks.trim(), '+')?,
        })
    }

    fn matches(&self, event: &impl Routable) -> bool {
        self.kind
            .is_none_or(|kind| kind == Kind::of_request(event.request_type()))
            && self
                .allowed
                .is_none_or(|allowed| allowed == event.allowed())
            && self.resources.matches(event)
    }
}

/// The audit's sinks and the rules among them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routes {
    sinks: Sinks,
    rules: Vec<Route>,
}

impl Routes {
    /// Every event to every one of `sinks`.
    pub fn to_all(sinks: Sinks) -> Routes {
        Routes {
            sinks,
            rules: Vec::new(),
        }
    }

    /// `rules` as `grantforge.audit.routes` writes them, each naming only sinks of `sinks`.
    pub fn parse(sinks: Sinks, rules: &str) -> Result<Routes, String> {
        let rules = rules
            .split(';')
            .map(str::trim)
            .filter(|rule| !rule.is_empty())
            .map(Route::parse)
            .collect::<Result<Vec<Route>, String>>()?;
        if let Some(rule) = rules.iter().find(|rule| !rule.sinks.is_within(sinks)) {
            return Err(format!(
                "a rule routes to {:?}, but the audit's sinks are {sinks:?}; add the sink to grantforge.audit.sinks or change the rule",
                rule.sinks
            ));
        }
        Ok(Routes { sinks, rules })
    }

    /// Every sink the audit writes to.
    pub fn sinks(&self) -> Sinks {
        self.sinks
    }

    /// Where `event` goes: the first matching rule's sinks, else every sink.
    pub fn route(&self, event: &impl Routable) -> Sinks {
        self.rules
            .iter()
            .find(|rule| rule.matches(event))
            .map_or(self.sinks, |rule| rule.sinks)
    }

    /// The events of `events` that go to `sink`.
    pub fn select<E: Routable>(&self, events: &[E], sink: Sink) -> Vec<E> {
        if !self.sinks.contains(sink) {
            return Vec::new();
        }
        events
            .iter()
            .filter(|event| self.route(*event).contains(sink))
            .cloned()
            .collect()
    }
}
