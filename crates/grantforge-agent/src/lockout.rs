//! A node that is about to lock itself out says so.
//!
//! Brokers and controllers reach each other over the listeners Kafka's settings name for it
//! (`inter.broker.listener.name`, or the one of `security.inter.broker.protocol`, and
//! `controller.listener.names`), and what they do there is `CLUSTER_ACTION` on the cluster. When
//! the policies refuse that to a principal arriving on such a listener, replication or a node's
//! registration stalls, and Kafka only logs errors about timeouts. The agent then writes one WARN
//! per principal and listener naming `super.users`: the principal the node must hold there, and
//! the listener it came over. A bounded number of pairs is remembered, so a storm of principals
//! costs a few lines, not a log each.

use std::collections::BTreeSet;

use grantforge_kafka::Principal;
use parking_lot::Mutex;

/// How many principal and listener pairs are warned about; later ones are not.
const WARNED_AT_MOST: usize = 16;
/// The characters of a principal's name kept and shown, so the pairs remembered stay small in
/// bytes whatever names clients bring (a SASL name may be hundreds of KiB). The listener is one of
/// the node's own configured names.
const NAME_CHARS: usize = 256;

/// The listeners nodes use among themselves, each with the Kafka key that names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InterNodeListeners(Vec<(String, &'static str)>);

impl InterNodeListeners {
    /// From Kafka's settings: `inter.broker.listener.name`, else the listener named after
    /// `security.inter.broker.protocol` (Kafka's default `PLAINTEXT`), and each of
    /// `controller.listener.names`.
    pub fn from_kafka(
        inter_broker_listener: Option<&str>,
        inter_broker_protocol: Option<&str>,
        controller_listeners: Option<&str>,
    ) -> InterNodeListeners {
        let mut listeners = Vec::new();
        match (
            nonblank(inter_broker_listener),
            nonblank(inter_broker_protocol),
        ) {
            (Some(name), _) => listeners.push((name.to_string(), INTER_BROKER_LISTENER_NAME)),
            (None, Some(protocol)) => {
                listeners.push((protocol.to_string(), SECURITY_INTER_BROKER_PROTOCOL))
            }
            (None, None) => {
                listeners.push(("PLAINTEXT".to_string(), SECURITY_INTER_BROKER_PROTOCOL))
            }
        }
        for name in controller_listeners
            .unwrap_or("")
            .split(',')
            .filter_map(|n| nonblank(Some(n)))
        {
            listeners.push((name.to_string(), CONTROLLER_LISTENER_NAMES));
        }
        InterNodeListeners(listeners)
    }

    /// The Kafka key naming `listener` for traffic between nodes, if it is such a listener.
    /// Listener names compare as Kafka compares them: case-insensitively.
    fn key_of(&self, listener: &str) -> Option<&'static str> {
        self.0
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(listener))
            .map(|&(_, key)| key)
    }
}

/// Kafka's keys that name the listeners between nodes.
pub const INTER_BROKER_LISTENER_NAME: &str = "inter.broker.listener.name";
pub const SECURITY_INTER_BROKER_PROTOCOL: &str = "security.inter.broker.protocol";
pub const CONTROLLER_LISTENER_NAMES: &str = "controller.listener.names";

fn nonblank(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// Warns, once per principal and listener, when a cluster action on a listener between nodes is
/// refused.
#[derive(Debug, Default)]
pub struct LockoutHint {
    listeners: InterNodeListeners,
    warned: Mutex<BTreeSet<(String, String)>>,
}

impl LockoutHint {
    pub fn new(listeners: InterNodeListeners) -> LockoutHint {
        LockoutHint {
            listeners,
            warned: Mutex::new(BTreeSet::new()),
        }
    }

    /// The policies refused `principal` a cluster action on `listener`: one WARN the first time,
    /// if nodes use that listener among themselves. Returns whether it warned.
    pub fn refused_cluster_action(&self, principal: &Principal, listener: &str) -> bool {
        let Some(key) = self.listeners.key_of(listener) else {
            return false;
        };
        let name: String = format!("{}:{}", principal.principal_type, principal.name)
            .chars()
            .take(NAME_CHARS)
            .collect();
        {
            let mut warned = self.warned.lock();
            if warned.len() >= WARNED_AT_MOST
                || !warned.insert((name.clone(), listener.to_string()))
            {
                return false;
            }
        }
        tracing::warn!("{}", lockout_warning(principal, &name, listener, key));
        true
    }
}

/// Kafka's principal for a connection that did not authenticate (a PLAINTEXT listener, or SSL
/// without client certificates): every such client is it.
const ANONYMOUS: &str = "ANONYMOUS";

/// The WARN for a refused cluster action between nodes. For an authenticated principal the fix is
/// to name it in `super.users`. For `User:ANONYMOUS` that fix would make every client that
/// connects without authenticating a super user: the safe fix, authenticating the nodes on that
/// listener, comes first, and the dangerous one is named as such.
fn lockout_warning(principal: &Principal, name: &str, listener: &str, key: &str) -> String {
    let refused = format!(
        "the policies refuse {name} CLUSTER_ACTION on listener {listener}, which Kafka uses between nodes ({key})"
    );
    let see = "docs/transports.md, \"Mistakes that lock a cluster out\"";
    if principal.principal_type == "User" && principal.name == ANONYMOUS {
        format!(
            "{refused}: nodes that connect there do not authenticate, so they cannot replicate or register. Fix it safely: make {listener} authenticate the nodes (SASL, or TLS with client certificates: its protocol in listener.security.protocol.map) and put the nodes' own principal in super.users. Do NOT put {name} in super.users: on a listener without authentication every client is {name}, so every client would become a super user; {see}"
        )
    } else {
        format!(
            "{refused}: until super.users names {name} (or a policy allows it cluster_action on the cluster), nodes that connect as it cannot replicate or register; {see}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str) -> Principal {
        Principal {
            principal_type: "User".into(),
            name: name.into(),
        }
    }

    fn hint() -> LockoutHint {
        LockoutHint::new(InterNodeListeners::from_kafka(
            Some("REPLICATION"),
            Some("SASL_SSL"),
            Some("CONTROLLER, CONTROLLER_TLS"),
        ))
    }

    #[test]
    fn a_refused_cluster_action_between_nodes_warns_once_per_principal_and_listener() {
        let hint = hint();
        let broker = user("CN=broker,OU=brokers");
        assert!(hint.refused_cluster_action(&broker, "REPLICATION"));
        assert!(!hint.refused_cluster_action(&broker, "REPLICATION"));
        assert!(hint.refused_cluster_action(&broker, "controller_tls"));
        assert!(hint.refused_cluster_action(&user("other"), "REPLICATION"));
    }

    #[test]
    fn client_listeners_never_warn() {
        let hint = hint();
        assert!(!hint.refused_cluster_action(&user("alice"), "EXTERNAL"));
        // the protocol names the inter-broker listener only when inter.broker.listener.name is unset
        assert!(!hint.refused_cluster_action(&user("alice"), "SASL_SSL"));
    }

    #[test]
    fn kafkas_default_inter_broker_listener_is_plaintext() {
        let hint = LockoutHint::new(InterNodeListeners::from_kafka(None, None, None));
        assert!(hint.refused_cluster_action(&user("ANONYMOUS"), "PLAINTEXT"));
        let by_protocol =
            LockoutHint::new(InterNodeListeners::from_kafka(Some(" "), Some("SSL"), None));
        assert!(by_protocol.refused_cluster_action(&user("CN=b"), "SSL"));
    }

    #[test]
    fn an_unauthenticated_node_is_told_to_authenticate_not_to_make_anonymous_a_super_user() {
        let warning = lockout_warning(
            &user("ANONYMOUS"),
            "User:ANONYMOUS",
            "PLAINTEXT",
            SECURITY_INTER_BROKER_PROTOCOL,
        );
        let safe = warning
            .find("make PLAINTEXT authenticate the nodes")
            .unwrap_or_else(|| panic!("no safe fix: {warning}"));
        let dangerous = warning
            .find("Do NOT put User:ANONYMOUS in super.users")
            .unwrap_or_else(|| panic!("no danger named: {warning}"));
        assert!(safe < dangerous, "the safe fix comes first: {warning}");
        assert!(
            !warning.contains("until super.users names User:ANONYMOUS"),
            "{warning}"
        );
    }

    #[test]
    fn an_authenticated_node_is_told_to_name_its_principal_in_super_users() {
        let warning = lockout_warning(
            &user("broker"),
            "User:broker",
            "REPLICATION",
            INTER_BROKER_LISTENER_NAME,
        );
        assert!(
            warning.contains("until super.users names User:broker"),
            "{warning}"
        );
    }

    #[test]
    fn huge_names_are_remembered_short() {
        let hint = hint();
        let huge = "x".repeat(1 << 20);
        assert!(hint.refused_cluster_action(&user(&huge), "REPLICATION"));
        assert!(!hint.refused_cluster_action(&user(&huge), "REPLICATION"));
        let kept: usize = hint
            .warned
            .lock()
            .iter()
            .map(|(p, l)| p.len() + l.len())
            .sum();
        assert!(
            kept <= NAME_CHARS + "REPLICATION".len(),
            "{kept} bytes kept"
        );
    }

    #[test]
    fn a_storm_of_principals_warns_a_bounded_number_of_times() {
        let hint = hint();
        let warned = (0..100)
            .filter(|i| hint.refused_cluster_action(&user(&format!("u{i}")), "REPLICATION"))
            .count();
        assert_eq!(warned, WARNED_AT_MOST);
    }
}

/// Kafka's key listing the node's listeners (`NAME://host:port,…`).
pub const LISTENERS: &str = "listeners";
/// Kafka's key mapping listener names to security protocols (`NAME:PROTOCOL,…`).
pub const LISTENER_SECURITY_PROTOCOL_MAP: &str = "listener.security.protocol.map";
/// Kafka's key saying whether SSL listeners ask clients for certificates (`none`, its default,
/// `requested`, `required`); `listener.name.<listener, lower case>.ssl.client.auth` overrides it
/// for one listener.
pub const SSL_CLIENT_AUTH: &str = "ssl.client.auth";
/// What starts Kafka's per-listener keys.
pub const LISTENER_KEY_PREFIX: &str = "listener.name.";

/// The one WARN at start when `super.users` names `User:ANONYMOUS` while a listener lets clients
/// in without authenticating: Kafka gives every client of a PLAINTEXT listener, and every client
/// without a certificate of an SSL listener that does not require one, the principal
/// `User:ANONYMOUS`, so anyone who can reach that port is a super user and no policy applies to
/// them. SASL listeners (SASL_SSL included) always authenticate. `kafka` looks Kafka's keys up.
pub fn anonymous_super_user_warning<'a>(
    super_users: &str,
    kafka: impl Fn(&str) -> Option<&'a str>,
) -> Option<String> {
    let names_anonymous = super_users
        .split(';')
        .any(|entry| entry.trim() == "User:ANONYMOUS");
    if !names_anonymous {
        return None;
    }
    let open: Vec<String> = listener_names(kafka(LISTENERS))
        .filter_map(|name| anonymous_on(&name, &kafka).map(|how| format!("listener {name} {how}")))
        .collect();
    if open.is_empty() {
        return None;
    }
    let one = open.len() == 1;
    Some(format!(
        "super.users names User:ANONYMOUS while {}: every client of {} that does not authenticate is User:ANONYMOUS, so anyone who reaches it is a super user and no GrantForge policy applies to them; remove User:ANONYMOUS from super.users, or give {} authentication (SASL_PLAINTEXT, SASL_SSL, or SSL with ssl.client.auth=required)",
        open.join(" and "),
        if one { "it" } else { "them" },
        if one { "that listener" } else { "those listeners" },
    ))
}

/// How a client of `listener` gets in as `User:ANONYMOUS`, in words; `None` when it cannot.
fn anonymous_on<'a>(listener: &str, kafka: &impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    let protocol = protocol_of(listener, kafka(LISTENER_SECURITY_PROTOCOL_MAP));
    if protocol.eq_ignore_ascii_case("PLAINTEXT") {
        return Some("speaks PLAINTEXT".to_string());
    }
    if !protocol.eq_ignore_ascii_case("SSL") {
        return None;
    }
    let own_key = format!(
        "{LISTENER_KEY_PREFIX}{}.{SSL_CLIENT_AUTH}",
        listener.to_lowercase()
    );
    let (key, value) = match (kafka(&own_key), kafka(SSL_CLIENT_AUTH)) {
        (Some(value), _) => (own_key.as_str(), value.trim()),
        (None, Some(value)) => (SSL_CLIENT_AUTH, value.trim()),
        (None, None) => {
            return Some(format!(
                "speaks SSL without requiring client certificates ({SSL_CLIENT_AUTH} not set: none)"
            ))
        }
    };
    (!value.eq_ignore_ascii_case("required"))
        .then(|| format!("speaks SSL without requiring client certificates ({key}={value})"))
}

/// The listener names of Kafka's `listeners` (`PLAINTEXT://:9092,CONTROLLER://:9093`).
fn listener_names(listeners: Option<&str>) -> impl Iterator<Item = String> + '_ {
    listeners
        .unwrap_or("")
        .split(',')
        .filter_map(|listener| listener.split_once("://"))
        .map(|(name, _)| name.trim().to_string())
        .filter(|name| !name.is_empty())
}

/// A listener's security protocol: from `listener.security.protocol.map`, else (Kafka's default
/// map) the listener's own name.
fn protocol_of(listener: &str, protocol_map: Option<&str>) -> String {
    protocol_map
        .unwrap_or("")
        .split(',')
        .filter_map(|pair| pair.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case(listener))
        .map_or_else(
            || listener.to_string(),
            |(_, protocol)| protocol.trim().to_string(),
        )
}

#[cfg(test)]
mod anonymous_tests {
    use super::*;

    /// Kafka's settings of a node, as `anonymous_super_user_warning` looks them up.
    fn warning(super_users: &str, kafka: &[(&str, &str)]) -> Option<String> {
        let kafka: std::collections::BTreeMap<&str, &str> = kafka.iter().copied().collect();
        anonymous_super_user_warning(super_users, |key| kafka.get(key).copied())
    }

    #[test]
    fn anonymous_as_a_super_user_with_a_plaintext_listener_is_warned_naming_the_listener() {
        let warned = warning(
            "User:admin; User:ANONYMOUS",
            &[(LISTENERS, "PLAINTEXT://:9092,SASL_SSL://:9093")],
        )
        .unwrap();
        assert!(
            warned.starts_with(
                "super.users names User:ANONYMOUS while listener PLAINTEXT speaks PLAINTEXT"
            ),
            "{warned}"
        );
        let mapped = warning(
            "User:ANONYMOUS",
            &[
                (
                    LISTENERS,
                    "INTERNAL://:9092,CONTROLLER://:9093,EXTERNAL://:9094",
                ),
                (
                    LISTENER_SECURITY_PROTOCOL_MAP,
                    "INTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:SASL_SSL",
                ),
            ],
        )
        .unwrap();
        assert!(mapped.contains("listener CONTROLLER speaks"), "{mapped}");
        assert!(
            !mapped.contains("INTERNAL") && !mapped.contains("EXTERNAL"),
            "{mapped}"
        );
    }

    /// With SSL, a client that brings no certificate is `User:ANONYMOUS` unless the listener
    /// requires one: Kafka's default is `none`, and `requested` lets such clients in too.
    #[test]
    fn an_ssl_listener_that_does_not_require_client_certificates_is_warned_naming_it() {
        let ssl = [
            (LISTENERS, "SASL_SSL://:9093,EXTERNAL://:9094"),
            (
                LISTENER_SECURITY_PROTOCOL_MAP,
                "SASL_SSL:SASL_SSL,EXTERNAL:SSL",
            ),
        ];
        let unset = warning("User:ANONYMOUS", &ssl).unwrap();
        assert!(
            unset.starts_with("super.users names User:ANONYMOUS while listener EXTERNAL speaks SSL without requiring client certificates (ssl.client.auth not set: none)"),
            "{unset}"
        );
        assert!(
            !unset.contains("listener SASL_SSL"),
            "SASL_SSL always authenticates: {unset}"
        );
        let requested = warning(
            "User:ANONYMOUS",
            &[&ssl[..], &[(SSL_CLIENT_AUTH, "requested")]].concat(),
        )
        .unwrap();
        assert!(
            requested.contains("listener EXTERNAL speaks SSL without requiring client certificates (ssl.client.auth=requested)"),
            "{requested}"
        );
        let overridden = warning(
            "User:ANONYMOUS",
            &[
                &ssl[..],
                &[
                    (SSL_CLIENT_AUTH, "required"),
                    ("listener.name.external.ssl.client.auth", "none"),
                ],
            ]
            .concat(),
        )
        .unwrap();
        assert!(
            overridden.contains("(listener.name.external.ssl.client.auth=none)"),
            "the listener's own key overrides: {overridden}"
        );
    }

    #[test]
    fn an_ssl_listener_that_requires_client_certificates_is_not_warned() {
        let ssl = [
            (LISTENERS, "EXTERNAL://:9094"),
            (LISTENER_SECURITY_PROTOCOL_MAP, "EXTERNAL:SSL"),
        ];
        assert_eq!(
            warning(
                "User:ANONYMOUS",
                &[&ssl[..], &[(SSL_CLIENT_AUTH, "required")]].concat()
            ),
            None
        );
        assert_eq!(
            warning(
                "User:ANONYMOUS",
                &[
                    &ssl[..],
                    &[
                        (SSL_CLIENT_AUTH, "none"),
                        ("listener.name.external.ssl.client.auth", "REQUIRED"),
                    ],
                ]
                .concat()
            ),
            None,
            "the listener's own key overrides, in Kafka's any case"
        );
    }

    #[test]
    fn a_plaintext_and_an_ssl_listener_are_named_in_one_warning() {
        let warned = warning(
            "User:ANONYMOUS",
            &[(LISTENERS, "PLAINTEXT://:9092,SSL://:9093")],
        )
        .unwrap();
        assert!(
            warned.contains("while listener PLAINTEXT speaks PLAINTEXT and listener SSL speaks SSL without requiring client certificates"),
            "{warned}"
        );
        assert!(
            warned.contains("give those listeners authentication"),
            "{warned}"
        );
    }

    #[test]
    fn no_warning_without_anonymous_or_without_a_listener_that_lets_it_in() {
        let plaintext = [(LISTENERS, "PLAINTEXT://:9092")];
        assert_eq!(warning("User:admin", &plaintext), None);
        assert_eq!(warning("User:anonymous", &plaintext), None);
        assert_eq!(
            warning("User:ANONYMOUS", &[(LISTENERS, "SASL_SSL://:9093")]),
            None
        );
        assert_eq!(warning("User:ANONYMOUS", &[]), None);
    }
}
