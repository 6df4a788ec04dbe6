//! The policies file and snapshot format 1, serialised the way GrantForge's server writes it.
//!
//! Records keep declaration order, maps (`roles`, `groups`, `options`, `document.resources`) are sorted by key,
//! nulls are written, policies are sorted by id ascending, and nothing time-dependent is included, so the same
//! content always gives the same bytes.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::time::{format_instant, parse_instant};

/// The `kafka` service type definition, from `crates/grantforge-kafka/kafka-service-type.json`.
pub const KAFKA_DEFINITION_JSON: &str =
    include_str!("../../grantforge-kafka/kafka-service-type.json");

/// A service type definition as the snapshot carries it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Definition {
    /// The resource levels.
    pub resources: Vec<Level>,
    /// The access types.
    #[serde(rename = "accessTypes")]
    pub access_types: Vec<Access>,
    /// The conditions.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The mask types.
    #[serde(rename = "maskTypes", default)]
    pub mask_types: Vec<Mask>,
    /// The definition's version (`typeVersion` of the snapshot); not written inside `definition`.
    #[serde(default, skip_serializing)]
    pub version: Option<i64>,
}

/// A resource level.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Level {
    /// Its name.
    pub name: String,
    /// Its parent level, if any.
    #[serde(default)]
    pub parent: Option<String>,
    /// `EXACT`, `WILDCARD`, `PATH` or `REGEX`.
    pub matcher: String,
    /// Whether values compare case-sensitively.
    #[serde(rename = "caseSensitive")]
    pub case_sensitive: bool,
}

/// An access type.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Access {
    /// Its name.
    pub name: String,
    /// The access types it implies, sorted.
    #[serde(rename = "impliedGrants", default)]
    pub implied_grants: Vec<String>,
}

/// A condition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Condition {
    /// Its name (what policy items say in `conditions[].type`).
    pub name: String,
    /// The evaluator the agent maps it to.
    pub evaluator: String,
    /// Evaluator options.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

/// A mask type.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Mask {
    /// Its name.
    pub name: String,
    /// Its transformer.
    #[serde(default)]
    pub transformer: Option<String>,
}

impl Definition {
    /// Parses a definition (the format of `crates/grantforge-kafka/kafka-service-type.json`); implied grants are sorted as the
    /// server sorts them.
    pub fn parse(json: &str) -> Result<Self, String> {
        let mut def: Definition = serde_json::from_str(json)
            .map_err(|e| format!("invalid service type definition: {e}"))?;
        for access in &mut def.access_types {
            access.implied_grants.sort();
        }
        Ok(def)
    }

    /// The embedded `kafka` definition.
    pub fn kafka() -> Result<Self, String> {
        Self::parse(KAFKA_DEFINITION_JSON)
    }
}

/// One policy as the snapshot carries it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Policy {
    /// The id, a long written as a string.
    pub id: String,
    /// The name.
    pub name: String,
    /// `ACCESS`, `DATA_MASK` or `ROW_FILTER`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `NORMAL` or `OVERRIDE`.
    pub priority: String,
    /// The document.
    pub document: Document,
}

/// A policy document.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// Values per level (sorted by level name).
    #[serde(default)]
    pub resources: BTreeMap<String, ResourceValues>,
    /// Allow items.
    #[serde(default)]
    pub allow: Vec<Item>,
    /// Allow exceptions.
    #[serde(default)]
    pub allow_exceptions: Vec<Item>,
    /// Deny items.
    #[serde(default)]
    pub deny: Vec<Item>,
    /// Deny exceptions.
    #[serde(default)]
    pub deny_exceptions: Vec<Item>,
    /// Validity periods.
    #[serde(default)]
    pub validity: Vec<Validity>,
}

/// The values of one level.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ResourceValues {
    /// The values.
    #[serde(default)]
    pub values: Vec<String>,
    /// Whether the values are excluded.
    #[serde(default)]
    pub excludes: bool,
    /// Whether they apply recursively.
    #[serde(default)]
    pub recursive: bool,
}

/// A policy item.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// User names.
    #[serde(default)]
    pub users: Vec<String>,
    /// Group codes.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Role codes.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Access types.
    #[serde(default)]
    pub access_types: Vec<String>,
    /// Conditions.
    #[serde(default)]
    pub conditions: Vec<ConditionValues>,
    /// Mask type (data mask policies).
    #[serde(default)]
    pub mask_type: Option<String>,
    /// Mask value.
    #[serde(default)]
    pub mask_value: Option<String>,
    /// Row filter (row filter policies).
    #[serde(default)]
    pub row_filter: Option<String>,
}

/// The values of one condition of an item.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ConditionValues {
    /// The condition's name.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its values.
    #[serde(default)]
    pub values: Vec<String>,
}

/// A validity period; instants are ISO-8601 strings as `Instant.toString()` prints them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Validity {
    /// Start, inclusive.
    #[serde(default)]
    pub from: Option<String>,
    /// End.
    #[serde(default)]
    pub until: Option<String>,
}

#[derive(Deserialize)]
struct PolicyIn {
    id: Value,
    name: String,
    #[serde(rename = "type", default = "access")]
    kind: String,
    #[serde(default = "normal")]
    priority: String,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    document: Document,
}

fn access() -> String {
    "ACCESS".into()
}

fn normal() -> String {
    "NORMAL".into()
}

#[derive(Deserialize)]
struct PoliciesFileIn {
    #[serde(default)]
    service: Option<String>,
    #[serde(rename = "serviceEnabled", default)]
    service_enabled: Option<bool>,
    policies: Vec<PolicyIn>,
    #[serde(default)]
    roles: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    groups: Option<BTreeMap<String, Vec<String>>>,
}

/// A parsed, normalised policies file: what a snapshot is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySet {
    /// The service name the file names, if any (otherwise the configured one is used).
    pub service: Option<String>,
    /// `serviceEnabled` (default true).
    pub service_enabled: bool,
    /// Enabled policies, ascending id.
    pub policies: Vec<Policy>,
    /// Role code → members, for the roles the policies name (unknown ones map to `[]`).
    pub roles: BTreeMap<String, Vec<String>>,
    /// Group code → members, for the groups the policies name, never `public`.
    pub groups: BTreeMap<String, Vec<String>>,
}

fn normalise_instant(value: &mut Option<String>, what: &str) -> Result<(), String> {
    if let Some(text) = value.as_ref() {
        let parsed = parse_instant(text)
            .ok_or_else(|| format!("{what} {text:?} is not an ISO-8601 instant"))?;
        *value = Some(format_instant(parsed));
    }
    Ok(())
}

fn policy_id(value: &Value) -> Result<i64, String> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| format!("policy id {n} is not a long")),
        Value::String(s) => s
            .parse::<i64>()
            .map_err(|_| format!("policy id {s:?} is not a long")),
        other => Err(format!("policy id {other} is not a long")),
    }
}

impl PolicySet {
    /// An empty set: no policies, service enabled.
    pub fn empty() -> Self {
        Self {
            service: None,
            service_enabled: true,
            policies: Vec::new(),
            roles: BTreeMap::new(),
            groups: BTreeMap::new(),
        }
    }

    /// Parses a policies file: `{"service"?, "serviceEnabled"?, "policies": [...], "roles"?, "groups"?}`.
    ///
    /// Policies have the snapshot format (missing lists become `[]`, missing `type` is `ACCESS`, missing
    /// `priority` is `NORMAL`); a policy with `"enabled": false` is left out, as the server leaves out disabled
    /// policies. Unknown fields are ignored, so a whole snapshot file is a valid policies file.
    pub fn parse(json: &[u8]) -> Result<Self, String> {
        let file: PoliciesFileIn =
            serde_json::from_slice(json).map_err(|e| format!("invalid policies file: {e}"))?;
        let mut seen = BTreeSet::new();
        let mut by_id: BTreeMap<i64, Policy> = BTreeMap::new();
        for p in file.policies {
            let id = policy_id(&p.id)?;
            if !seen.insert(id) {
                return Err(format!("policy id {id} appears twice"));
            }
            if !matches!(p.kind.as_str(), "ACCESS" | "DATA_MASK" | "ROW_FILTER") {
                return Err(format!(
                    "policy {id}: type {:?} is not ACCESS, DATA_MASK or ROW_FILTER",
                    p.kind
                ));
            }
            if !matches!(p.priority.as_str(), "NORMAL" | "OVERRIDE") {
                return Err(format!(
                    "policy {id}: priority {:?} is not NORMAL or OVERRIDE",
                    p.priority
                ));
            }
            let mut document = p.document;
            for period in &mut document.validity {
                normalise_instant(&mut period.from, "validity from")?;
                normalise_instant(&mut period.until, "validity until")?;
            }
            if p.enabled != Some(false) {
                by_id.insert(
                    id,
                    Policy {
                        id: id.to_string(),
                        name: p.name,
                        kind: p.kind,
                        priority: p.priority,
                        document,
                    },
                );
            }
        }
        let policies: Vec<Policy> = by_id.into_values().collect();
        let mut role_codes = BTreeSet::new();
        let mut group_codes = BTreeSet::new();
        for p in &policies {
            let d = &p.document;
            for item in d
                .allow
                .iter()
                .chain(&d.allow_exceptions)
                .chain(&d.deny)
                .chain(&d.deny_exceptions)
            {
                role_codes.extend(item.roles.iter().cloned());
                group_codes.extend(
                    item.groups
                        .iter()
                        .filter(|g| g.as_str() != "public")
                        .cloned(),
                );
            }
        }
        let members = |codes: BTreeSet<String>, given: Option<BTreeMap<String, Vec<String>>>| {
            let given = given.unwrap_or_default();
            codes
                .into_iter()
                .map(|code| {
                    let names: BTreeSet<String> = given
                        .get(&code)
                        .cloned()
                        .unwrap_or_default()
                        .into_iter()
                        .collect();
                    (code, names.into_iter().collect::<Vec<_>>())
                })
                .collect::<BTreeMap<_, _>>()
        };
        Ok(Self {
            service: file.service,
            service_enabled: file.service_enabled.unwrap_or(true),
            policies,
            roles: members(role_codes, file.roles),
            groups: members(group_codes, file.groups),
        })
    }
}

#[derive(Serialize)]
struct SnapshotOut<'a> {
    format: i32,
    service: &'a str,
    #[serde(rename = "serviceType")]
    service_type: &'a str,
    #[serde(rename = "typeVersion")]
    type_version: i64,
    #[serde(rename = "serviceEnabled")]
    service_enabled: bool,
    #[serde(rename = "policyVersion")]
    policy_version: i64,
    definition: &'a Definition,
    policies: &'a [Policy],
    roles: &'a BTreeMap<String, Vec<String>>,
    groups: &'a BTreeMap<String, Vec<String>>,
}

/// Builds the snapshot body (compact JSON, format 1).
pub fn build(
    set: &PolicySet,
    definition: &Definition,
    service: &str,
    service_type: &str,
    policy_version: i64,
) -> Vec<u8> {
    let out = SnapshotOut {
        format: 1,
        service,
        service_type,
        type_version: definition.version.unwrap_or(1),
        service_enabled: set.service_enabled,
        policy_version,
        definition,
        policies: &set.policies,
        roles: &set.roles,
        groups: &set.groups,
    };
    // Serialising plain structs, strings, bools and maps with string keys cannot fail.
    serde_json::to_vec(&out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_order() {
        let set = PolicySet::parse(
            br#"{"policies":[{"id":"7","name":"b","document":{"resources":{"topic":{"values":["x"]},"group":{"values":["g"]}},
                "allow":[{"users":["u"],"roles":["r2","r1"],"groups":["public","ops"],"accessTypes":["read"]}],
                "validity":[{"from":"2026-01-01T01:00:00+01:00"}]}},
              {"id":3,"name":"a","priority":"OVERRIDE"},{"id":"9","name":"off","enabled":false}],
              "roles":{"r1":["zed","amy","amy"],"unused":["x"]},"groups":{"ops":["carol"]},"extra":1}"#,
        )
        .unwrap();
        let def = Definition::kafka().unwrap();
        let body = String::from_utf8(build(&set, &def, "svc", "kafka", 4)).unwrap();
        assert!(body.starts_with(r#"{"format":1,"service":"svc","serviceType":"kafka","typeVersion":1,"serviceEnabled":true,"policyVersion":4,"definition":{"resources":[{"name":"topic","parent":null,"matcher":"WILDCARD","caseSensitive":true}"#), "{body}");
        assert!(body.contains(r#""policies":[{"id":"3","name":"a","type":"ACCESS","priority":"OVERRIDE","document":{"resources":{},"allow":[],"allowExceptions":[],"deny":[],"denyExceptions":[],"validity":[]}},{"id":"7""#), "{body}");
        assert!(body.contains(r#""resources":{"group":{"values":["g"],"excludes":false,"recursive":false},"topic""#), "{body}");
        assert!(
            body.contains(r#""conditions":[],"maskType":null,"maskValue":null,"rowFilter":null"#),
            "{body}"
        );
        assert!(
            body.contains(r#""validity":[{"from":"2026-01-01T00:00:00Z","until":null}]"#),
            "{body}"
        );
        assert!(
            body.ends_with(r#""roles":{"r1":["amy","zed"],"r2":[]},"groups":{"ops":["carol"]}}"#),
            "{body}"
        );
        assert!(!body.contains("off"));
    }

    #[test]
    fn rejects() {
        for bad in [
            r#"{}"#,
            r#"{"policies":[{"id":"x","name":"a"}]}"#,
            r#"{"policies":[{"id":1,"name":"a","type":"OTHER"}]}"#,
            r#"{"policies":[{"id":1,"name":"a"},{"id":"1","name":"b"}]}"#,
            r#"{"policies":[{"id":1,"name":"a","document":{"validity":[{"from":"yesterday"}]}}]}"#,
            r#"{"policies":[{"id":1,"name":"a","document":{"allow":[{"users":"alice"}]}}]}"#,
            r#"{"policies":[]"#,
        ] {
            assert!(PolicySet::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
