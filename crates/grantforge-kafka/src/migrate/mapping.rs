//! One ACL as a piece of a policy: its level and value, permission, host condition, subject and
//! operation, or why no policy expresses it exactly; and the `kafka` service type's implications.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv6Addr};

use grantforge_engine::{ServiceModel, Snapshot, FORMAT};

use super::KafkaAcl;
use crate::policies::{LoadError, KAFKA_DEFINITION_JSON, SERVICE_TYPE};
use crate::vocabulary::{Operation, PatternType, Permission, ResourceType};

/// Who a policy item names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Subject {
    User(String),
    Group(String),
    /// `User:*`: GrantForge's public group.
    Everyone,
}

/// The items of one policy: per (permission, host condition), per subject, the operations.
pub(super) type Items =
    BTreeMap<(Permission, Option<String>), BTreeMap<Subject, BTreeSet<Operation>>>;

/// The policies of a migration: per level and value, the items.
pub(super) type Policies = BTreeMap<(&'static str, String), Items>;

/// One ACL as a piece of a policy.
pub(super) struct Mapped {
    pub(super) level: &'static str,
    pub(super) value: String,
    pub(super) permission: Permission,
    pub(super) host: Option<String>,
    pub(super) subject: Subject,
    pub(super) operation: Operation,
}

/// The piece of a policy that decides exactly what `acl` decides (or says so in the report), or
/// why there is none.
pub(super) fn map_acl(acl: &KafkaAcl, model: &ServiceModel) -> Result<Mapped, String> {
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
        operation: operation_on_level(resource_type, operation, permission, model)?,
    })
}

/// The operation a policy of the level names for the ACL. Kafka's Admin API stores ACLs of
/// operations a broker never asks of the resource type (only `kafka-acls` checks), and GrantForge
/// refuses a policy naming them on the level (`access-type-unknown`). Such an ACL decides only
/// through what its operation implies that Kafka does ask: an ALLOW WRITE on the cluster allows
/// DESCRIBE of it, so the policy names `describe`, which decides exactly the same. A DENY (which
/// in Kafka denies its operation only) and an ALLOW implying nothing asked decide nothing.
fn operation_on_level(
    resource_type: ResourceType,
    operation: Operation,
    permission: Permission,
    model: &ServiceModel,
) -> Result<Operation, String> {
    let accepted = resource_type.access_types();
    if accepted.contains(&operation) {
        return Ok(operation);
    }
    let never_asked = format!(
        "Kafka never asks {} of a {} and GrantForge refuses `{}` on level `{}`",
        operation.kafka_name(),
        resource_type.kafka_name(),
        operation.access_type(),
        resource_type.level()
    );
    if permission == Permission::Deny {
        return Err(format!("{never_asked}: this DENY decided nothing"));
    }
    let asked: Vec<Operation> = implied_operations(model, operation)
        .into_iter()
        .filter(|o| accepted.contains(o))
        .collect();
    match asked.as_slice() {
        [one] => Ok(*one),
        _ => Err(format!(
            "{never_asked}, and it implies nothing Kafka asks of a {}",
            resource_type.kafka_name()
        )),
    }
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

/// The `kafka` service type's model, for its implications.
pub(super) fn kafka_model() -> Result<ServiceModel, LoadError> {
    let empty = format!(
        r#"{{"format":{FORMAT},"service":"kafka","serviceType":"{SERVICE_TYPE}","serviceEnabled":true,"policyVersion":1,"definition":{KAFKA_DEFINITION_JSON},"policies":[]}}"#
    );
    let snapshot = Snapshot::parse(empty.as_bytes()).map_err(LoadError::Snapshot)?;
    snapshot.definition.model().map_err(LoadError::Snapshot)
}

/// `operation` and every operation it implies in the `kafka` service type (an allow of it allows
/// them, a deny of it denies them), in code order.
pub(super) fn implied_operations(model: &ServiceModel, operation: Operation) -> Vec<Operation> {
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
