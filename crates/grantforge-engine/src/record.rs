//! The records a snapshot is made of, as the server writes them (`PolicySnapshot`'s definition,
//! `Policy`, `PolicyItem`, `ResourceSpec`, `Condition` and `Validity`): plain data, read by
//! [`Snapshot::parse`](crate::Snapshot::parse) and checked and compiled by the engine.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::error::SnapshotError;
use crate::model::{AccessTypeDefinition, ResourceLevel, ServiceModel};
use crate::time::Instant;
use crate::ANY_VALUE;

#[cfg(test)]
mod tests;

/// Which policies decide first: OVERRIDE policies are asked before NORMAL ones.
///
/// Ordered by precedence: `Normal < Override`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Asked when no OVERRIDE policy decides.
    #[default]
    Normal,
    /// Asked first.
    Override,
}

impl Priority {
    /// The name the snapshot uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Normal => "NORMAL",
            Priority::Override => "OVERRIDE",
        }
    }
}

impl FromStr for Priority {
    type Err = String;

    /// Exact names, as Java's `Priority.valueOf`.
    fn from_str(name: &str) -> Result<Priority, String> {
        match name {
            "NORMAL" => Ok(Priority::Normal),
            "OVERRIDE" => Ok(Priority::Override),
            _ => Err(format!("priority {name} is neither NORMAL nor OVERRIDE")),
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The service type as the snapshot carries it (`definition`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Definition {
    /// The resource levels, in the order given (the server lists them in the type's order, not
    /// necessarily parents first).
    pub resources: Vec<ResourceLevel>,
    /// The access types and what each implies.
    pub access_types: Vec<AccessTypeDefinition>,
    /// The conditions items may use, and the evaluator behind each.
    pub conditions: Vec<ConditionDefinition>,
}

impl Definition {
    /// A definition without conditions.
    pub fn new(
        resources: Vec<ResourceLevel>,
        access_types: Vec<AccessTypeDefinition>,
    ) -> Definition {
        Definition {
            resources,
            access_types,
            conditions: Vec::new(),
        }
    }

    /// The model the engine uses: levels are taken parents first in whatever order they come, as
    /// the Java agent does; a level named twice keeps its first place and its last definition.
    pub fn model(&self) -> Result<ServiceModel, SnapshotError> {
        let mut pending: Vec<&ResourceLevel> = Vec::with_capacity(self.resources.len());
        for level in &self.resources {
            match pending.iter_mut().find(|l| l.name == level.name) {
                Some(slot) => *slot = level,
                None => pending.push(level),
            }
        }
        let mut builder = ServiceModel::builder();
        let mut added: Vec<&str> = Vec::with_capacity(pending.len());
        while !pending.is_empty() {
            let before = pending.len();
            let mut index = 0;
            while index < pending.len() {
                let level = pending[index];
                if level.parent.as_deref().is_none_or(|p| added.contains(&p)) {
                    builder
                        .level(level.clone())
                        .map_err(|m| SnapshotError::new("definition.resources", m))?;
                    added.push(&level.name);
                    pending.remove(index);
                } else {
                    index += 1;
                }
            }
            if pending.len() == before {
                let names: Vec<&str> = pending.iter().map(|l| l.name.as_str()).collect();
                return Err(SnapshotError::new(
                    "definition.resources",
                    format!(
                        "resource levels [{}] have unknown parents",
                        names.join(", ")
                    ),
                ));
            }
        }
        for access in &self.access_types {
            builder
                .access_type_definition(access.clone())
                .map_err(|m| SnapshotError::new("definition.accessTypes", m))?;
        }
        builder.build().map_err(|m| {
            let field = if m.contains(" implies ") {
                "definition.accessTypes"
            } else {
                "definition"
            };
            SnapshotError::new(field, m)
        })
    }
}

/// A condition items may use (`definition.conditions[]`): items name it by `name`; the agent
/// evaluates it with the evaluator it registered as `evaluator`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionDefinition {
    /// The name items use, such as `ip`.
    pub name: String,
    /// The evaluator's name, such as `ip-range`.
    pub evaluator: String,
    /// Options for the evaluator; not read by the Java agent.
    pub options: BTreeMap<String, String>,
}

impl ConditionDefinition {
    /// A condition without options.
    pub fn new(name: &str, evaluator: &str) -> ConditionDefinition {
        ConditionDefinition {
            name: name.to_string(),
            evaluator: evaluator.to_string(),
            options: BTreeMap::new(),
        }
    }
}

/// One ACCESS policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRecord {
    /// The policy's id (a string in the JSON, holding a Java `long`).
    pub id: i64,
    /// The policy's name; not read by the Java agent, empty when absent.
    pub name: String,
    /// Whether it decides before NORMAL policies.
    pub priority: Priority,
    /// The values per level; the levels must form one chain from a root. Iterates in key order
    /// like a `BTreeMap`, but a policy's one to three levels cost one small allocation.
    pub resources: LevelMap,
    /// Who is allowed what...
    pub allow: Vec<Item>,
    /// ...except these.
    pub allow_exceptions: Vec<Item>,
    /// Who is denied what...
    pub deny: Vec<Item>,
    /// ...except these.
    pub deny_exceptions: Vec<Item>,
    /// When the policy applies; always when empty.
    pub validity: Vec<Validity>,
}

impl PolicyRecord {
    /// An empty NORMAL policy; add resources and items with the `with_*` methods.
    pub fn new(id: i64) -> PolicyRecord {
        PolicyRecord {
            id,
            name: String::new(),
            priority: Priority::Normal,
            resources: LevelMap::new(),
            allow: Vec::new(),
            allow_exceptions: Vec::new(),
            deny: Vec::new(),
            deny_exceptions: Vec::new(),
            validity: Vec::new(),
        }
    }

    /// Whether the policy applies at `t`: it has no validity period, or `t` lies in one.
    /// (Snapshots hold enabled policies only, so there is no enabled flag.)
    pub fn applies_at(&self, t: Instant) -> bool {
        self.validity.is_empty() || self.validity.iter().any(|v| v.contains(t))
    }

    /// Every instant at which one of its validity periods starts or ends: where
    /// [`PolicyRecord::applies_at`] may change its answer.
    pub fn validity_boundaries(&self) -> impl Iterator<Item = Instant> + '_ {
        self.validity.iter().flat_map(Validity::boundaries)
    }

    /// Sets the values of a level.
    pub fn with_resource(mut self, level: &str, values: ResourceValues) -> PolicyRecord {
        self.resources.insert(level.to_string(), values);
        self
    }

    /// Sets the name.
    pub fn with_name(mut self, name: &str) -> PolicyRecord {
        self.name = name.to_string();
        self
    }

    /// Sets the priority.
    pub fn with_priority(mut self, priority: Priority) -> PolicyRecord {
        self.priority = priority;
        self
    }

    /// Sets the allow items.
    pub fn with_allow(mut self, items: Vec<Item>) -> PolicyRecord {
        self.allow = items;
        self
    }

    /// Sets the allow exceptions.
    pub fn with_allow_exceptions(mut self, items: Vec<Item>) -> PolicyRecord {
        self.allow_exceptions = items;
        self
    }

    /// Sets the deny items.
    pub fn with_deny(mut self, items: Vec<Item>) -> PolicyRecord {
        self.deny = items;
        self
    }

    /// Sets the deny exceptions.
    pub fn with_deny_exceptions(mut self, items: Vec<Item>) -> PolicyRecord {
        self.deny_exceptions = items;
        self
    }

    /// Adds a validity period.
    pub fn with_validity(mut self, from: Option<Instant>, until: Option<Instant>) -> PolicyRecord {
        self.validity.push(Validity { from, until });
        self
    }
}

/// A policy's values per level: a map sorted by level name with the read API of a `BTreeMap`.
///
/// A `BTreeMap` allocates a node for eleven entries even for one, some 640 bytes; a snapshot of
/// 200,000 policies would spend 120 MiB on them. This keeps the entries in one exact-size vector.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct LevelMap {
    entries: Vec<(String, ResourceValues)>,
}

impl LevelMap {
    /// An empty map.
    pub fn new() -> LevelMap {
        LevelMap {
            entries: Vec::new(),
        }
    }

    fn find(&self, level: &str) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|(name, _)| name.as_str().cmp(level))
    }

    /// Sets the values of a level, returning those it replaces.
    pub fn insert(&mut self, level: String, values: ResourceValues) -> Option<ResourceValues> {
        match self.find(&level) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[at].1, values)),
            Err(at) => {
                self.entries.insert(at, (level, values));
                None
            }
        }
    }

    /// Removes a level, returning its values.
    pub fn remove(&mut self, level: &str) -> Option<ResourceValues> {
        self.find(level).ok().map(|at| self.entries.remove(at).1)
    }

    /// The values of a level.
    pub fn get(&self, level: &str) -> Option<&ResourceValues> {
        self.find(level).ok().map(|at| &self.entries[at].1)
    }

    /// The values of a level, to change them.
    pub fn get_mut(&mut self, level: &str) -> Option<&mut ResourceValues> {
        self.find(level).ok().map(|at| &mut self.entries[at].1)
    }

    /// Whether a level is named.
    pub fn contains_key(&self, level: &str) -> bool {
        self.find(level).is_ok()
    }

    /// How many levels are named.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no level is named.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// (level, values) in level-name order.
    pub fn iter(&self) -> LevelIter<'_> {
        LevelIter {
            inner: self.entries.iter(),
        }
    }

    /// The level names in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + '_ {
        self.entries.iter().map(|(name, _)| name)
    }

    /// The values in level-name order.
    pub fn values(
        &self,
    ) -> impl DoubleEndedIterator<Item = &ResourceValues> + ExactSizeIterator + '_ {
        self.entries.iter().map(|(_, values)| values)
    }

    /// The first entry in level-name order.
    pub fn first_key_value(&self) -> Option<(&String, &ResourceValues)> {
        self.entries.first().map(|(name, values)| (name, values))
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
    }
}

/// Iterates a [`LevelMap`] as `(&String, &ResourceValues)`, like `btree_map::Iter`.
#[derive(Clone, Debug)]
pub struct LevelIter<'a> {
    inner: std::slice::Iter<'a, (String, ResourceValues)>,
}

impl<'a> Iterator for LevelIter<'a> {
    type Item = (&'a String, &'a ResourceValues);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(name, values)| (name, values))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for LevelIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(name, values)| (name, values))
    }
}

impl ExactSizeIterator for LevelIter<'_> {}

impl<'a> IntoIterator for &'a LevelMap {
    type Item = (&'a String, &'a ResourceValues);
    type IntoIter = LevelIter<'a>;

    fn into_iter(self) -> LevelIter<'a> {
        self.iter()
    }
}

impl IntoIterator for LevelMap {
    type Item = (String, ResourceValues);
    type IntoIter = std::vec::IntoIter<(String, ResourceValues)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl FromIterator<(String, ResourceValues)> for LevelMap {
    fn from_iter<I: IntoIterator<Item = (String, ResourceValues)>>(entries: I) -> LevelMap {
        let mut map = LevelMap::new();
        map.extend(entries);
        map
    }
}

impl Extend<(String, ResourceValues)> for LevelMap {
    fn extend<I: IntoIterator<Item = (String, ResourceValues)>>(&mut self, entries: I) {
        for (level, values) in entries {
            self.insert(level, values);
        }
    }
}

impl<const N: usize> From<[(String, ResourceValues); N]> for LevelMap {
    fn from(entries: [(String, ResourceValues); N]) -> LevelMap {
        entries.into_iter().collect()
    }
}

impl From<BTreeMap<String, ResourceValues>> for LevelMap {
    fn from(map: BTreeMap<String, ResourceValues>) -> LevelMap {
        LevelMap {
            entries: map.into_iter().collect(),
        }
    }
}

impl From<LevelMap> for BTreeMap<String, ResourceValues> {
    fn from(map: LevelMap) -> BTreeMap<String, ResourceValues> {
        map.entries.into_iter().collect()
    }
}

impl std::ops::Index<&str> for LevelMap {
    type Output = ResourceValues;

    fn index(&self, level: &str) -> &ResourceValues {
        self.get(level)
            .unwrap_or_else(|| panic!("no values for level {level}"))
    }
}

impl fmt::Debug for LevelMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A policy's values for one level: a resource matches when its value matches one of them, or,
/// with `excludes`, none of them. `*` matches everything; `recursive` (PATH levels only) also
/// covers what lies below a value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceValues {
    /// At least one, none blank.
    pub values: Vec<String>,
    /// Match every value except these.
    pub excludes: bool,
    /// A path value also covers its descendants.
    pub recursive: bool,
}

impl ResourceValues {
    /// Matches any of `values`.
    pub fn of(values: &[&str]) -> ResourceValues {
        ResourceValues::new(values, false, false)
    }

    /// Values with the exclusion and recursion flags.
    pub fn new(values: &[&str], excludes: bool, recursive: bool) -> ResourceValues {
        ResourceValues {
            values: values.iter().map(|v| v.to_string()).collect(),
            excludes,
            recursive,
        }
    }

    /// Whether these values match every value: `*` without exclusion (`ResourceSpec.matchesAnything`).
    pub fn matches_anything(&self) -> bool {
        !self.excludes && self.values.iter().any(|v| v == ANY_VALUE)
    }
}

/// An item: whom (users, groups — `public` is everyone — and roles), which access types, and
/// conditions that must all hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// User names.
    pub users: Vec<String>,
    /// Group codes; `public` names everyone.
    pub groups: Vec<String>,
    /// Role codes.
    pub roles: Vec<String>,
    /// Access types granted (or denied), implications included.
    pub access_types: Vec<String>,
    /// Conditions that must all hold.
    pub conditions: Vec<ConditionRef>,
}

impl Item {
    /// An empty item; at least one subject and one access type must be added.
    pub fn new() -> Item {
        Item::default()
    }

    /// An item for users and access types, the most common shape.
    pub fn users(users: &[&str], access_types: &[&str]) -> Item {
        Item::new()
            .with_users(users)
            .with_access_types(access_types)
    }

    /// Sets the users.
    pub fn with_users(mut self, users: &[&str]) -> Item {
        self.users = strings(users);
        self
    }

    /// Sets the groups.
    pub fn with_groups(mut self, groups: &[&str]) -> Item {
        self.groups = strings(groups);
        self
    }

    /// Sets the roles.
    pub fn with_roles(mut self, roles: &[&str]) -> Item {
        self.roles = strings(roles);
        self
    }

    /// Sets the access types.
    pub fn with_access_types(mut self, access_types: &[&str]) -> Item {
        self.access_types = strings(access_types);
        self
    }

    /// Adds a condition.
    pub fn with_condition(mut self, type_name: &str, values: &[&str]) -> Item {
        self.conditions.push(ConditionRef {
            type_name: type_name.to_string(),
            values: strings(values),
        });
        self
    }
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

/// A condition of an item: the condition's name (`type` in the JSON) and its values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConditionRef {
    /// The name of a condition of the definition (not the evaluator's name).
    pub type_name: String,
    /// Its values; may be empty.
    pub values: Vec<String>,
}

/// A period a policy applies in: from `from` (inclusive) until `until` (exclusive), either end open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Validity {
    /// When it starts; `None` for always.
    pub from: Option<Instant>,
    /// When it ends, exclusive; `None` for never.
    pub until: Option<Instant>,
}

impl Validity {
    /// Whether the period contains `t`.
    pub fn contains(&self, t: Instant) -> bool {
        self.from.is_none_or(|from| t >= from) && self.until.is_none_or(|until| t < until)
    }

    /// Its start and its end, those it has: where [`Validity::contains`] may change its answer.
    pub fn boundaries(&self) -> impl Iterator<Item = Instant> {
        [self.from, self.until].into_iter().flatten()
    }
}

/// The first instant after `now` at which one of `policies` starts or stops applying: the earliest
/// `from` or `until` of their validity periods strictly after `now`; `None` when none lies ahead.
///
/// A boundary at `now` itself has already taken effect (`from` is inclusive, `until` exclusive, so
/// [`PolicyRecord::applies_at`] at `now` already reads it): what was computed for `now` holds until
/// the instant returned here. Instants are compared on the UTC time line, whatever offset the
/// snapshot wrote them with.
pub fn next_validity_change<'a>(
    policies: impl IntoIterator<Item = &'a PolicyRecord>,
    now: Instant,
) -> Option<Instant> {
    policies
        .into_iter()
        .flat_map(PolicyRecord::validity_boundaries)
        .filter(|&boundary| boundary > now)
        .min()
}
