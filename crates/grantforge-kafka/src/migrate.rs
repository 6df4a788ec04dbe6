//! Kafka's ACLs as GrantForge policies of the `kafka` service type: the inverse of the ACL view
//! (`acl.rs`), for `migrate-acls`.
//!
//! Pure: ACL bindings in, policies out, as the two documents GrantForge takes (the bodies of its
//! admin API's `POST /api/v1/services/{id}/policies`, and a format-1 snapshot the agent runs on
//! offline) and a report of every ACL that could not be expressed exactly. Nothing is ever widened
//! silently: an ACL is migrated only when the policy decides what Kafka's `StandardAuthorizer`
//! decided for it, or when the report says how the meaning changes.
//!
//! One policy per resource pattern (level and value); in it, one item per permission, host and set
//! of operations, naming every subject with that set. All policies are NORMAL: in Kafka a DENY beats
//! every ALLOW, as a deny beats an allow within one GrantForge priority.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv6Addr};

use grantforge_engine::{Instant, ServiceModel, Snapshot, FORMAT};
use serde_json::{json, Value};

use crate::policies::{KafkaPolicies, LoadError, SERVICE_TYPE};
use crate::vocabulary::{Operation, PatternType, Permission, ResourceType};

/// The `kafka` service type, as every snapshot written here carries it (one definition for the
/// docs, the test server and this module).
const KAFKA_DEFINITION_JSON: &str = include_str!("../kafka-service-type.json");

/// The label every migrated policy carries on the server, so an operator can find (or remove) them.
pub const MIGRATION_LABEL: &str = "migrated-from-kafka-acls";

/// GrantForge's limit on a policy name (`PolicyRequest.name`).
const POLICY_NAME_MAX_CHARS: usize = 128;

/// One ACL binding as Kafka's Admin API describes it, by Kafka's codes (`ResourceType.code()`,
/// `PatternType.code()`, `AclOperation.code()`, `AclPermissionType.code()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaAcl {
    pub resource_type: u8,
    pub pattern_type: u8,
    pub name: String,
    /// `Type:name`, as Kafka writes it (`User:alice`, `User:*`, `Group:ops`).
    pub principal: String,
    /// `*` or the text Kafka compares with the client's address.
    pub host: String,
    pub operation: u8,
    pub permission: u8,
}

/// What the report says about one ACL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Finding {
    /// Left out: no policy expresses it exactly.
    NotMigrated,
    /// Migrated as a deny, which in GrantForge also denies what the operation implies.
    DenyCoversImplied,
    /// Migrated as a policy of a GrantForge group, which applies to the group's users rather than
    /// to a principal of type `Group`.
    GroupMembers,
}

impl Finding {
    /// The code in the JNI payload (`AclMigration.java`).
    pub fn code(self) -> u8 {
        match self {
            Finding::NotMigrated => 1,
            Finding::DenyCoversImplied => 2,
            Finding::GroupMembers => 3,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Finding::NotMigrated => "not migrated",
            Finding::DenyCoversImplied => "narrower",
            Finding::GroupMembers => "group",
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportEntry {
    /// The ACL's index in the input.
    pub acl: usize,
    pub finding: Finding,
    /// The operations the agent refuses where Kafka allowed them because of this finding, for the
    /// principal, resource and host the ACL names: what `--verify` may attribute to it. Empty when
    /// the finding can only widen (a DENY left out): such a difference is never explained.
    pub narrowed: Vec<Operation>,
    pub message: String,
}

/// The result of a migration.
#[derive(Clone, Debug)]
pub struct Migration {
    /// A format-1 snapshot of the `kafka` service type (`grantforge.policy.file`).
    pub snapshot_json: String,
    /// A JSON array of the bodies of `POST /api/v1/services/{id}/policies`, one per policy.
    pub policy_requests_json: String,
    /// Sorted by ACL index, then finding.
    pub report: Vec<ReportEntry>,
    /// How many ACLs became (part of) a policy.
    pub migrated: usize,
    pub policies: usize,
}

impl Migration {
    /// The report for people: a summary line, then one line per entry naming the ACL.
    pub fn report_text(&self, acls: &[KafkaAcl]) -> String {
        let mut text = format!(
            "migrate-acls: {} ACLs read, {} migrated into {} policies, {} not migrated, {} migrated with a changed meaning\n",
            acls.len(),
            self.migrated,
            self.policies,
            self.count(Finding::NotMigrated),
            self.report.len() - self.count(Finding::NotMigrated),
        );
        for entry in &self.report {
            let _ = writeln!(
                text,
                "{:<12} {}: {}",
                entry.finding.label(),
                describe_acl(&acls[entry.acl]),
                entry.message
            );
        }
        text
    }

    fn count(&self, finding: Finding) -> usize {
        self.report.iter().filter(|e| e.finding == finding).count()
    }
}

/// The ACL in Kafka's words: `TOPIC:LITERAL:orders User:alice from * ALLOW READ`.
pub fn describe_acl(acl: &KafkaAcl) -> String {
    let resource_type = ResourceType::from_code(acl.resource_type)
        .map_or_else(|| format!("type#{}", acl.resource_type), kafka_type_name);
    let pattern = match PatternType::from_code(acl.pattern_type) {
        Some(PatternType::Literal) => "LITERAL".to_string(),
        Some(PatternType::Prefixed) => "PREFIXED".to_string(),
        None => format!("pattern#{}", acl.pattern_type),
    };
    let operation = Operation::from_code(acl.operation).map_or_else(
        || format!("operation#{}", acl.operation),
        |o| o.kafka_name().to_string(),
    );
    let permission = match Permission::from_code(acl.permission) {
        Some(Permission::Allow) => "ALLOW".to_string(),
        Some(Permission::Deny) => "DENY".to_string(),
        None => format!("permission#{}", acl.permission),
    };
    format!(
        "{resource_type}:{pattern}:{} {} from {} {permission} {operation}",
        acl.name, acl.principal, acl.host
    )
}

/// Kafka's enum constant name of a resource type: its level in upper case (`transactional_id` →
/// `TRANSACTIONAL_ID`), as the `kafka` service type names levels after Kafka's types.
fn kafka_type_name(resource_type: ResourceType) -> String {
    resource_type.level().to_ascii_uppercase()
}

/// Who a policy item names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Subject {
    User(String),
    Group(String),
    /// `User:*`: GrantForge's public group.
    Everyone,
}

/// The items of one policy: per (permission, host condition), per subject, the operations.
type Items = BTreeMap<(Permission, Option<String>), BTreeMap<Subject, BTreeSet<Operation>>>;

/// Maps ACL bindings to policies. Fails only when the snapshot it wrote would not load, which
/// would be a bug here: nothing is written then.
pub fn migrate_acls(acls: &[KafkaAcl], service: &str) -> Result<Migration, LoadError> {
    let model = kafka_model()?;
    let implied = |operation: Operation| implied_operations(&model, operation);
    let mut policies: BTreeMap<(&'static str, String), Items> = BTreeMap::new();
    let mut report = Vec::new();
    let mut migrated = 0;
    for (index, acl) in acls.iter().enumerate() {
        let mapped = match map_acl(acl) {
            Ok(mapped) => mapped,
            Err(reason) => {
                let (narrowed, consequence) = match Permission::from_code(acl.permission) {
                    Some(Permission::Allow) => (
                        Operation::from_code(acl.operation).map_or_else(Vec::new, &implied),
                        "what it allowed is refused",
                    ),
                    _ => (Vec::new(), "what it denied is no longer denied by it"),
                };
                report.push(ReportEntry {
                    acl: index,
                    finding: Finding::NotMigrated,
                    narrowed,
                    message: format!("{reason}; {consequence}"),
                });
                continue;
            }
        };
        migrated += 1;
        if let Subject::Group(group) = &mapped.subject {
            report.push(ReportEntry {
                acl: index,
                finding: Finding::GroupMembers,
                narrowed: if mapped.permission == Permission::Allow {
                    implied(mapped.operation)
                } else {
                    Vec::new()
                },
                message: format!(
                    "becomes a policy of GrantForge group `{group}`: Kafka applied it to the principal `{}`, GrantForge applies it to the users of group `{group}` (none in the snapshot written here); check the group's members before creating the policies on a server",
                    acl.principal
                ),
            });
        }
        if mapped.permission == Permission::Deny {
            let also: Vec<Operation> = implied(mapped.operation)
                .into_iter()
                .filter(|o| *o != mapped.operation)
                .collect();
            if mapped.operation != Operation::All && !also.is_empty() {
                let names: Vec<&str> = also.iter().map(|o| o.kafka_name()).collect();
                report.push(ReportEntry {
                    acl: index,
                    finding: Finding::DenyCoversImplied,
                    narrowed: also,
                    message: format!(
                        "GrantForge's deny of {} also denies {}, which it implies; Kafka's DENY {} denies {} only",
                        mapped.operation.kafka_name(),
                        names.join(", "),
                        mapped.operation.kafka_name(),
                        mapped.operation.kafka_name()
                    ),
                });
            }
        }
        policies
            .entry((mapped.level, mapped.value))
            .or_default()
            .entry((mapped.permission, mapped.host))
            .or_default()
            .entry(mapped.subject)
            .or_default()
            .insert(mapped.operation);
    }
    report.sort_by_key(|e| (e.acl, e.finding));

    let documents: Vec<(String, Value)> = policies
        .iter()
        .map(|((level, value), items)| (policy_name(level, value), document(level, value, items)))
        .collect();
    let snapshot_policies: Vec<Value> = documents
        .iter()
        .enumerate()
        .map(|(at, (name, document))| {
            json!({
                "id": (at + 1).to_string(),
                "name": name,
                "type": "ACCESS",
                "priority": "NORMAL",
                "document": document,
            })
        })
        .collect();
    let requests: Vec<Value> = documents
        .iter()
        .map(|(name, document)| {
            json!({
                "name": name,
                "description": "migrated from Kafka's ACLs by migrate-acls",
                "labels": [MIGRATION_LABEL],
                "enabled": true,
                "priority": "NORMAL",
                "type": "ACCESS",
                "document": document,
            })
        })
        .collect();
    let definition: Value =
        serde_json::from_str(KAFKA_DEFINITION_JSON).expect("kafka-service-type.json is JSON");
    let snapshot = json!({
        "format": FORMAT,
        "service": service,
        "serviceType": SERVICE_TYPE,
        "typeVersion": 1,
        "serviceEnabled": true,
        "policyVersion": 1,
        "definition": definition,
        "policies": snapshot_policies,
        "roles": {},
        "groups": {},
    });
    let snapshot_json = serde_json::to_string_pretty(&snapshot).expect("JSON values serialise");
    // What is written must load as the agent loads it: checked here rather than at the broker.
    KafkaPolicies::load(snapshot_json.as_bytes(), Instant::now())?;
    Ok(Migration {
        snapshot_json,
        policy_requests_json: serde_json::to_string_pretty(&requests)
            .expect("JSON values serialise"),
        report,
        migrated,
        policies: documents.len(),
    })
}

/// One ACL as a piece of a policy.
struct Mapped {
    level: &'static str,
    value: String,
    permission: Permission,
    host: Option<String>,
    subject: Subject,
    operation: Operation,
}

/// The piece of a policy that decides exactly what `acl` decides (or says so in the report), or
/// why there is none.
fn map_acl(acl: &KafkaAcl) -> Result<Mapped, String> {
    let resource_type = ResourceType::from_code(acl.resource_type).ok_or_else(|| {
        format!(
            "resource type code {} is unknown to this agent",
            acl.resource_type
        )
    })?;
    let operation = Operation::from_code(acl.operation)
        .ok_or_else(|| format!("operation code {} is unknown to this agent", acl.operation))?;
    let permission = Permission::from_code(acl.permission).ok_or_else(|| {
        format!(
            "permission code {} is unknown to this agent",
            acl.permission
        )
    })?;
    let pattern = PatternType::from_code(acl.pattern_type).ok_or_else(|| {
        format!(
            "pattern type code {} is unknown to this agent",
            acl.pattern_type
        )
    })?;
    Ok(Mapped {
        level: resource_type.level(),
        value: value_of(pattern, &acl.name)?,
        permission,
        host: host_of(&acl.host)?,
        subject: subject_of(&acl.principal)?,
        operation,
    })
}

/// The value of the level: the name (LITERAL), `*` (Kafka's wildcard), or the prefix and `*`
/// (PREFIXED). The level's matcher is WILDCARD, so a name that holds `*` or `?` itself would match
/// more than Kafka's pattern did.
fn value_of(pattern: PatternType, name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("an empty resource name has no policy value".to_string());
    }
    if pattern == PatternType::Literal && name == "*" {
        return Ok(name.to_string());
    }
    if name.contains(['*', '?']) {
        return Err(format!(
            "the name `{name}` holds `*` or `?`, which GrantForge's wildcard matcher would read as wildcards"
        ));
    }
    Ok(match pattern {
        PatternType::Literal => name.to_string(),
        PatternType::Prefixed => format!("{name}*"),
    })
}

/// The subject of the item: `User:*` is everyone (GrantForge's public group, as in Kafka, where it
/// matches a principal of any type); `User:name` a user; `Group:name` a GrantForge group.
fn subject_of(principal: &str) -> Result<Subject, String> {
    let Some((principal_type, name)) = principal.split_once(':').filter(|(_, n)| !n.is_empty())
    else {
        return Err(format!("the principal `{principal}` is not `Type:name`"));
    };
    match (principal_type, name) {
        ("User", "*") => Ok(Subject::Everyone),
        ("User", name) => Ok(Subject::User(name.to_string())),
        ("Group", "*") => Err(
            "`Group:*` is no wildcard in Kafka (only `User:*` is): it names one principal, and GrantForge has no such group"
                .to_string(),
        ),
        ("Group", name) if name == grantforge_engine::PUBLIC_GROUP => Err(format!(
            "`Group:{name}` would become GrantForge's group `{name}`, which is everyone"
        )),
        ("Group", name) => Ok(Subject::Group(name.to_string())),
        (other, _) => Err(format!(
            "principals of type `{other}` have no GrantForge subject (the agent knows users, and groups through GrantForge)"
        )),
    }
}

/// `*` needs no condition; an IP address becomes an `ip-range` condition of that one address.
/// Kafka compares the ACL's host, as text, with the client's address as Java writes it
/// (`InetAddress.getHostAddress()`): an IPv4 address in dotted decimal, an IPv6 address as eight
/// groups without compression. A host written otherwise (a host name, `::1`, a CIDR block) never
/// matches a client in Kafka; read as an address or a range it would match some, so it is left out.
fn host_of(host: &str) -> Result<Option<String>, String> {
    if host == "*" {
        return Ok(None);
    }
    let as_kafka_compares = match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.to_string() == host,
        // Java turns an IPv4-mapped address into an IPv4 one: no client has such a text.
        Ok(IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_none() && java_text(&v6) == host,
        Err(_) => false,
    };
    if as_kafka_compares {
        Ok(Some(host.to_string()))
    } else {
        Err(format!(
            "the host `{host}` is not an IP address written as Kafka compares it with the client's address (`InetAddress.getHostAddress()`), so Kafka never matched it; it is not read as an address or a range"
        ))
    }
}

/// An IPv6 address as `Inet6Address.getHostAddress()` writes it: eight groups of lower-case hex
/// without leading zeros, no `::`.
fn java_text(address: &Ipv6Addr) -> String {
    let groups: Vec<String> = address
        .segments()
        .iter()
        .map(|g| format!("{g:x}"))
        .collect();
    groups.join(":")
}

/// A policy's name: what it covers, within GrantForge's limit. A name too long is cut and ends
/// with a hash of the whole value, so that two values that share the kept beginning still name two
/// policies (GrantForge's policy names are unique within a service).
fn policy_name(level: &str, value: &str) -> String {
    let name = format!("kafka acls: {level} {value}");
    if name.chars().count() <= POLICY_NAME_MAX_CHARS {
        return name;
    }
    let suffix = format!("… #{:016x}", fnv1a(value.as_bytes()));
    let mut cut: String = name
        .chars()
        .take(POLICY_NAME_MAX_CHARS - suffix.chars().count())
        .collect();
    cut.push_str(&suffix);
    cut
}

/// FNV-1a, 64 bits: stable across runs and releases, so the same ACLs name the same policies.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The policy document: one level and value; per permission and host, one item per set of
/// operations naming every subject with that set.
fn document(level: &str, value: &str, items: &Items) -> Value {
    let mut allow = Vec::new();
    let mut deny = Vec::new();
    for ((permission, host), subjects) in items {
        let mut by_operations: BTreeMap<&BTreeSet<Operation>, (Vec<&str>, Vec<&str>)> =
            BTreeMap::new();
        for (subject, operations) in subjects {
            let (users, groups) = by_operations.entry(operations).or_default();
            match subject {
                Subject::User(name) => users.push(name),
                Subject::Group(name) => groups.push(name),
                Subject::Everyone => groups.push(grantforge_engine::PUBLIC_GROUP),
            }
        }
        for (operations, (users, groups)) in by_operations {
            let access_types: Vec<&str> = operations.iter().map(|o| o.access_type()).collect();
            let conditions: Vec<Value> = host
                .iter()
                .map(|h| json!({"type": "ip-range", "values": [h]}))
                .collect();
            let item = json!({
                "users": users,
                "groups": groups,
                "roles": [],
                "accessTypes": access_types,
                "conditions": conditions,
                "maskType": null,
                "maskValue": null,
                "rowFilter": null,
            });
            match permission {
                Permission::Allow => allow.push(item),
                Permission::Deny => deny.push(item),
            }
        }
    }
    json!({
        "resources": {level: {"values": [value], "excludes": false, "recursive": false}},
        "allow": allow,
        "allowExceptions": [],
        "deny": deny,
        "denyExceptions": [],
        "validity": [],
    })
}

/// The `kafka` service type's model, for its implications.
fn kafka_model() -> Result<ServiceModel, LoadError> {
    let empty = format!(
        r#"{{"format":{FORMAT},"service":"kafka","serviceType":"{SERVICE_TYPE}","serviceEnabled":true,"policyVersion":1,"definition":{KAFKA_DEFINITION_JSON},"policies":[]}}"#
    );
    let snapshot = Snapshot::parse(empty.as_bytes()).map_err(LoadError::Snapshot)?;
    snapshot.definition.model().map_err(LoadError::Snapshot)
}

/// `operation` and every operation it implies in the `kafka` service type (an allow of it allows
/// them, a deny of it denies them), in code order.
fn implied_operations(model: &ServiceModel, operation: Operation) -> Vec<Operation> {
    Operation::ALL
        .iter()
        .copied()
        .filter(|o| {
            model
                .granted_by(o.access_type())
                .contains(&operation.access_type())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use grantforge_engine::Instant;

    use super::*;
    use crate::conditions::KafkaContext;
    use crate::policies::{Action, Principal, RequestContext};

    const TOPIC: u8 = 2;
    const GROUP: u8 = 3;
    const CLUSTER: u8 = 4;
    const LITERAL: u8 = 3;
    const PREFIXED: u8 = 4;
    const DENY: u8 = 2;
    const ALLOW: u8 = 3;

    fn acl(
        resource_type: u8,
        pattern_type: u8,
        name: &str,
        principal: &str,
        host: &str,
        operation: Operation,
        permission: u8,
    ) -> KafkaAcl {
        KafkaAcl {
            resource_type,
            pattern_type,
            name: name.to_string(),
            principal: principal.to_string(),
            host: host.to_string(),
            operation: operation.code(),
            permission,
        }
    }

    fn allow(name: &str, principal: &str, operation: Operation) -> KafkaAcl {
        acl(TOPIC, LITERAL, name, principal, "*", operation, ALLOW)
    }

    fn deny(name: &str, principal: &str, operation: Operation) -> KafkaAcl {
        acl(TOPIC, LITERAL, name, principal, "*", operation, DENY)
    }

    /// Whether the agent on the migrated snapshot allows `principal` from `address` to perform
    /// `operation` on `resource_type` `name`.
    fn decides(
        migration: &Migration,
        principal: &str,
        address: &str,
        resource_type: ResourceType,
        name: &str,
        operation: Operation,
    ) -> bool {
        let policies =
            KafkaPolicies::load(migration.snapshot_json.as_bytes(), Instant::now()).unwrap();
        let (principal_type, principal_name) = principal.split_once(':').unwrap();
        let context = RequestContext {
            principal: Principal {
                principal_type: principal_type.to_string(),
                name: principal_name.to_string(),
            },
            conditions: KafkaContext {
                client_address: Some(address.parse().unwrap()),
                ..KafkaContext::default()
            },
            ..RequestContext::default()
        };
        let action = Action {
            operation: Some(operation),
            resource_type: Some(resource_type),
            literal: true,
            name,
            log_if_allowed: false,
            log_if_denied: false,
        };
        policies.decide(&context, &action, Instant::now()).allowed()
    }

    fn migrate(acls: &[KafkaAcl]) -> Migration {
        migrate_acls(acls, "kafka-migrated").unwrap()
    }

    #[test]
    fn a_literal_allow_of_a_user_becomes_a_user_item_and_implies_describe_as_in_kafka() {
        let m = migrate(&[allow("orders", "User:alice", Operation::Read)]);
        assert_eq!((m.migrated, m.policies), (1, 1));
        assert!(m.report.is_empty(), "{:?}", m.report);
        let read = |name, op| decides(&m, "User:alice", "10.0.0.1", ResourceType::Topic, name, op);
        assert!(read("orders", Operation::Read));
        assert!(
            read("orders", Operation::Describe),
            "READ implies DESCRIBE in both"
        );
        assert!(!read("orders", Operation::Write));
        assert!(
            !read("orders2", Operation::Read),
            "a literal name is that name only"
        );
        assert!(!decides(
            &m,
            "User:bob",
            "10.0.0.1",
            ResourceType::Topic,
            "orders",
            Operation::Read
        ));
    }

    #[test]
    fn a_prefixed_pattern_becomes_the_prefix_and_a_star() {
        let m = migrate(&[acl(
            GROUP,
            PREFIXED,
            "etl-",
            "User:alice",
            "*",
            Operation::Read,
            ALLOW,
        )]);
        let read = |name| {
            decides(
                &m,
                "User:alice",
                "10.0.0.1",
                ResourceType::Group,
                name,
                Operation::Read,
            )
        };
        assert!(read("etl-"));
        assert!(read("etl-nightly"));
        assert!(!read("et"));
        assert!(!read("x-etl-"));
        assert!(m.snapshot_json.contains("\"etl-*\""));
    }

    #[test]
    fn the_literal_wildcard_name_covers_every_resource_of_its_type_only() {
        let m = migrate(&[allow("*", "User:alice", Operation::Write)]);
        let alice = |t, name| decides(&m, "User:alice", "10.0.0.1", t, name, Operation::Write);
        assert!(alice(ResourceType::Topic, "anything"));
        assert!(!alice(ResourceType::Group, "anything"));
    }

    #[test]
    fn user_star_is_everyone_of_any_principal_type_as_in_kafka() {
        let m = migrate(&[allow("news", "User:*", Operation::Read)]);
        assert!(m.report.is_empty());
        for principal in ["User:alice", "User:bob", "Group:ops", "ServiceAccount:etl"] {
            assert!(
                decides(
                    &m,
                    principal,
                    "10.0.0.1",
                    ResourceType::Topic,
                    "news",
                    Operation::Read
                ),
                "{principal}"
            );
        }
    }

    #[test]
    fn a_deny_beats_an_allow_of_the_same_policy_and_of_another() {
        let m = migrate(&[
            allow("*", "User:*", Operation::All),
            deny("payments", "User:alice", Operation::Write),
            acl(
                TOPIC,
                PREFIXED,
                "pay",
                "User:bob",
                "*",
                Operation::All,
                DENY,
            ),
        ]);
        let ask = |p, name, op| decides(&m, p, "10.0.0.1", ResourceType::Topic, name, op);
        assert!(!ask("User:alice", "payments", Operation::Write));
        assert!(ask("User:alice", "payments", Operation::Read));
        assert!(ask("User:alice", "orders", Operation::Write));
        assert!(
            !ask("User:bob", "payments", Operation::Read),
            "DENY ALL denies every operation"
        );
        assert!(!ask("User:bob", "payments", Operation::Describe));
        assert!(ask("User:bob", "orders", Operation::Read));
    }

    #[test]
    fn a_deny_of_an_operation_that_implies_others_is_reported_as_narrower() {
        let acls = [
            allow("payments", "User:alice", Operation::Describe),
            deny("payments", "User:alice", Operation::Write),
            deny("payments", "User:alice", Operation::Create),
            deny("payments", "User:alice", Operation::All),
        ];
        let m = migrate(&acls);
        assert_eq!(m.report.len(), 1, "{:?}", m.report);
        let entry = &m.report[0];
        assert_eq!((entry.acl, entry.finding), (1, Finding::DenyCoversImplied));
        assert_eq!(entry.narrowed, vec![Operation::Describe]);
        assert!(
            !decides(
                &m,
                "User:alice",
                "10.0.0.1",
                ResourceType::Topic,
                "payments",
                Operation::Describe
            ),
            "the narrowing the report names is real"
        );
        assert!(m.report_text(&acls).contains(
            "narrower     TOPIC:LITERAL:payments User:alice from * DENY WRITE: GrantForge's deny of WRITE also denies DESCRIBE"
        ));
    }

    #[test]
    fn a_host_that_is_an_ip_address_becomes_an_ip_range_condition() {
        let m = migrate(&[
            acl(
                TOPIC,
                LITERAL,
                "orders",
                "User:alice",
                "10.0.0.1",
                Operation::Read,
                ALLOW,
            ),
            acl(
                TOPIC,
                LITERAL,
                "orders",
                "User:alice",
                "0:0:0:0:0:0:0:1",
                Operation::Read,
                ALLOW,
            ),
            acl(
                TOPIC,
                LITERAL,
                "orders",
                "User:bob",
                "*",
                Operation::Read,
                ALLOW,
            ),
            acl(
                TOPIC,
                LITERAL,
                "orders",
                "User:bob",
                "10.0.0.9",
                Operation::Read,
                DENY,
            ),
        ]);
        let findings: Vec<(usize, Finding)> = m.report.iter().map(|e| (e.acl, e.finding)).collect();
        assert_eq!(
            findings,
            vec![(3, Finding::DenyCoversImplied)],
            "only the deny of READ"
        );
        let read = |p, address| {
            decides(
                &m,
                p,
                address,
                ResourceType::Topic,
                "orders",
                Operation::Read,
            )
        };
        assert!(read("User:alice", "10.0.0.1"));
        assert!(read("User:alice", "::1"));
        assert!(!read("User:alice", "10.0.0.2"));
        assert!(read("User:bob", "10.0.0.8"));
        assert!(!read("User:bob", "10.0.0.9"), "a deny from one address");
    }

    #[test]
    fn hosts_kafka_never_matches_are_reported_and_not_read_as_addresses_or_ranges() {
        let hosts = [
            "client.example.com",
            "10.0.0.0/8",
            "::1",
            "010.0.0.1",
            "::ffff:10.0.0.1",
            "fe80:0:0:0:0:0:0:1%eth0",
        ];
        let acls: Vec<KafkaAcl> = hosts
            .iter()
            .map(|h| {
                acl(
                    TOPIC,
                    LITERAL,
                    "orders",
                    "User:alice",
                    h,
                    Operation::Read,
                    ALLOW,
                )
            })
            .collect();
        let m = migrate(&acls);
        assert_eq!(m.migrated, 0);
        assert_eq!(m.report.len(), hosts.len());
        for (entry, host) in m.report.iter().zip(hosts) {
            assert_eq!(entry.finding, Finding::NotMigrated);
            assert!(
                entry.message.contains(&format!("the host `{host}`")),
                "{}",
                entry.message
            );
            assert_eq!(entry.narrowed, vec![Operation::Read, Operation::Describe]);
        }
        assert!(!decides(
            &m,
            "User:alice",
            "10.0.0.1",
            ResourceType::Topic,
            "orders",
            Operation::Read
        ));
    }

    #[test]
    fn group_principals_become_groups_and_are_reported_as_a_changed_meaning() {
        let m = migrate(&[
            acl(
                TOPIC,
                LITERAL,
                "orders",
                "Group:ops",
                "*",
                Operation::AlterConfigs,
                ALLOW,
            ),
            deny("orders", "Group:ops", Operation::Delete),
        ]);
        assert_eq!(m.migrated, 2);
        let findings: Vec<(usize, Finding)> = m.report.iter().map(|e| (e.acl, e.finding)).collect();
        assert_eq!(
            findings,
            vec![
                (0, Finding::GroupMembers),
                (1, Finding::DenyCoversImplied),
                (1, Finding::GroupMembers)
            ]
        );
        assert_eq!(
            m.report[0].narrowed,
            vec![Operation::DescribeConfigs, Operation::AlterConfigs]
        );
        assert!(
            m.report[2].narrowed.is_empty(),
            "a group's deny can only widen for Group principals"
        );
        let snapshot: Value = serde_json::from_str(&m.snapshot_json).unwrap();
        let document = &snapshot["policies"][0]["document"];
        assert_eq!(document["allow"][0]["groups"], json!(["ops"]));
        assert_eq!(document["deny"][0]["groups"], json!(["ops"]));
        assert!(!decides(
            &m,
            "Group:ops",
            "10.0.0.1",
            ResourceType::Topic,
            "orders",
            Operation::AlterConfigs
        ));
    }

    #[test]
    fn principals_without_a_grantforge_subject_are_reported_not_migrated() {
        let principals = [
            "ServiceAccount:etl",
            "Group:*",
            "Group:public",
            "User:",
            "alice",
        ];
        let acls: Vec<KafkaAcl> = principals
            .iter()
            .map(|p| acl(TOPIC, LITERAL, "orders", p, "*", Operation::Read, DENY))
            .collect();
        let m = migrate(&acls);
        assert_eq!(m.migrated, 0);
        assert_eq!(m.policies, 0);
        for entry in &m.report {
            assert_eq!(entry.finding, Finding::NotMigrated);
            assert!(entry.narrowed.is_empty(), "a deny left out can only widen");
            assert!(entry
                .message
                .ends_with("what it denied is no longer denied by it"));
        }
        assert!(m.report[0].message.contains("type `ServiceAccount`"));
        assert!(m.report[1].message.contains("`Group:*` is no wildcard"));
        assert!(m.report[2].message.contains("which is everyone"));
        assert!(m.report[3].message.contains("not `Type:name`"));
    }

    #[test]
    fn names_with_wildcard_characters_and_unknown_codes_are_reported_not_migrated() {
        let m = migrate(&[
            acl(
                GROUP,
                LITERAL,
                "a*b",
                "User:alice",
                "*",
                Operation::Read,
                ALLOW,
            ),
            acl(
                GROUP,
                PREFIXED,
                "a?",
                "User:alice",
                "*",
                Operation::Read,
                ALLOW,
            ),
            acl(
                GROUP,
                PREFIXED,
                "*",
                "User:alice",
                "*",
                Operation::Read,
                ALLOW,
            ),
            acl(9, LITERAL, "x", "User:alice", "*", Operation::Read, ALLOW),
            acl(TOPIC, 2, "x", "User:alice", "*", Operation::Read, ALLOW),
            acl(TOPIC, LITERAL, "x", "User:alice", "*", Operation::Read, 1),
            KafkaAcl {
                operation: 99,
                ..allow("x", "User:alice", Operation::Read)
            },
        ]);
        assert_eq!(m.migrated, 0);
        let messages: Vec<&str> = m.report.iter().map(|e| e.message.as_str()).collect();
        assert!(messages[0].contains("`a*b` holds `*` or `?`"));
        assert!(messages[1].contains("`a?` holds"));
        assert!(
            messages[2].contains("`*` holds"),
            "a PREFIXED `*` is a prefix, not Kafka's wildcard"
        );
        assert!(messages[3].contains("resource type code 9"));
        assert!(messages[4].contains("pattern type code 2"));
        assert!(messages[5].contains("permission code 1"));
        assert!(messages[6].contains("operation code 99"));
    }

    #[test]
    fn cluster_acls_and_every_resource_type_migrate() {
        let mut acls = vec![acl(
            CLUSTER,
            LITERAL,
            "kafka-cluster",
            "User:alice",
            "*",
            Operation::IdempotentWrite,
            ALLOW,
        )];
        for code in 2..=7 {
            acls.push(acl(
                code,
                LITERAL,
                "r",
                "User:bob",
                "*",
                Operation::Describe,
                ALLOW,
            ));
        }
        let m = migrate(&acls);
        assert_eq!((m.migrated, m.policies), (7, 7));
        assert!(decides(
            &m,
            "User:alice",
            "10.0.0.1",
            ResourceType::Cluster,
            "kafka-cluster",
            Operation::IdempotentWrite
        ));
        for code in 2..=7 {
            let t = ResourceType::from_code(code).unwrap();
            assert!(
                decides(&m, "User:bob", "10.0.0.1", t, "r", Operation::Describe),
                "{t:?}"
            );
        }
    }

    #[test]
    fn subjects_with_the_same_operations_share_one_item_and_requests_carry_the_label() {
        let m = migrate(&[
            allow("orders", "User:alice", Operation::Read),
            allow("orders", "User:bob", Operation::Read),
            allow("orders", "User:carol", Operation::Write),
        ]);
        let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
        let policy = &requests[0];
        assert_eq!(policy["labels"], json!([MIGRATION_LABEL]));
        assert_eq!(policy["name"], "kafka acls: topic orders");
        let allow = policy["document"]["allow"].as_array().unwrap();
        assert_eq!(allow.len(), 2);
        assert_eq!(allow[0]["users"], json!(["alice", "bob"]));
        assert_eq!(allow[0]["accessTypes"], json!(["read"]));
        assert_eq!(allow[1]["users"], json!(["carol"]));
    }

    #[test]
    fn long_names_are_cut_to_grantforges_limit() {
        let long = "t".repeat(300);
        let m = migrate(&[allow(&long, "User:alice", Operation::Read)]);
        let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
        let name = requests[0]["name"].as_str().unwrap();
        assert_eq!(name.chars().count(), POLICY_NAME_MAX_CHARS);
        assert!(decides(
            &m,
            "User:alice",
            "10.0.0.1",
            ResourceType::Topic,
            &long,
            Operation::Read
        ));
    }

    #[test]
    fn long_names_that_share_their_beginning_name_two_policies() {
        let (a, b) = (
            format!("{}a", "t".repeat(300)),
            format!("{}b", "t".repeat(300)),
        );
        let m = migrate(&[
            allow(&a, "User:alice", Operation::Read),
            allow(&b, "User:alice", Operation::Read),
        ]);
        let requests: Value = serde_json::from_str(&m.policy_requests_json).unwrap();
        let names: BTreeSet<&str> = requests
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names
            .iter()
            .all(|n| n.chars().count() == POLICY_NAME_MAX_CHARS));
    }

    #[test]
    fn a_cut_name_ends_with_the_fnv1a_hash_of_its_value_in_every_release() {
        // FNV-1a's published vectors: a later run of migrate-acls names the same policies.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        let long = "t".repeat(300);
        let suffix = format!("… #{:016x}", fnv1a(long.as_bytes()));
        assert!(policy_name("topic", &long).ends_with(&suffix));
    }

    #[test]
    fn the_reports_summary_counts_what_was_left_out_apart_from_what_changed_meaning() {
        // One ACL left out and two narrowed: counts that differ, so neither stands in for the other.
        let acls = [
            allow("orders", "User:alice", Operation::Read),
            acl(
                TOPIC,
                LITERAL,
                "orders",
                "User:bob",
                "client.example.com",
                Operation::Read,
                ALLOW,
            ),
            deny("orders", "User:carol", Operation::Write),
            deny("payments", "User:carol", Operation::Read),
        ];
        let m = migrate(&acls);
        assert!(m.report_text(&acls).starts_with(
            "migrate-acls: 4 ACLs read, 3 migrated into 2 policies, 1 not migrated, 2 migrated with a changed meaning\n"
        ), "{}", m.report_text(&acls));
    }

    #[test]
    fn the_finding_codes_are_those_the_shim_reads() {
        // The codes cross JNI as bare numbers; the shim's constants are read from its source, so a
        // change on either side fails here rather than mislabelling the report in Java.
        let java = include_str!(
            "../../../java-shim/src/main/java/org/devlive/grantforge/kafka/agent/AclMigration.java"
        );
        let constant = |name: &str| -> u8 {
            let declared = format!("static final int {name} = ");
            let at = java.find(&declared).expect("AclMigration.java declares it") + declared.len();
            java[at..].split(';').next().unwrap().parse().unwrap()
        };
        assert_eq!(Finding::NotMigrated.code(), constant("NOT_MIGRATED"));
        assert_eq!(
            Finding::DenyCoversImplied.code(),
            constant("DENY_COVERS_IMPLIED")
        );
        assert_eq!(Finding::GroupMembers.code(), constant("GROUP_MEMBERS"));
    }

    #[test]
    fn no_acls_make_an_empty_snapshot_that_loads() {
        let m = migrate(&[]);
        assert_eq!((m.migrated, m.policies), (0, 0));
        assert_eq!(m.policy_requests_json, "[]");
        assert!(m.report_text(&[]).starts_with("migrate-acls: 0 ACLs read"));
    }
}
