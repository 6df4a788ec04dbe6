//! Access events: what the audit tells GrantForge (or the log), and in which words.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use grantforge_engine::Instant;
use grantforge_kafka::{api_key_name, Operation, ResourceType};
use serde_json::{json, Value};

use crate::audit::limits::{self, clamp, OVERFLOW_RESOURCE};
use crate::audit::names::{self, Cut};
use crate::keys::Access;

/// One access event, possibly standing for `count` identical accesses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessEvent {
    /// Unique and stable: assigned once, so a resent (or spooled and resent) event is deduplicated.
    pub event_id: String,
    /// Who accessed what, from where, in which request (names as the audit keeps them).
    pub access: Access,
    /// Set when the resource's name was longer than the server takes (see `names`).
    pub resource_cut: Option<Cut>,
    pub request_version: i16,
    pub listener: String,
    pub client_id: String,
    pub allowed: bool,
    pub policy_id: Option<i64>,
    pub policy_version: i64,
    pub count: u64,
    pub first: Instant,
    pub last: Instant,
    /// The principal's accesses past its audit share (see `fold`): no resource, address or policy.
    pub overflow: bool,
    /// Set on the disagreements of shadow and compare modes (`comparison`).
    pub comparison: Option<Comparison>,
    /// Set when Kafka's ACLs decided the access (hybrid mode: no policy did): the deciding ACL in
    /// words (empty in an overflow group, which keeps none).
    pub kafka_acl: Option<String>,
}

/// What a disagreement event says beyond an access: which authorizer decided, and Kafka's side.
/// The other side's answer is the opposite of Kafka's (it is a disagreement).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    pub decider: Decider,
    pub kafka_allowed: bool,
    /// The Kafka ACL behind Kafka's answer, in words.
    pub kafka_basis: String,
}

impl Comparison {
    /// The disagreement in words, leading the event's request text and log line.
    fn describe(&self, policy_id: Option<i64>) -> String {
        let policy = policy_id.map_or_else(|| "no policy".to_string(), |id| format!("policy {id}"));
        let (kafka, grantforge) = if self.kafka_allowed {
            ("allows", "refuses")
        } else {
            ("refuses", "allows")
        };
        format!(
            "{} disagreement ({} decides): GrantForge {grantforge} ({policy}), Kafka {kafka} ({})",
            self.decider.mode(),
            match self.decider {
                Decider::Kafka => "Kafka",
                Decider::GrantForge => "GrantForge",
            },
            self.kafka_basis
        )
    }
}

impl AccessEvent {
    pub(crate) fn new(event_id: String, key: &FoldKey, parts: EventParts) -> AccessEvent {
        AccessEvent {
            event_id,
            access: key.access.clone(),
            resource_cut: key.resource_cut,
            request_version: parts.request_version,
            listener: parts.listener,
            client_id: parts.client_id,
            allowed: parts.allowed,
            policy_id: key.policy_id,
            policy_version: parts.policy_version,
            count: parts.count,
            first: parts.first,
            last: parts.last,
            overflow: key.overflow,
            comparison: None,
            kafka_acl: key.acl.clone(),
        }
    }

    /// Who enforced the answer: `NATIVE` where Kafka's ACLs decided (a shadow-mode disagreement,
    /// hybrid mode's questions no policy decides), else `GRANTFORGE`.
    pub fn enforcer(&self) -> &'static str {
        match (&self.comparison, &self.kafka_acl) {
            (
                Some(Comparison {
                    decider: Decider::Kafka,
                    ..
                }),
                _,
            )
            | (None, Some(_)) => "NATIVE",
            _ => "GRANTFORGE",
        }
    }

    /// The event's `user`, as [`event_user`] names it.
    pub(crate) fn user(&self) -> String {
        event_user(&self.access.principal_type, &self.access.principal_name)
    }

    /// The request in words: what a cut resource lost (first, as GrantForge's HDFS agent says
    /// it), type and version, client id, listener, and the fold.
    fn request_text(&self, cut: Option<Cut>) -> String {
        let mut text = cut.map_or_else(String::new, |cut| format!("{}; ", cut.describe()));
        if let Some(c) = &self.comparison {
            text += &format!("{}; ", c.describe(self.policy_id));
        }
        if let Some(acl) = &self.kafka_acl {
            text += &format!("{}; ", by_acl_words(acl));
        }
        text += &format!(
            "{} v{}, client id {}, listener {}",
            api_name(self.access.request_type),
            self.request_version,
            if self.client_id.is_empty() {
                Cow::Borrowed("-")
            } else {
                names::within_text(&self.client_id)
            },
            names::within_text(&self.listener)
        );
        if self.overflow {
            text.push_str(&format!(
                ", {} accesses past this principal's audit share (names, addresses and policies not kept), last at {}",
                self.count, self.last
            ));
        } else if self.count > 1 {
            text.push_str(&format!(
                ", {} identical {}, last at {}",
                self.count,
                if self.comparison.is_some() {
                    "disagreements"
                } else {
                    "accesses"
                },
                self.last
            ));
        }
        text
    }

    /// The resource as events name it (an overflow group keeps none), and what a cut lost.
    fn resource_text(&self) -> (Cow<'_, str>, Option<Cut>) {
        if self.overflow {
            (Cow::Borrowed(OVERFLOW_RESOURCE), None)
        } else {
            names::resource_field(&self.access.resource, self.resource_cut)
        }
    }

    /// The event as `POST /access-events` takes it, every field within the server's rules (one
    /// invalid event makes the server refuse the whole batch): clients' names escaped or cut as
    /// `names` says, the rest clamped. `count`, `lastOccurredAt` and a disagreement's
    /// `comparison` are extensions (the server ignores unknown fields); a disagreement Kafka
    /// decided is enforced `NATIVE`.
    pub fn to_json(&self) -> Value {
        let (resource, cut) = self.resource_text();
        let mut event = json!({
            "eventId": clamp(&self.event_id, limits::EVENT_ID),
            "occurredAt": self.first.to_string(),
            "user": self.user(),
            "clientIp": self.access.client.map(|ip| clamp(&ip.to_string(), limits::CLIENT_IP).to_string()),
            "resource": resource,
            "resourceType": clamp(self.access.resource_type.map_or("unknown", ResourceType::level), limits::NAME),
            "accessType": clamp(self.access.operation.map_or("unknown", Operation::access_type), limits::NAME),
            "action": clamp(&api_name(self.access.request_type), limits::ACTION),
            "outcome": if self.allowed { "ALLOWED" } else { "DENIED" },
            "policyId": self.policy_id.map(|id| id.to_string()),
            "policyVersion": self.policy_version,
            "enforcer": self.enforcer(),
            "request": clamp(&self.request_text(cut), limits::REQUEST),
            "count": self.count,
            "lastOccurredAt": self.last.to_string(),
        });
        if let Some(comparison) = &self.comparison {
            let answer = |allowed: bool| if allowed { "ALLOWED" } else { "DENIED" };
            event["comparison"] = json!({
                "mode": comparison.decider.mode(),
                "kafka": answer(comparison.kafka_allowed),
                "grantforge": answer(!comparison.kafka_allowed),
                "kafkaAcl": clamp(&comparison.kafka_basis, limits::REQUEST_PART),
            });
        }
        event
    }

    /// One line for the log `grantforge.audit`, in the style of Kafka's authorizer log.
    pub fn log_line(&self) -> String {
        let host = self
            .access
            .client
            .map_or("unknown".to_string(), |a| a.to_string());
        // A disagreement says both answers' bases first; the line then reads as the decider's access.
        let (disagreement, basis) = match (&self.comparison, self.policy_id) {
            (Some(c), _) => (format!("{}; ", c.describe(self.policy_id)), String::new()),
            (None, None) if self.kafka_acl.is_some() => (
                String::new(),
                format!(
                    " by {}",
                    by_acl_words(self.kafka_acl.as_deref().unwrap_or_default())
                ),
            ),
            (None, Some(id)) => (String::new(), format!(" based on policy {id}")),
            (None, None) if self.overflow => (
                String::new(),
                " based on policies not kept (past the audit share)".to_string(),
            ),
            // Allowed with no policy and not past a share: only a super user, never checked.
            (None, None) if self.allowed => (
                String::new(),
                " as a super user (super.users, not checked)".to_string(),
            ),
            (None, None) => (
                String::new(),
                " based on no policy (refused: nothing decided)".to_string(),
            ),
        };
        let (resource, cut) = self.resource_text();
        let cut = cut.map_or_else(String::new, |cut| format!(", {}", cut.describe()));
        let repeats = if self.comparison.is_some() {
            "disagreements"
        } else {
            "accesses"
        };
        let times = if self.overflow {
            format!(
                "{} accesses past this principal's audit share, first at {}, last at {}",
                self.count, self.first, self.last
            )
        } else if self.count == 1 {
            format!("at {}", self.first)
        } else {
            format!(
                "{} identical {repeats}, first at {}, last at {}",
                self.count, self.first, self.last
            )
        };
        format!(
            "{disagreement}Principal = {}:{} is {} operation = {} from host = {host} on resource = {}:{resource} for request = {}{basis} of policy version {}; {times} (request version {}, listener {}, client id {}{cut})",
            names::within_text(&self.access.principal_type),
            names::within_text(&self.access.principal_name),
            if self.allowed { "Allowed" } else { "Denied" },
            self.access.operation.map_or("UNKNOWN", Operation::kafka_name),
            self.access.resource_type.map_or("unknown", ResourceType::level),
            api_name(self.access.request_type),
            self.policy_version,
            self.request_version,
            names::within_text(&self.listener),
            names::within_text(&self.client_id),
        )
    }
}

/// An access Kafka's ACLs decided in hybrid mode, in words.
fn by_acl_words(acl: &str) -> String {
    let acl = if acl.is_empty() { "ACLs not kept" } else { acl };
    format!("Kafka's ACLs in hybrid mode, no policy deciding ({acl})")
}

/// The audit of a break-glass file handed to the node (`source::break_glass`): an access of the
/// operator who ran the command to the resource `break-glass:<file>`, allowed when the snapshot was
/// applied, with its policy version (-1 when unread) and the agent's answer as the request.
pub(crate) fn break_glass_event(
    id: &str,
    by: &str,
    file: &str,
    version: Option<i64>,
    applied: bool,
    answer: &str,
    at: Instant,
) -> Value {
    let occurred = at.to_string();
    json!({
        "eventId": clamp(&format!("break-glass-{id}"), limits::EVENT_ID),
        "occurredAt": occurred,
        "user": clamp(by, limits::USER),
        "clientIp": null,
        "resource": clamp(&format!("break-glass:{file}"), limits::RESOURCE),
        "resourceType": "break-glass",
        "accessType": "apply",
        "action": "BreakGlass",
        "outcome": if applied { "ALLOWED" } else { "DENIED" },
        "policyId": null,
        "policyVersion": version.unwrap_or(-1),
        "enforcer": "GRANTFORGE",
        "request": clamp(answer, limits::REQUEST),
        "count": 1,
        "lastOccurredAt": occurred,
    })
}

/// What makes two accesses "identical" for the audit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FoldKey {
    pub access: Access,
    /// What the resource lost when its name was longer than the server takes (see `names`): two
    /// long names sharing their first units are two groups.
    pub resource_cut: Option<Cut>,
    pub policy_id: Option<i64>,
    /// The version of the snapshot that decided: accesses of two versions are two events.
    pub policy_version: i64,
    /// The principal's accesses past its share: no resource, address or policy kept.
    pub overflow: bool,
    /// Hybrid mode: the Kafka ACL that decided, in words (Kafka's ACLs, not a policy, decided).
    pub acl: Option<String>,
}

/// What a group contributes to its event.
pub struct EventParts {
    pub allowed: bool,
    pub count: u64,
    pub first: Instant,
    pub last: Instant,
    pub request_version: i16,
    pub listener: String,
    pub client_id: String,
    pub policy_version: i64,
}

/// Which authorizer's answer the clients get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decider {
    /// Shadow mode: Kafka's ACLs decide, the agent is asked beside them (before the switch).
    Kafka,
    /// Compare mode: the agent decides, Kafka's ACLs are asked beside it (after the switch).
    GrantForge,
}

impl Decider {
    /// The mode's name, as logs and the report say it.
    pub fn mode(self) -> &'static str {
        match self {
            Decider::Kafka => "shadow",
            Decider::GrantForge => "compare",
        }
    }
}

/// Event ids: the instance, this process's boot id and a sequence number; unique per event and
/// stable once assigned.
pub struct EventIds {
    prefix: String,
    next: AtomicU64,
}

impl EventIds {
    pub fn new(instance: &str) -> EventIds {
        let mut boot = [0u8; 6];
        let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut boot);
        let boot: String = boot.iter().map(|b| format!("{b:02x}")).collect();
        EventIds {
            prefix: format!("{}-{boot}", clamp(instance, 32)),
            next: AtomicU64::new(0),
        }
    }

    pub fn next(&self) -> String {
        format!(
            "{}-{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }
}

/// The GrantForge user of a principal's events: its name for `User:` principals, `Type:name`
/// otherwise, `(anonymous)` if blank, escaped if it holds a control character (`names`), clamped
/// to the server's limit.
pub(crate) fn event_user(principal_type: &str, principal_name: &str) -> String {
    let mut user = Vec::new();
    write_event_user(&mut user, principal_type, principal_name);
    String::from_utf8(user).unwrap_or_default()
}

/// Appends [`event_user`]'s UTF-8 to `out`, allocating nothing when `out` has room.
pub(crate) fn write_event_user(out: &mut Vec<u8>, principal_type: &str, principal_name: &str) {
    let start = out.len();
    if principal_type != "User" {
        out.extend_from_slice(principal_type.as_bytes());
        out.push(b':');
    }
    out.extend_from_slice(principal_name.as_bytes());
    let escaping = std::str::from_utf8(&out[start..])
        .ok()
        .filter(|user| !user.trim().is_empty() && names::needs_escaping(user))
        .map(str::to_string);
    if let Some(user) = escaping {
        out.truncate(start);
        names::write_escaped(out, &user);
    }
    let kept = std::str::from_utf8(&out[start..])
        .ok()
        .filter(|user| !user.trim().is_empty())
        .map(|user| clamp(user, limits::USER).len());
    match kept {
        Some(kept) => out.truncate(start + kept),
        None => {
            out.truncate(start);
            out.extend_from_slice(b"(anonymous)");
        }
    }
}

/// Kafka's name of a request type (`ApiKeys`), for audit; a key newer than the newest supported
/// release by number.
pub fn api_name(key: i16) -> String {
    api_key_name(key).map_or_else(|| format!("API_KEY_{key}"), str::to_string)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn event() -> AccessEvent {
        AccessEvent {
            event_id: "e".repeat(80),
            access: Access {
                principal_type: "User".into(),
                principal_name: "ü".repeat(200),
                client: Some("2001:db8::1".parse().unwrap()),
                resource_type: Some(ResourceType::Topic),
                resource: "t".repeat(2000),
                operation: Some(Operation::Write),
                request_type: 0,
            },
            resource_cut: None,
            request_version: 9,
            listener: "SASL_PLAINTEXT".into(),
            client_id: "x".repeat(2000),
            allowed: true,
            policy_id: Some(7),
            policy_version: 3,
            count: 5,
            first: Instant::from_unix_millis(0),
            last: Instant::from_unix_millis(1500),
            overflow: false,
            comparison: None,
            kafka_acl: None,
        }
    }

    #[test]
    fn every_field_is_within_the_servers_limits() {
        let json = event().to_json();
        let units = |v: &Value| v.as_str().unwrap().encode_utf16().count();
        assert_eq!(units(&json["eventId"]), 64);
        assert_eq!(units(&json["user"]), 128);
        assert_eq!(units(&json["resource"]), 999, "cut, with the marker");
        assert!(json["resource"]
            .as_str()
            .unwrap()
            .ends_with("...[truncated]"));
        assert!(json["request"]
            .as_str()
            .unwrap()
            .starts_with("resourceLength=2000; resourceSha256="));
        assert_eq!(units(&json["request"]), 1000);
        assert_eq!(json["action"], "PRODUCE");
        assert_eq!(json["accessType"], "write");
        assert_eq!(json["policyId"], "7");
        assert_eq!(json["count"], 5);
        assert_eq!(json["lastOccurredAt"], "1970-01-01T00:00:01.500Z");
    }

    #[test]
    fn clamping_counts_utf16_units_and_keeps_characters_whole() {
        assert_eq!(clamp("a😀b", 2), "a");
        assert_eq!(clamp("a😀b", 3), "a😀");
        assert_eq!(clamp("abc", 10), "abc");
    }

    #[test]
    fn event_ids_are_unique_and_fit() {
        let ids = EventIds::new(&"broker".repeat(30));
        let (a, b) = (ids.next(), ids.next());
        assert_ne!(a, b);
        assert!(a.len() <= 64, "{a}");
        assert_ne!(
            EventIds::new("x").next(),
            EventIds::new("x").next(),
            "boot ids differ"
        );
    }

    /// Alice's 10,000 allowed produce requests to `orders`, folded into one event.
    pub(crate) fn folded_produce() -> AccessEvent {
        AccessEvent {
            event_id: "e1".into(),
            access: Access {
                principal_type: "User".into(),
                principal_name: "alice".into(),
                client: Some("127.0.0.1".parse().unwrap()),
                resource_type: Some(ResourceType::Topic),
                resource: "orders".into(),
                operation: Some(Operation::Write),
                request_type: 0,
            },
            resource_cut: None,
            request_version: 13,
            listener: "SASL_PLAINTEXT".into(),
            client_id: "producer-1".into(),
            allowed: true,
            policy_id: Some(1),
            policy_version: 1,
            count: 10000,
            first: Instant::from_unix_millis(1_796_047_081_120),
            last: Instant::from_unix_millis(1_796_047_084_877),
            overflow: false,
            comparison: None,
            kafka_acl: None,
        }
    }

    /// `docs/operations.md` shows an operator what the audit log looks like; this keeps it true.
    #[test]
    fn the_operations_guide_shows_the_lines_the_audit_log_writes() {
        let guide =
            std::fs::read_to_string(crate::test_support::in_crate("../../docs/operations.md"))
                .unwrap();
        let folded = folded_produce();
        let refused = AccessEvent {
            access: Access {
                principal_name: "bob".into(),
                ..folded.clone().access
            },
            allowed: false,
            policy_id: None,
            count: 1,
            first: Instant::from_unix_millis(1_796_047_082_311),
            last: Instant::from_unix_millis(1_796_047_082_311),
            ..folded.clone()
        };
        let disagreement = AccessEvent {
            access: Access {
                resource: "payments".into(),
                ..folded.clone().access
            },
            policy_id: Some(5),
            count: 240,
            comparison: Some(Comparison {
                decider: Decider::Kafka,
                kafka_allowed: true,
                kafka_basis: "ALLOW ACL TOPIC:LITERAL:payments User:alice from * ALLOW WRITE"
                    .into(),
            }),
            ..folded.clone()
        };
        for event in [folded, refused, disagreement] {
            let line = format!("INFO [grantforge.audit] {}\n", event.log_line());
            assert!(guide.contains(&line), "docs/operations.md lacks {line}");
        }
    }

    #[test]
    fn request_types_have_kafka_names() {
        assert_eq!(api_name(0), "PRODUCE");
        assert_eq!(
            api_name(74),
            "LIST_CONFIG_RESOURCES",
            "as the newest release names it"
        );
        assert_eq!(api_name(92), "DELETE_SHARE_GROUP_OFFSETS");
        assert_eq!(
            api_name(999),
            "API_KEY_999",
            "newer than the newest release"
        );
    }
}
